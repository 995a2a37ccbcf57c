// Which role may call which service, and the errors that name the token, its role and the method.
#include "server/auth/role.h"

#include <gtest/gtest.h>

#include "server/auth/caller.h"

namespace nmsparse::server {
namespace {

constexpr char kSubmit[] = "/nmsparse.v1.Coordinator/SubmitSweep";
constexpr char kHeartbeat[] = "/nmsparse.v1.WorkerGateway/Heartbeat";

TEST(RoleTest, WorkersCallTheGatewayOnly) {
  EXPECT_TRUE(CheckMayCall(Role::kWorker, kHeartbeat, "w").ok());
  absl::Status s = CheckMayCall(Role::kWorker, kSubmit, "node-7");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(),
            "token 'node-7' has role worker, which may not call /nmsparse.v1.Coordinator/SubmitSweep (roles "
            "allowed: user, admin)");
}

TEST(RoleTest, UsersCallTheCoordinatorOnly) {
  EXPECT_TRUE(CheckMayCall(Role::kUser, kSubmit, "alice").ok());
  absl::Status s = CheckMayCall(Role::kUser, kHeartbeat, "alice");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("roles allowed: worker, admin"), std::string::npos) << s;
}

TEST(RoleTest, AdminsCallEverythingAndOtherServicesAreAdminOnly) {
  EXPECT_TRUE(CheckMayCall(Role::kAdmin, kSubmit, "root").ok());
  EXPECT_TRUE(CheckMayCall(Role::kAdmin, kHeartbeat, "root").ok());
  EXPECT_TRUE(CheckMayCall(Role::kAdmin, "/grpc.health.v1.Health/Check", "root").ok());
  EXPECT_FALSE(CheckMayCall(Role::kUser, "/grpc.health.v1.Health/Check", "alice").ok());
  EXPECT_FALSE(CheckMayCall(Role::kUser, "/nmsparse.v1.CoordinatorX/SubmitSweep", "alice").ok());
}

TEST(RoleTest, ParsesTheThreeRolesOnly) {
  EXPECT_EQ(*ParseRole("worker"), Role::kWorker);
  EXPECT_EQ(*ParseRole("user"), Role::kUser);
  EXPECT_EQ(*ParseRole("admin"), Role::kAdmin);
  absl::StatusOr<Role> bad = ParseRole("root");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "role: 'root' is not a role; use worker, user or admin");
}

TEST(RoleTest, UsersCancelTheirOwnSweepsAdminsAny) {
  EXPECT_TRUE(CheckMayCancel(Caller{"alice", Role::kUser}, "alice", "sweep 1").ok());
  EXPECT_TRUE(CheckMayCancel(Caller{"root", Role::kAdmin}, "alice", "sweep 1").ok());
  absl::Status s = CheckMayCancel(Caller{"bob", Role::kUser}, "alice", "sweep 1");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("'bob' may not cancel sweep 1, submitted by 'alice'"), std::string::npos) << s;
}

}  // namespace
}  // namespace nmsparse::server
