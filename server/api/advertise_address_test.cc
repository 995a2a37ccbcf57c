#include "server/api/advertise_address.h"

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

std::string Canonical(const std::string& addr) {
  absl::StatusOr<std::string> c = CanonicalAdvertiseAddress(addr);
  return c.ok() ? *c : "error: " + std::string(c.status().message());
}

TEST(AdvertiseAddressTest, AcceptsAddressesAndHostNamesInOneForm) {
  EXPECT_EQ(Canonical("10.0.0.11"), "10.0.0.11");
  EXPECT_EQ(Canonical("127.0.0.2"), "127.0.0.2");  // Test nodes on one machine.
  EXPECT_EQ(Canonical("FD00:0:0::5"), "fd00::5");
  EXPECT_EQ(Canonical("::ffff:10.1.2.3"), "10.1.2.3");
  EXPECT_EQ(Canonical("::1"), "::1");
  EXPECT_EQ(Canonical("Node-17.Cluster.example"), "node-17.cluster.example");
}

TEST(AdvertiseAddressTest, RefusesWhatNamesNoOneHostNamingKeyAndValue) {
  EXPECT_EQ(Canonical("0.0.0.0"),
            "error: advertise_addr: '0.0.0.0' is the wildcard address; give the address other nodes reach "
            "this worker at");
  for (const char* bad :
       {"::", "::ffff:0.0.0.0", "224.0.0.1", "ff02::1", "255.255.255.255", "localhost", "LOCALHOST",
        "a.localhost", "", "-node", "node_1", "10.0.0.11:29500", "a..b", "host name"}) {
    const std::string c = Canonical(bad);
    EXPECT_EQ(c.rfind("error: advertise_addr: '", 0), 0u) << bad << " gave " << c;
  }
}

TEST(AdvertiseAddressTest, ShowsAHostileValueAsVisibleText) {
  const std::string c = Canonical("a\x1b[2Jb");
  EXPECT_EQ(c.find('\x1b'), std::string::npos) << c;
}

}  // namespace
}  // namespace nmsparse
