// --json: ids and other 64-bit integers are numbers, fields keep their .proto order, maps are sorted.
#include "common/proto_json.h"

#include "gtest/gtest.h"
#include "nmsparse/v1/coordinator.pb.h"

namespace nmsparse {
namespace {

TEST(ProtoJsonTest, IdsAreNumbersAndFieldsKeepTheirOrder) {
  v1::Run run;
  run.set_id(16);
  run.set_sweep_id(5);
  run.set_state(v1::SUCCEEDED);
  run.set_created_at_ms(1700000000123);
  (*run.mutable_labels())["seed"] = "2";
  (*run.mutable_labels())["recipe"] = "srste";
  (*run.mutable_final_metrics())["top1"] = 0.5;
  const Json json = ToJson(run);
  EXPECT_TRUE(json["id"].is_number_integer());
  EXPECT_EQ(json["id"], 16);
  EXPECT_EQ(json["sweep_id"], 5);
  EXPECT_EQ(json["created_at_ms"], 1700000000123);
  EXPECT_EQ(json["state"], "SUCCEEDED");
  EXPECT_EQ(json.begin().key(), "id");
  EXPECT_EQ(json["labels"].begin().key(), "recipe");
  EXPECT_EQ(json["final_metrics"]["top1"], 0.5);
  const std::string text = ToJsonText(json, /*pretty=*/false);
  EXPECT_NE(text.find("\"id\":16,"), std::string::npos) << text;
  EXPECT_EQ(text.find("\"16\""), std::string::npos) << text;
}

TEST(ProtoJsonTest, RepeatedMessagesAndUnsetMessages) {
  v1::ListRunsResponse list;
  list.add_runs()->set_id(1);
  list.add_runs()->set_id(2);
  const Json json = ToJson(list);
  ASSERT_TRUE(json["runs"].is_array());
  EXPECT_EQ(json["runs"][1]["id"], 2);
  EXPECT_FALSE(json["runs"][0].contains("spec"));  // An unset message field is left out.
}

// Issue 22: --json is valid JSON that reads the same, and as safe on a terminal as a table.
TEST(ProtoJsonTest, HostileStringsAreEscapedNotDropped) {
  v1::Sweep sweep;
  sweep.set_name("a\x1b[2J\n\u202e\u0085\x7f\xff\"");
  const std::string text = ToJsonText(ToJson(sweep), /*pretty=*/false);
  const std::string expected = std::string(R"("a\u001b[2J\n\u202e\u0085\u007f)") + "\uFFFD" + R"(\"")";
  EXPECT_NE(text.find(expected), std::string::npos) << text;
  const Json back = Json::parse(text);
  EXPECT_EQ(back["name"], "a\x1b[2J\n\u202e\u0085\x7f\uFFFD\"");
}

}  // namespace
}  // namespace nmsparse
