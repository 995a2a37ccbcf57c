// Token files are refused unless private, like ssh's keys; flags and the environment pick token and TLS.
#include "common/client_security.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace nmsparse {
namespace {

std::string TokenFile(const std::string& name, const std::string& text, mode_t mode) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/" + name + "-" + std::to_string(getpid());
  unlink(path.c_str());
  std::ofstream(path) << text;
  chmod(path.c_str(), mode);
  return path;
}

TEST(ClientSecurityTest, ReadsAPrivateTokenFile) {
  const std::string path = TokenFile("private", "nmt_abc\n", 0600);
  EXPECT_EQ(*ReadTokenFile(path), "nmt_abc");
  chmod(path.c_str(), 0400);
  EXPECT_EQ(*ReadTokenFile(path), "nmt_abc");
}

TEST(ClientSecurityTest, RefusesATokenFileOthersCanRead) {
  const std::string path = TokenFile("shared", "nmt_abc\n", 0644);
  absl::StatusOr<std::string> token = ReadTokenFile(path);
  ASSERT_FALSE(token.ok());
  EXPECT_EQ(token.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(token.status().message(),
            path + ": mode 0644 lets other users read or change this token; run chmod 600 " + path);
  chmod(path.c_str(), 0640);
  EXPECT_FALSE(ReadTokenFile(path).ok());
}

TEST(ClientSecurityTest, RefusesMissingAndEmptyFiles) {
  EXPECT_EQ(ReadTokenFile("/nonexistent/token").status().code(), absl::StatusCode::kNotFound);
  const std::string empty = TokenFile("empty", " \n", 0600);
  EXPECT_EQ(ReadTokenFile(empty).status().message(), empty + ": empty token file");
}

TEST(ClientSecurityTest, FlagBeforeEnvironment) {
  const std::string flag_file = TokenFile("flag", "from-flag", 0600);
  const std::string env_file = TokenFile("env", "from-env-file", 0600);
  setenv("NMSPARSE_TOKEN_FILE", env_file.c_str(), 1);
  setenv("NMSPARSE_TOKEN", "from-env", 1);
  ClientSecurityFlags flags;
  flags.token_file = flag_file;
  EXPECT_EQ(ResolveClientSecurity(flags)->token, "from-flag");
  EXPECT_EQ(ResolveClientSecurity(ClientSecurityFlags{})->token, "from-env-file");
  unsetenv("NMSPARSE_TOKEN_FILE");
  EXPECT_EQ(ResolveClientSecurity(ClientSecurityFlags{})->token, "from-env");
  unsetenv("NMSPARSE_TOKEN");
  EXPECT_EQ(ResolveClientSecurity(ClientSecurityFlags{})->token, "");
}

TEST(ClientSecurityTest, ErrorsNameTheirSource) {
  setenv("NMSPARSE_TOKEN_FILE", "/nonexistent/t", 1);
  absl::StatusOr<ClientSecurity> s = ResolveClientSecurity(ClientSecurityFlags{});
  unsetenv("NMSPARSE_TOKEN_FILE");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(), "$NMSPARSE_TOKEN_FILE: /nonexistent/t: no such token file");
  ClientSecurityFlags tls;
  tls.tls_ca = "/nonexistent/ca.pem";
  EXPECT_EQ(ResolveClientSecurity(tls).status().message(), "--tls-ca: cannot read /nonexistent/ca.pem");
  ClientSecurityFlags half;
  half.tls_cert = "c.pem";
  EXPECT_FALSE(ResolveClientSecurity(half).ok());
}

// A CA file that is not PEM is refused naming the flag and the file, before any dialing (issue 27: gRPC took
// it and said "empty address list").
TEST(ClientSecurityTest, RefusesANonPemCaNamingTheFile) {
  const std::string ca = TokenFile("ca", "this is not a certificate\n", 0644);
  ClientSecurityFlags flags;
  flags.tls_ca = ca;
  absl::StatusOr<ClientSecurity> security = ResolveClientSecurity(flags);
  ASSERT_FALSE(security.ok());
  EXPECT_EQ(security.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(security.status().message(),
            "--tls-ca: " + ca + " is not a PEM file (no -----BEGIN ...----- block)");
}

}  // namespace
}  // namespace nmsparse
