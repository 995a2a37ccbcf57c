#include "cli/model_export_receiver.h"

#include <cstdio>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "contract/model_export_files.h"
#include "schemas/limits.h"

namespace nmsparse::cli {

ModelExportReceiver::ModelExportReceiver(std::string dir, int64_t run_id)
    : dir_(std::move(dir)), run_id_(run_id) {}

ModelExportReceiver::~ModelExportReceiver() {
  if (committed_) return;
  out_.close();
  std::error_code ignored;
  for (const auto& [file, size] : sizes_) std::filesystem::remove(Partial(file), ignored);
}

std::string ModelExportReceiver::Partial(const std::string& file) const {
  return absl::StrCat(dir_, "/.", file, ".partial");
}

absl::Status ModelExportReceiver::Take(const v1::ModelFileChunk& chunk) {
  const std::string& file = chunk.file();
  const std::string what = absl::StrCat("run ", run_id_, "'s export");
  if (!contract::IsExportFile(file)) {
    return absl::DataLossError(absl::StrCat(what, ": the coordinator sent a file named '", file,
                                            "', which is not one of the export's files"));
  }
  if (file != current_) {
    if (!current_.empty() || sizes_.count(file)) {
      return absl::DataLossError(absl::StrCat(what, ": ", file, " arrived out of order"));
    }
    current_ = file;
    sizes_[file] = 0;
    out_.open(Partial(file), std::ios::binary | std::ios::trunc);
    if (!out_) return absl::PermissionDeniedError(absl::StrCat("cannot write ", Partial(file)));
  }
  total_ += static_cast<int64_t>(chunk.data().size());
  if (total_ > limits::kMaxModelExportBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, " passes the limit of ", limits::FormatCount(limits::kMaxModelExportBytes), " bytes"));
  }
  out_.write(chunk.data().data(), static_cast<std::streamsize>(chunk.data().size()));
  sha_.Update(chunk.data().data(), chunk.data().size());
  sizes_[file] += static_cast<int64_t>(chunk.data().size());
  if (!out_)
    return absl::ResourceExhaustedError(absl::StrCat("cannot write ", Partial(file), " (disk full?)"));
  if (!chunk.last()) return absl::OkStatus();
  out_.close();
  current_.clear();
  const std::string digest = sha_.HexDigest();
  if (digest != chunk.sha256()) {
    return absl::DataLossError(absl::StrCat(what, ": ", file, " arrived damaged (SHA-256 ", digest,
                                            ", the worker's ", chunk.sha256(), ")"));
  }
  complete_[file] = true;
  return absl::OkStatus();
}

absl::Status ModelExportReceiver::Commit() {
  for (const char* file : contract::kExportFiles) {
    if (!complete_.count(file)) {
      return absl::DataLossError(absl::StrCat("run ", run_id_, "'s export ended without ", file));
    }
  }
  for (const char* file : contract::kExportFiles) {
    const std::string target = absl::StrCat(dir_, "/", file);
    if (std::rename(Partial(file).c_str(), target.c_str()) != 0) {
      return absl::PermissionDeniedError(absl::StrCat("cannot rename ", Partial(file), " to ", target));
    }
  }
  committed_ = true;
  return absl::OkStatus();
}

}  // namespace nmsparse::cli
