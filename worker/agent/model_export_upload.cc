#include "worker/agent/model_export_upload.h"

#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/sha256_stream.h"
#include "common/unicode_text.h"
#include "contract/model_export_files.h"
#include "contract/run_directory.h"
#include "contract/trainer_flags.h"
#include "schemas/limits.h"
#include "worker/agent/rank_process.h"

extern char** environ;

namespace nmsparse::agent {
namespace {

namespace fs = std::filesystem;

constexpr size_t kStderrTailLines = 20;

// Runs `nmtrain --export` into `out_dir`; the error carries the tail of its stderr.
absl::Status RunTrainerExport(const ModelExportJob& job, const std::string& checkpoint,
                              const std::string& out_dir) {
  const v1::ModelExportOrder& order = job.order;
  RankCommand command;
  command.argv = {job.trainer,
                  contract::kExportFlag,
                  checkpoint,
                  contract::kExportOutFlag,
                  out_dir,
                  contract::kExportWeightsFlag,
                  order.weights() == v1::MODEL_WEIGHTS_EMA ? "ema" : "final",
                  contract::kExportDtypeFlag,
                  order.dtype() == v1::MODEL_DTYPE_BF16 ? "bf16" : "fp32"};
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) command.env.emplace_back(*e);
  std::mutex mu;
  std::deque<std::string> tail;
  auto keep = [&](absl::string_view line) {
    std::lock_guard<std::mutex> lock(mu);
    tail.emplace_back(line);
    if (tail.size() > kStderrTailLines) tail.pop_front();
  };
  absl::StatusOr<std::unique_ptr<RankProcess>> process = RankProcess::Start(command, keep, keep);
  if (!process.ok()) return process.status();
  const int code = (*process)->Wait();
  if (code == 0) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat("run ", order.run_id(), ": nmtrain --export ", checkpoint,
                                                    " on ", job.host, " exited with ", code, ": ",
                                                    absl::StrJoin(tail, "\n")));
}

// The messages of an upload: every export file in contract order, in chunks, each file's last chunk with its
// SHA-256. Reads one chunk ahead of the stream, never a whole file.
class FileChunks {
 public:
  explicit FileChunks(std::string dir) : dir_(std::move(dir)) {}

  // False after the last file's last chunk, or when a file cannot be read (error() says which).
  bool Next(v1::ModelFileChunk* chunk) {
    while (file_ < std::size(contract::kExportFiles)) {
      const std::string name = contract::kExportFiles[file_];
      if (!in_.is_open()) {
        in_.open(dir_ + "/" + name, std::ios::binary);
        if (!in_) {
          error_ = absl::StrCat("nmtrain --export wrote no ", name);
          return false;
        }
      }
      buffer_.resize(limits::kModelExportChunkBytes);
      in_.read(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
      buffer_.resize(static_cast<size_t>(in_.gcount()));
      if (in_.bad()) {
        error_ = absl::StrCat("cannot read ", dir_, "/", name);
        return false;
      }
      sha_.Update(buffer_.data(), buffer_.size());
      chunk->set_file(name);
      chunk->set_data(buffer_);
      if (in_.eof()) {
        chunk->set_last(true);
        chunk->set_sha256(sha_.HexDigest());
        in_.close();
        ++file_;
      }
      return true;
    }
    return false;
  }
  const std::string& error() const { return error_; }

 private:
  const std::string dir_;
  size_t file_ = 0;
  std::ifstream in_;
  std::string buffer_;
  Sha256Stream sha_;
  std::string error_;
};

}  // namespace

absl::Status ExportAndUpload(const ModelExportJob& job, CoordinatorClient* client) {
  const v1::ModelExportOrder& order = job.order;
  const std::string run_dir = contract::RunDirectory(job.work_dir, order.run_id());
  const std::string checkpoint = run_dir + "/" + contract::kCheckpointFiles[0];
  const std::string out_dir = absl::StrCat(job.work_dir, "/exports/", order.export_id());
  std::error_code ignored;
  fs::remove_all(out_dir, ignored);
  absl::Status exported = absl::OkStatus();
  if (!fs::exists(checkpoint)) {
    exported = absl::FailedPreconditionError(
        absl::StrCat("run ", order.run_id(), " has no checkpoint on worker ", job.worker_id, " (", job.host,
                     "): ", checkpoint, " does not exist"));
  } else if (fs::create_directories(out_dir, ignored); ignored) {
    exported = absl::InternalError(absl::StrCat("cannot create ", out_dir, ": ", ignored.message()));
  } else {
    exported = RunTrainerExport(job, checkpoint, out_dir);
  }

  FileChunks files(out_dir);
  bool failed = false;
  absl::Status sent = client->UploadModelExport([&](v1::ModelExportUpload* message) {
    if (failed) return false;
    message->set_worker_id(job.worker_id);
    message->set_export_id(order.export_id());
    v1::ModelFileChunk chunk;
    if (exported.ok() && files.Next(&chunk)) {
      *message->mutable_chunk() = std::move(chunk);
      return true;
    }
    if (exported.ok() && files.error().empty()) return false;  // Every file sent.
    // Proto3 strings are UTF-8: nmtrain's stderr may not be.
    message->set_error(ValidUtf8(exported.ok() ? files.error() : std::string(exported.message())));
    failed = true;
    return true;
  });
  fs::remove_all(out_dir, ignored);
  return sent;
}

}  // namespace nmsparse::agent
