#include "report/tfevents.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "report/crc32c.h"
#include "tensorboard/event.pb.h"
#include "tensorboard/hparams.pb.h"

namespace nmsparse::report {
namespace {

TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  // RFC 3720, B.4: 32 bytes of zeros, of ones, ascending.
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending += static_cast<char>(i);
  EXPECT_EQ(Crc32c(ascending), 0x46DD794Eu);
}

TEST(Crc32cTest, Masked) {
  const uint32_t crc = 0xE3069283u;
  EXPECT_EQ(MaskedCrc32c("123456789"), ((crc >> 15) | (crc << 17)) + 0xa282ead8u);
}

TEST(TfRecordTest, FramingAndRoundTrip) {
  const std::string record = TfRecord("hello");
  ASSERT_EQ(record.size(), 8u + 4u + 5u + 4u);
  EXPECT_EQ(record.substr(0, 8), std::string("\x05\0\0\0\0\0\0\0", 8));
  absl::StatusOr<std::vector<std::string>> back = ReadTfRecords(record + TfRecord(""));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, (std::vector<std::string>{"hello", ""}));
}

TEST(TfRecordTest, DamageIsFound) {
  std::string record = TfRecord("hello");
  record[13] ^= 1;  // A data byte.
  EXPECT_EQ(ReadTfRecords(record).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_FALSE(ReadTfRecords(TfRecord("hello").substr(0, 15)).ok());
}

TEST(RunEventFileTest, VersionThenScalars) {
  RunData run;
  run.run.set_id(12);
  run.run.set_created_at_ms(1700000000000);
  (*run.run.mutable_labels())["recipe"] = "srste 2:4";
  v1::MetricPoint p;
  p.set_kind("step");
  p.set_step(40);
  p.set_at_ms(1700000001500);
  (*p.mutable_values())["loss"] = 1.25;
  (*p.mutable_values())["lr"] = 0.5;
  (*p.mutable_labels())["precision"] = "fp32";  // Text labels are not scalars.
  run.curve.push_back(p);
  absl::StatusOr<std::vector<std::string>> records = ReadTfRecords(RunEventFile(run));
  ASSERT_TRUE(records.ok()) << records.status();
  // Version, the HParams experiment and session start, the point, the session end.
  ASSERT_EQ(records->size(), 5u);
  tensorboard::Event first, second;
  ASSERT_TRUE(first.ParseFromString((*records)[0]));
  EXPECT_EQ(first.file_version(), "brain.Event:2");
  ASSERT_TRUE(second.ParseFromString((*records)[3]));
  EXPECT_EQ(second.step(), 40);
  EXPECT_DOUBLE_EQ(second.wall_time(), 1700000001.5);
  ASSERT_EQ(second.summary().value_size(), 2);
  EXPECT_EQ(second.summary().value(0).tag(), "step/loss");
  EXPECT_FLOAT_EQ(second.summary().value(0).simple_value(), 1.25f);
  EXPECT_EQ(second.summary().value(1).tag(), "step/lr");
  EXPECT_EQ(RunEventDir(run.run), "run-12_recipe=srste_2_4");
  EXPECT_EQ(RunEventFileName(run.run), "events.out.tfevents.1700000000.nmsparse-run-12");
}

// Issue 22: tags from user text are valid UTF-8 and bounded; a run directory is one bounded path component.
TEST(RunEventFileTest, HostileNamesStayTagsAndOneDirectory) {
  RunData run;
  run.run.set_id(12);
  (*run.run.mutable_labels())["../../etc"] = std::string(100000, 'x') + "/..";
  v1::MetricPoint p;
  p.set_kind("epoch");
  (*p.mutable_values())["acc\xff\x1b[2J\u202e" + std::string(1000, 'y')] = 0.5;
  run.curve.push_back(p);
  absl::StatusOr<std::vector<std::string>> records = ReadTfRecords(RunEventFile(run));
  ASSERT_TRUE(records.ok()) << records.status();
  tensorboard::Event event;
  ASSERT_TRUE(event.ParseFromString((*records)[records->size() - 2]));  // Before the session end.
  const std::string tag = event.summary().value(0).tag();
  EXPECT_EQ(tag.rfind("epoch/acc\uFFFD\\x1b[2J\\u202eyyy", 0), 0u) << tag;
  EXPECT_LE(std::count_if(tag.begin(), tag.end(), [](char c) { return (c & 0xC0) != 0x80; }), 256);
  const std::string dir = RunEventDir(run.run);
  EXPECT_EQ(dir.rfind("run-12_.._.._etc=xxx", 0), 0u) << dir;
  EXPECT_EQ(dir.find('/'), std::string::npos);
  EXPECT_LE(dir.size(), 200u);
}

// Issue 40: the HParams plugin's summaries, as TensorBoard reads them (tools/check_tensorboard_hparams.py
// reads the same file with the tensorboard package): the swept labels as hyperparameters, numbers as numbers,
// the final metrics' tags as the experiment's metrics, the run's state as the session's status.
RunData HparamsRun() {
  RunData run;
  run.run.set_id(7);
  run.run.set_created_at_ms(1700000000000);
  run.run.set_started_at_ms(1700000002000);
  run.run.set_finished_at_ms(1700000009000);
  run.run.set_state(v1::SUCCEEDED);
  (*run.run.mutable_labels())["recipe"] = "srste";
  (*run.run.mutable_labels())["sparsity.m_sparsity"] = "8";
  (*run.run.mutable_labels())["optimizer.lr"] = "0.002";
  (*run.run.mutable_final_metrics())["top1"] = 0.8125;
  (*run.run.mutable_final_metrics())["loss"] = 0.5;
  v1::MetricPoint p;
  p.set_kind("final");
  p.set_step(100);
  p.set_at_ms(1700000009000);
  (*p.mutable_values())["top1"] = 0.8125;
  (*p.mutable_values())["loss"] = 0.5;
  run.curve.push_back(p);
  return run;
}

tensorboard::HParamsPluginData PluginData(const std::string& record, const std::string& tag) {
  tensorboard::Event event;
  EXPECT_TRUE(event.ParseFromString(record));
  EXPECT_EQ(event.summary().value_size(), 1);
  const tensorboard::Summary::Value& value = event.summary().value(0);
  EXPECT_EQ(value.tag(), tag);
  EXPECT_EQ(value.metadata().plugin_data().plugin_name(), "hparams");
  EXPECT_TRUE(value.has_tensor());
  tensorboard::HParamsPluginData data;
  EXPECT_TRUE(data.ParseFromString(value.metadata().plugin_data().content()));
  EXPECT_EQ(data.version(), 0);
  return data;
}

TEST(RunEventFileTest, HparamsExperimentSessionStartAndEnd) {
  absl::StatusOr<std::vector<std::string>> records = ReadTfRecords(RunEventFile(HparamsRun()));
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 5u);

  const auto experiment = PluginData((*records)[1], "_hparams_/experiment").experiment();
  ASSERT_EQ(experiment.hparam_infos_size(), 3);
  EXPECT_EQ(experiment.hparam_infos(0).name(), "optimizer.lr");
  EXPECT_EQ(experiment.hparam_infos(0).type(), tensorboard::DATA_TYPE_FLOAT64);
  EXPECT_EQ(experiment.hparam_infos(1).name(), "recipe");
  EXPECT_EQ(experiment.hparam_infos(1).type(), tensorboard::DATA_TYPE_STRING);
  EXPECT_EQ(experiment.hparam_infos(2).name(), "sparsity.m_sparsity");
  ASSERT_EQ(experiment.metric_infos_size(), 2);
  EXPECT_EQ(experiment.metric_infos(0).name().tag(), "final/loss");
  EXPECT_EQ(experiment.metric_infos(1).name().tag(), "final/top1");

  const auto start = PluginData((*records)[2], "_hparams_/session_start_info").session_start_info();
  EXPECT_DOUBLE_EQ(start.start_time_secs(), 1700000002.0);
  ASSERT_EQ(start.hparams().size(), 3u);
  EXPECT_EQ(start.hparams().at("recipe").string_value(), "srste");
  EXPECT_DOUBLE_EQ(start.hparams().at("sparsity.m_sparsity").number_value(), 8.0);
  EXPECT_DOUBLE_EQ(start.hparams().at("optimizer.lr").number_value(), 0.002);

  const auto end = PluginData(records->back(), "_hparams_/session_end_info").session_end_info();
  EXPECT_EQ(end.status(), tensorboard::STATUS_SUCCESS);
  EXPECT_DOUBLE_EQ(end.end_time_secs(), 1700000009.0);

  RunData failed = HparamsRun();
  failed.run.set_state(v1::FAILED);
  records = ReadTfRecords(RunEventFile(failed));
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(PluginData(records->back(), "_hparams_/session_end_info").session_end_info().status(),
            tensorboard::STATUS_FAILURE);
}

// The file tools/check_tensorboard_hparams.py reads with TensorBoard's own reader: RunEventFile of
// HparamsRun, committed; regenerate with NMSPARSE_WRITE_GOLDENS=1 when the writer changes on purpose.
TEST(RunEventFileTest, HparamsGoldenIsWhatTheWriterWrites) {
  const std::string path = "report/testdata/hparams_run.tfevents";
  const std::string written = RunEventFile(HparamsRun());
  if (const char* dir = std::getenv("BUILD_WORKSPACE_DIRECTORY");
      dir && std::getenv("NMSPARSE_WRITE_GOLDENS")) {
    std::ofstream(std::string(dir) + "/" + path, std::ios::binary) << written;
  }
  std::stringstream golden;
  golden << std::ifstream(path, std::ios::binary).rdbuf();
  EXPECT_EQ(golden.str(), written) << path;
}

}  // namespace
}  // namespace nmsparse::report
