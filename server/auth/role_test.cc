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
  const SweepOwner alice{"alice", "a1"};
  EXPECT_TRUE(CheckMayCancel(Caller{"alice", Role::kUser, "a1"}, alice, "sweep 1").ok());
  EXPECT_TRUE(CheckMayCancel(Caller{"root", Role::kAdmin, "r1"}, alice, "sweep 1").ok());
  absl::Status s = CheckMayCancel(Caller{"bob", Role::kUser, "b1"}, alice, "sweep 1");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("'bob' may not cancel sweep 1, submitted by 'alice'"), std::string::npos) << s;
}

// Probe of issue 36: a revoked name re-added for someone else could cancel the old holder's sweeps, since
// ownership was by name. It is by token now: the same name with another token is another owner.
TEST(RoleTest, OwnershipIsByTokenNotByName) {
  const SweepOwner old_alice{"alice", "a1"};
  absl::Status s = CheckMayCancel(Caller{"alice", Role::kUser, "a2"}, old_alice, "sweep 1");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("submitted by an earlier holder of the name 'alice' (another token)"),
            std::string::npos)
      << s;
  // A sweep whose submitter's token was gone when ownership moved to tokens: admins only.
  EXPECT_EQ(CheckMayCancel(Caller{"alice", Role::kUser, "a2"}, SweepOwner{"alice", ""}, "sweep 1").code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(CheckMayCancel(Caller{"", Role::kUser, ""}, SweepOwner{"", ""}, "sweep 1").code(),
            absl::StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace nmsparse::server
