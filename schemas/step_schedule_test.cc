#include "schemas/step_schedule.h"

#include <cmath>

#include "gtest/gtest.h"

namespace nmsparse {
namespace {

StepSchedule Parse(const std::string& text) {
  auto s = ParseStepSchedule(YAML::Load(text), "sparsity.sparsity");
  EXPECT_TRUE(s.ok()) << text << ": " << s.status();
  return s.ok() ? *s : StepSchedule();
}

std::string ErrorOf(const std::string& text) {
  auto s = ParseStepSchedule(YAML::Load(text), "sparsity.sparsity");
  EXPECT_FALSE(s.ok()) << text;
  return std::string(s.status().message());
}

TEST(StepScheduleTest, ConstantFromNumberOrMap) {
  EXPECT_DOUBLE_EQ(ScheduleValue(Parse("0.9"), 0), 0.9);
  EXPECT_DOUBLE_EQ(ScheduleValue(Parse("0.9"), 123456), 0.9);
  EXPECT_DOUBLE_EQ(ScheduleValue(Parse("{type: constant, value: 0.25}"), 7), 0.25);
  EXPECT_DOUBLE_EQ(ScheduleValue(Parse("{value: 0.25}"), 7), 0.25);
}

TEST(StepScheduleTest, LinearValuesAtChosenSteps) {
  const StepSchedule s =
      Parse("{type: LINEAR, start_value: 0.1, end_value: 0.9, start_step: 100, end_step: 500}");
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 0), 0.1);
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 100), 0.1);
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 200), 0.3);
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 300), 0.5);
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 500), 0.9);
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 10000), 0.9);
}

TEST(StepScheduleTest, CosineDecayLikeRigl) {
  const StepSchedule s = Parse("{type: cosine, start_value: 0.3, end_value: 0, end_step: 1000}");
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 0), 0.3);
  EXPECT_NEAR(ScheduleValue(s, 500), 0.15, 1e-12);
  EXPECT_NEAR(ScheduleValue(s, 250), 0.15 * (1 + std::cos(M_PI / 4)), 1e-12);
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 1000), 0.0);
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 2000), 0.0);
}

TEST(StepScheduleTest, PowerIsCubicByDefault) {
  const StepSchedule s = Parse("{type: power, start_value: 0, end_value: 0.8, start_step: 0, end_step: 100}");
  EXPECT_DOUBLE_EQ(s.exponent, 3.0);
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 0), 0.0);
  EXPECT_NEAR(ScheduleValue(s, 50), 0.8 * (1 - 0.125), 1e-12);  // 0.8 + (0 - 0.8) * 0.5^3.
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 100), 0.8);
  const StepSchedule square =
      Parse("{type: power, start_value: 1, end_value: 0, start_step: 0, end_step: 10, exponent: 2}");
  EXPECT_NEAR(ScheduleValue(square, 5), 0.25, 1e-12);
}

TEST(StepScheduleTest, ExpDecaysPerStepAndStopsAtEndStep) {
  const StepSchedule s = Parse("{type: exp, start_value: 0.5, decay: 0.5, start_step: 10, end_step: 12}");
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 0), 0.5);
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 10), 0.5);
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 11), 0.25);
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 12), 0.125);
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 50), 0.125);
}

TEST(StepScheduleTest, ValuesAreClampedToUnitInterval) {
  const StepSchedule grow = Parse("{type: exp, start_value: 0.5, decay: 2}");
  EXPECT_DOUBLE_EQ(ScheduleValue(grow, 1), 1.0);
  EXPECT_DOUBLE_EQ(ScheduleValue(grow, 100), 1.0);
  StepSchedule negative;
  negative.value = -0.5;  // Built in memory, not parsed.
  EXPECT_DOUBLE_EQ(ScheduleValue(negative, 0), 0.0);
}

TEST(StepScheduleTest, CycleTakesSchedulesInTurn) {
  const StepSchedule s = Parse(R"({type: cycle, start_step: 100, cycle: [
      {type: linear, start_value: 0.5, end_value: 0.9, start_step: 0, end_step: 4},
      {type: constant, value: 0.2, start_step: 0, end_step: 2}]})");
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 0), 0.5);  // Before the cycle starts: its first schedule's start.
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 100), 0.5);
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 102), 0.7);
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 104), 0.2);
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 105), 0.2);
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 106), 0.5);  // Period 6.
  EXPECT_DOUBLE_EQ(ScheduleValue(s, 109), 0.8);
}

TEST(StepScheduleTest, CanonicalYamlParsesBackEqual) {
  for (const std::string text :
       {"0.9", "{type: cosine, start_value: 0.3, end_value: 0, end_step: 1000}",
        "{type: power, start_value: 0, end_value: 0.9, start_step: 5, end_step: 100, exponent: 2}",
        "{type: exp, start_value: 0.4, decay: 0.99}"}) {
    const StepSchedule s = Parse(text);
    YAML::Emitter out;
    out << StepScheduleToYaml(s);
    EXPECT_EQ(Parse(out.c_str()), s) << out.c_str();
  }
  const StepSchedule cycle = Parse(
      "{type: cycle, cycle: [{type: linear, start_value: 0.5, end_value: 0.9, end_step: 4}, "
      "{value: 0.3, end_step: 2}]}");
  YAML::Emitter out;
  out << StepScheduleToYaml(cycle);
  EXPECT_EQ(Parse(out.c_str()), cycle) << out.c_str();
}

TEST(StepScheduleTest, ErrorsNameKeyValueRangeAndLine) {
  EXPECT_EQ(ErrorOf("1.5"), "line 1: sparsity.sparsity: value 1.5 is out of range: must be in [0, 1]");
  EXPECT_NE(ErrorOf("{type: linear, start_value: 0, end_value: 0.9, end_step: 0}")
                .find("sparsity.sparsity.end_step: value 0 is out of range: must be > start_step (0)"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{type: triangle}").find("sparsity.sparsity.type: value 'triangle' is not one of"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{type: linear, start_value: 0, end_value: 1, end_step: 9, decay: 0.5}")
                .find("sparsity.sparsity.decay: does not apply to type LINEAR"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{type: exp, start_value: 0.3}").find("decay: value 0 is out of range"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{type: cycle, cycle: [0.3]}").find("cycle[0].end_step"), std::string::npos);
  EXPECT_NE(ErrorOf("{type: linear, slope: 2}").find("sparsity.sparsity.slope: unknown key"),
            std::string::npos);
  const auto wrong = ParseStepSchedule(YAML::Load("a:\n  b:\n    value: 3\n")["a"]["b"], "s");
  EXPECT_EQ(std::string(wrong.status().message()),
            "line 3: s.value: value 3 is out of range: must be in [0, 1]");
}

}  // namespace
}  // namespace nmsparse
