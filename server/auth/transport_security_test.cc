// The safe defaults: which address, tokens and TLS flags give which transport, and what is refused.
#include "server/auth/transport_security.h"

#include <gtest/gtest.h>

namespace nmsparse::server {
namespace {

using Kind = TransportPlan::Kind;

TransportSecurityOptions Listen(const std::string& listen) {
  TransportSecurityOptions o;
  o.listen = listen;
  return o;
}

TransportSecurityOptions WithTls(TransportSecurityOptions o) {
  o.tls_cert_file = "server.pem";
  o.tls_key_file = "server.key";
  return o;
}

TEST(TransportSecurityTest, LoopbackHosts) {
  EXPECT_TRUE(IsLoopbackListen("127.0.0.1:50151"));
  EXPECT_TRUE(IsLoopbackListen("127.1.2.3:0"));
  EXPECT_TRUE(IsLoopbackListen("localhost:50151"));
  EXPECT_TRUE(IsLoopbackListen("[::1]:50151"));
  EXPECT_FALSE(IsLoopbackListen("0.0.0.0:50151"));
  EXPECT_FALSE(IsLoopbackListen("[::]:50151"));
  EXPECT_FALSE(IsLoopbackListen("gpu-01:50151"));
  EXPECT_FALSE(IsLoopbackListen("10.0.0.5:50151"));
}

// Issue 22: a string-prefix test let a name that starts like a loopback address through.
TEST(TransportSecurityTest, OnlyLoopbackAddressLiteralsAndLocalhostAreLoopback) {
  EXPECT_FALSE(IsLoopbackListen("127.0.0.1.example.invalid:50199"));
  EXPECT_FALSE(IsLoopbackListen("127.evil.example:50151"));
  EXPECT_FALSE(IsLoopbackListen("localhost.example.invalid:50151"));
  EXPECT_FALSE(IsLoopbackListen("[::1.example.invalid]:50151"));
  EXPECT_FALSE(IsLoopbackListen("128.0.0.1:50151"));
  EXPECT_FALSE(IsLoopbackListen("[::ffff:10.0.0.1]:50151"));
  EXPECT_FALSE(IsLoopbackListen(":50151"));
  EXPECT_TRUE(IsLoopbackListen("127.255.255.254:50151"));
  EXPECT_TRUE(IsLoopbackListen("[0:0:0:0:0:0:0:1]:50151"));
  EXPECT_EQ(PlanTransport(Listen("127.0.0.1.example.invalid:50199"), false).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(TransportSecurityTest, LoopbackWithoutTokensIsServedAsBefore) {
  TransportPlan plan = *PlanTransport(Listen("127.0.0.1:50151"), false);
  EXPECT_EQ(plan.kind, Kind::kInsecure);
  EXPECT_FALSE(plan.authenticate);
  EXPECT_TRUE(plan.warning.empty());
}

TEST(TransportSecurityTest, LoopbackWithTokensUsesLocalCredentials) {
  TransportPlan plan = *PlanTransport(Listen("localhost:50151"), true);
  EXPECT_EQ(plan.kind, Kind::kLocal);
  EXPECT_TRUE(plan.authenticate);
}

TEST(TransportSecurityTest, NetworkWithoutAuthenticationIsRefused) {
  absl::StatusOr<TransportPlan> plan = PlanTransport(Listen("0.0.0.0:50151"), false);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(plan.status().message().find("refusing to serve 0.0.0.0:50151 without authentication"),
            std::string::npos);
  EXPECT_NE(plan.status().message().find("--insecure"), std::string::npos);
  // TLS alone is encryption, not authentication.
  EXPECT_FALSE(PlanTransport(WithTls(Listen("0.0.0.0:50151")), false).ok());
}

TEST(TransportSecurityTest, InsecureServesTheNetworkWithAWarning) {
  TransportSecurityOptions o = Listen("0.0.0.0:50151");
  o.insecure = true;
  TransportPlan plan = *PlanTransport(o, false);
  EXPECT_EQ(plan.kind, Kind::kInsecure);
  EXPECT_FALSE(plan.authenticate);
  EXPECT_NE(plan.warning.find("WITHOUT AUTHENTICATION"), std::string::npos);
  TransportPlan with_tokens = *PlanTransport(o, true);
  EXPECT_FALSE(with_tokens.authenticate);
  EXPECT_NE(with_tokens.warning.find("NOT checked"), std::string::npos);
}

TEST(TransportSecurityTest, TokensOverTheNetworkNeedTls) {
  absl::StatusOr<TransportPlan> plain = PlanTransport(Listen("0.0.0.0:50151"), true);
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.status().message().find("clear text"), std::string::npos);
  TransportPlan tls = *PlanTransport(WithTls(Listen("0.0.0.0:50151")), true);
  EXPECT_EQ(tls.kind, Kind::kTls);
  EXPECT_TRUE(tls.authenticate);
  EXPECT_TRUE(tls.warning.empty());
}

TEST(TransportSecurityTest, InconsistentTlsFlagsAreUsageErrors) {
  TransportSecurityOptions cert_only = Listen("127.0.0.1:1");
  cert_only.tls_cert_file = "server.pem";
  EXPECT_EQ(PlanTransport(cert_only, true).status().code(), absl::StatusCode::kInvalidArgument);
  TransportSecurityOptions ca_only = Listen("127.0.0.1:1");
  ca_only.tls_client_ca_file = "ca.pem";
  EXPECT_EQ(PlanTransport(ca_only, true).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TransportSecurityTest, UnreadableCertificateNamesFileAndFlag) {
  TransportSecurityOptions o = WithTls(Listen("127.0.0.1:0"));
  o.tls_cert_file = "/nonexistent/server.pem";
  TransportPlan plan = *PlanTransport(o, true);
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> creds = BuildServerCredentials(plan, o, nullptr);
  ASSERT_FALSE(creds.ok());
  EXPECT_EQ(creds.status().message(), "--tls_cert: cannot read /nonexistent/server.pem");
}

}  // namespace
}  // namespace nmsparse::server
