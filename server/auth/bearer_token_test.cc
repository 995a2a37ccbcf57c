// Issue 22: "Authorization: bearer TOKEN" is the same header as "Bearer TOKEN".
#include "server/auth/bearer_token.h"

#include <gtest/gtest.h>

namespace nmsparse::server {
namespace {

TEST(BearerTokenTest, SchemeInAnyCase) {
  EXPECT_EQ(BearerToken("Bearer nmt_1"), "nmt_1");
  EXPECT_EQ(BearerToken("bearer nmt_1"), "nmt_1");
  EXPECT_EQ(BearerToken("BEARER   nmt_1"), "nmt_1");
}

TEST(BearerTokenTest, OtherSchemesAndEmptyTokens) {
  EXPECT_FALSE(BearerToken(""));
  EXPECT_FALSE(BearerToken("Bearer"));
  EXPECT_FALSE(BearerToken("Bearer "));
  EXPECT_FALSE(BearerToken("Bearernmt_1"));
  EXPECT_FALSE(BearerToken("Basic dXNlcjpwYXNz"));
  EXPECT_FALSE(BearerToken("nmt_1"));
}

}  // namespace
}  // namespace nmsparse::server
