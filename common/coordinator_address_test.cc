#include "common/coordinator_address.h"

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

// `--coordinator localhost` once went to port 443 silently (gRPC's default); a bare host gets 50151.
TEST(CoordinatorAddress, HostsWithoutAPortGetTheDefaultPort) {
  EXPECT_EQ(WithDefaultPort("localhost"), "localhost:50151");
  EXPECT_EQ(WithDefaultPort("10.0.0.5"), "10.0.0.5:50151");
  EXPECT_EQ(WithDefaultPort("gpu-01.cluster"), "gpu-01.cluster:50151");
  EXPECT_EQ(WithDefaultPort("[::1]"), "[::1]:50151");
  EXPECT_EQ(DefaultCoordinatorAddress(), "127.0.0.1:50151");
}

TEST(CoordinatorAddress, AddressesWithAPortOrSchemeAreKept) {
  for (const char* address : {"localhost:7000", "[::1]:7000", "0.0.0.0:0", "unix:/run/nmsparse.sock",
                              "dns:///coordinator:50151", ""}) {
    EXPECT_EQ(WithDefaultPort(address), address);
  }
}

}  // namespace
}  // namespace nmsparse
