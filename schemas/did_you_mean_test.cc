#include "schemas/did_you_mean.h"

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

TEST(DidYouMeanTest, SuggestsTheClosestKnownWordForATypo) {
  const std::vector<std::string> keys = {"epochs", "warmup_epochs", "min_lr", "warmup_lr"};
  EXPECT_EQ(ClosestWord("warmup_epoch", keys), "warmup_epochs");  // A letter missing.
  EXPECT_EQ(ClosestWord("epcohs", keys), "epochs");               // Two letters swapped.
  EXPECT_EQ(ClosestWord("Min_LR", keys), "min_lr");               // Case.
  EXPECT_EQ(DidYouMean("warmup_epoch", keys), " (did you mean 'warmup_epochs'?)");
}

TEST(DidYouMeanTest, SaysNothingWhenNothingIsClose) {
  EXPECT_EQ(ClosestWord("learning_rate", {"epochs", "min_lr"}), "");
  EXPECT_EQ(DidYouMean("zz", {"ab"}), "");
  EXPECT_EQ(ClosestWord("", {"a"}), "");
}

TEST(DidYouMeanTest, ModelNames) {
  const std::vector<std::string> models = {"vit_micro_patch4_28", "vit_nano_patch7_28",
                                           "vit_tiny_patch16_224"};
  EXPECT_EQ(ClosestWord("vit_micro_patch4_29", models), "vit_micro_patch4_28");
  EXPECT_EQ(ClosestWord("vit_tiny_patch16_244", models), "vit_tiny_patch16_224");
}

}  // namespace
}  // namespace nmsparse
