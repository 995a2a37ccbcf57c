// Issue 22: CSV and JSON exports of hostile labels. A spreadsheet finds no formula, a newline does not end a
// row, no display control reaches a terminal, and JSON stays valid and says the same strings.
#include "server/api/export.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "nlohmann/json.hpp"

namespace nmsparse::server {
namespace {

TEST(CsvFieldTest, NeutralisesFormulas) {
  EXPECT_EQ(CsvField("=HYPERLINK(\"http://x\",\"y\")"), "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
  EXPECT_EQ(CsvField("+1+cmd|' /C calc'!A0"), "'+1+cmd|' /C calc'!A0");
  EXPECT_EQ(CsvField("-2+3"), "'-2+3");
  EXPECT_EQ(CsvField("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(CsvField("\t=1"), "\\x09=1");  // Tabs and CRs are shown, never written.
  EXPECT_EQ(CsvField("\r=1"), "\\x0d=1");
  EXPECT_EQ(CsvField("-0.5"), "-0.5");  // Numbers stay numbers.
  EXPECT_EQ(CsvField("+1e-3"), "+1e-3");
  EXPECT_EQ(CsvField("srste_2_4"), "srste_2_4");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
}

TEST(CsvFieldTest, OneLineOfVisibleText) {
  EXPECT_EQ(CsvField("two\nlines"), "two\\x0alines");
  EXPECT_EQ(CsvField("esc\x1b[2J rlo\u202e bad\xff"), "esc\\x1b[2J rlo\\u202e bad\uFFFD");
}

ExportRun HostileRun() {
  ExportRun r;
  r.run.set_id(4);
  r.run.set_state(v1::SUCCEEDED);
  (*r.run.mutable_labels())["=cmd"] = "line\nbreak\x1b[2J\u202e\xff";
  (*r.run.mutable_final_metrics())["@top1"] = 0.5;
  r.label_order = {"=cmd"};
  v1::MetricPoint p;
  p.set_kind("epoch");
  (*p.mutable_labels())["device"] = "-cpu\r";
  r.curve.push_back(p);
  return r;
}

TEST(ExportTest, CsvRowsStayRows) {
  for (bool curves : {false, true}) {
    const std::string csv = ExportCsv({HostileRun(), HostileRun()}, curves);
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3) << csv;
    EXPECT_NE(csv.find(",'=cmd,"), std::string::npos) << csv;
    EXPECT_NE(csv.find("line\\x0abreak\\x1b[2J\\u202e\uFFFD"), std::string::npos) << csv;
    for (unsigned char c : csv) EXPECT_TRUE(c >= 0x20 || c == '\n') << int{c};
  }
  EXPECT_NE(ExportCsv({HostileRun()}, false).find(",'@top1,"), std::string::npos);
  EXPECT_NE(ExportCsv({HostileRun()}, true).find(",'-cpu\\x0d"), std::string::npos);
}

// Issue 40: every row carries the config it ran with (unswept keys too: N, lr, decay_coef); curves leave
// out progress points (a step count, no values) and date the final point at the attempt's last epoch.
TEST(ExportTest, CsvCarriesTheConfigAndCurvesHaveNoEmptyRows) {
  ExportRun r;
  r.run.set_id(4);
  r.run.set_state(v1::SUCCEEDED);
  r.run.set_resolved_spec(
      "model:\n  name: vit_micro_patch4_28\n  window_size: 0\noptimizer:\n  lr: 0.002\nsparsity:\n"
      "  sparsity_type: SRSTE\n  n_sparsity: 1\n  decay_coef: 0.0002\n  phases: [{sparse: 1}]\n");
  (*r.run.mutable_final_metrics())["top1"] = 0.5;
  const std::string csv = ExportCsv({r}, false);
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_NE(header.find(",state,config."), std::string::npos) << header;
  for (const char* column : {"config.optimizer.lr", "config.sparsity.n_sparsity",
                             "config.sparsity.decay_coef", "config.sparsity.sparsity_type"}) {
    EXPECT_NE(header.find(column), std::string::npos) << column << "\n" << header;
  }
  EXPECT_NE(csv.find(",0.002,"), std::string::npos) << csv;
  EXPECT_EQ(header.find("config.model.window_size"), std::string::npos) << header;  // No run sets it.
  EXPECT_NE(csv.find(",SRSTE,"), std::string::npos) << csv;

  for (const auto& [kind, epoch] : std::vector<std::pair<std::string, uint32_t>>{
           {"progress", 0}, {"epoch", 1}, {"epoch", 2}, {"progress", 0}, {"final", 0}}) {
    v1::MetricPoint p;
    p.set_attempt(1);
    p.set_kind(kind);
    p.set_epoch(epoch);
    if (kind != "progress") (*p.mutable_values())["top1"] = 0.5;
    r.curve.push_back(p);
  }
  const std::string curves = ExportCsv({r}, true);
  EXPECT_EQ(std::count(curves.begin(), curves.end(), '\n'), 4) << curves;  // Header, 2 epochs, final.
  EXPECT_EQ(curves.find(",progress,"), std::string::npos) << curves;
  EXPECT_NE(curves.find(",final,2,"), std::string::npos) << curves;
}

TEST(ExportTest, JsonIsValidAndExact) {
  const std::string json = ExportJson(1, {HostileRun()}, true);
  EXPECT_EQ(json.find("\u202e"), std::string::npos);
  for (unsigned char c : json) EXPECT_TRUE(c >= 0x20 || c == '\n') << int{c};
  const nlohmann::json doc = nlohmann::json::parse(json);
  EXPECT_EQ(doc["runs"][0]["labels"]["=cmd"], "line\nbreak\x1b[2J\u202e\uFFFD");
  EXPECT_EQ(doc["runs"][0]["curve"][0]["labels"]["device"], "-cpu\r");
}

}  // namespace
}  // namespace nmsparse::server
