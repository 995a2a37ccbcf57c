// TensorBoard event files from a run's metric points: TFRecord framing (little-endian uint64 length, masked
// CRC-32C of the length, the bytes, masked CRC-32C of the bytes) around Event protos. The first event is
// file_version "brain.Event:2"; then one event per metric point, its numbers as scalars tagged
// "<kind>/<name>" ("step/loss", "epoch/top1", "final/top1"; user text made visible and cut to 256 characters)
// at the point's step and time. After the version, the HParams plugin's experiment and session start
// summaries, and last its session end (report/tfevents_hparams.h).
#ifndef NMSPARSE_REPORT_TFEVENTS_H_
#define NMSPARSE_REPORT_TFEVENTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "report/sweep_data.h"

namespace nmsparse::report {

// One TFRecord around `data`.
std::string TfRecord(const std::string& data);

// Every record of a TFRecord stream, each checked against its two CRCs. DataLoss names the record's
// index and offset when the framing or a CRC is wrong.
absl::StatusOr<std::vector<std::string>> ReadTfRecords(const std::string& stream);

// The whole event file of a run.
std::string RunEventFile(const RunData& run);

// Where the run's events go: "run-12_recipe=dense" (labels sorted by axis, report/file_name_part.h:
// characters outside [A-Za-z0-9._=-] as '_', at most 200 bytes) and "events.out.tfevents.<created
// s>.nmsparse-run-12".
std::string RunEventDir(const v1::Run& run);
std::string RunEventFileName(const v1::Run& run);

}  // namespace nmsparse::report

#endif  // NMSPARSE_REPORT_TFEVENTS_H_
