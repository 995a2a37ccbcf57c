#include "report/tfevents.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/visible_text.h"
#include "report/crc32c.h"
#include "report/file_name_part.h"
#include "report/tfevents_hparams.h"
#include "tensorboard/event.pb.h"

namespace nmsparse::report {
namespace {

std::string LittleEndian(uint64_t value, int bytes) {
  std::string out(bytes, '\0');
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
  return out;
}

uint64_t ReadLittleEndian(const std::string& s, size_t at, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(s[at + i]);
  return value;
}

std::string Serialized(const tensorboard::Event& event) {
  std::string bytes;
  event.SerializeToString(&bytes);
  return bytes;
}

// A run directory's name stays well under a file system's 255 bytes, however long the labels.
constexpr size_t kMaxRunDirBytes = 200;
// TensorBoard shows tags as they are: visible text (common/visible_text.h), bounded.
constexpr size_t kMaxTagChars = 256;

}  // namespace

std::string TfRecord(const std::string& data) {
  const std::string length = LittleEndian(data.size(), 8);
  return absl::StrCat(length, LittleEndian(MaskedCrc32c(length), 4), data,
                      LittleEndian(MaskedCrc32c(data), 4));
}

absl::StatusOr<std::vector<std::string>> ReadTfRecords(const std::string& stream) {
  std::vector<std::string> records;
  size_t at = 0;
  while (at < stream.size()) {
    const std::string where = absl::StrCat("record ", records.size(), " at byte ", at);
    if (stream.size() - at < 12) return absl::DataLossError(where + ": truncated header");
    const std::string length_bytes = stream.substr(at, 8);
    if (ReadLittleEndian(stream, at + 8, 4) != MaskedCrc32c(length_bytes))
      return absl::DataLossError(where + ": length CRC mismatch");
    const uint64_t length = ReadLittleEndian(stream, at, 8);
    if (stream.size() - at - 12 < length + 4) return absl::DataLossError(where + ": truncated data");
    std::string data = stream.substr(at + 12, length);
    if (ReadLittleEndian(stream, at + 12 + length, 4) != MaskedCrc32c(data))
      return absl::DataLossError(where + ": data CRC mismatch");
    records.push_back(std::move(data));
    at += 12 + length + 4;
  }
  return records;
}

std::string RunEventFile(const RunData& run) {
  tensorboard::Event version;
  version.set_wall_time(run.run.created_at_ms() / 1000.0);
  version.set_file_version("brain.Event:2");
  std::string out = TfRecord(Serialized(version));
  out += TfRecord(Serialized(HparamsExperimentEvent(run)));
  out += TfRecord(Serialized(HparamsSessionStartEvent(run)));
  for (const v1::MetricPoint& p : run.curve) {
    tensorboard::Event event;
    event.set_wall_time(p.at_ms() / 1000.0);
    event.set_step(static_cast<int64_t>(p.step()));
    // Sorted, so that the same run always gives the same bytes.
    for (const auto& [name, value] : std::map<std::string, double>(p.values().begin(), p.values().end())) {
      tensorboard::Summary::Value* v = event.mutable_summary()->add_value();
      v->set_tag(VisibleText(absl::StrCat(p.kind(), "/", name), kMaxTagChars));
      v->set_simple_value(static_cast<float>(value));
    }
    if (event.has_summary()) out += TfRecord(Serialized(event));
  }
  return out + TfRecord(Serialized(HparamsSessionEndEvent(run)));
}

std::string RunEventDir(const v1::Run& run) {
  std::string out = absl::StrCat("run-", run.id());
  for (const auto& [axis, value] :
       std::map<std::string, std::string>(run.labels().begin(), run.labels().end()))
    absl::StrAppend(&out, "_", axis, "=", value);
  return FileNamePart(out, kMaxRunDirBytes);
}

std::string RunEventFileName(const v1::Run& run) {
  return absl::StrCat("events.out.tfevents.", run.created_at_ms() / 1000, ".nmsparse-run-", run.id());
}

}  // namespace nmsparse::report
