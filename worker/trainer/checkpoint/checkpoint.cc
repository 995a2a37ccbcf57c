#include "worker/trainer/checkpoint/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>
#include <sys/stat.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <vector>

#include "absl/strings/str_join.h"
#include "common/checked_file.h"
#include "contract/run_directory.h"
#include "worker/trainer/checkpoint/checkpoint_architecture.h"
#include "worker/trainer/checkpoint/checkpoint_digest.h"
#include "worker/trainer/trainer_error.h"

namespace nmsparse {
namespace {

void WriteScalar(torch::serialize::OutputArchive& a, const std::string& key, double v) {
  a.write(key, torch::tensor(v, torch::kFloat64));
}
void WriteInt(torch::serialize::OutputArchive& a, const std::string& key, int64_t v) {
  a.write(key, torch::tensor(v, torch::kInt64));
}
double ReadScalar(torch::serialize::InputArchive& a, const std::string& key) {
  torch::Tensor t;
  a.read(key, t);
  return t.item<double>();
}
// For keys added after checkpoints were first written: `fallback` when absent.
double ReadScalarOr(torch::serialize::InputArchive& a, const std::string& key, double fallback) {
  torch::Tensor t;
  return a.try_read(key, t) ? t.item<double>() : fallback;
}
int64_t ReadInt(torch::serialize::InputArchive& a, const std::string& key) {
  torch::Tensor t;
  a.read(key, t);
  return t.item<int64_t>();
}

// Masks as mask_<k> with their names as name_<k> (bytes): parameter names have dots, archive keys may not.
void WriteMasks(torch::serialize::OutputArchive& a, const NamedTensors& masks) {
  WriteInt(a, "count", static_cast<int64_t>(masks.size()));
  for (size_t k = 0; k < masks.size(); ++k) {
    const std::string& name = masks[k].first;
    auto bytes = torch::empty({static_cast<int64_t>(name.size())}, torch::kUInt8);
    std::memcpy(bytes.data_ptr<uint8_t>(), name.data(), name.size());
    a.write("name_" + std::to_string(k), bytes);
    a.write("mask_" + std::to_string(k), masks[k].second);
  }
}

NamedTensors ReadMasks(torch::serialize::InputArchive& a) {
  NamedTensors masks;
  const int64_t count = ReadInt(a, "count");
  for (int64_t k = 0; k < count; ++k) {
    torch::Tensor bytes, mask;
    a.read("name_" + std::to_string(k), bytes);
    a.read("mask_" + std::to_string(k), mask);
    bytes = bytes.contiguous();
    masks.emplace_back(std::string(reinterpret_cast<const char*>(bytes.data_ptr<uint8_t>()), bytes.numel()),
                       mask);
  }
  return masks;
}

// Streams the archive into `file`, hashing it on the way; returns the first write error. The writer never
// reports a failure to LibTorch (whose stream writer would throw again from its destructor while the first
// exception unwinds, and abort): it keeps the first error and swallows the rest of the bytes.
absl::Status StreamArchive(torch::serialize::OutputArchive& archive, CheckedFile& file, Sha256& hash) {
  absl::Status written;
  auto write = [&](const void* data, size_t size) {
    if (written.ok()) written = file.Write(data, size);
    hash.Update(data, size);
  };
  archive.save_to([&](const void* data, size_t size) -> size_t {
    static const std::vector<char> kZeros(1 << 16);
    // LibTorch 2.x passes no buffer for a record written without its data: a hole, as its file writer leaves
    // by seeking, so zeros here.
    for (size_t done = 0; data == nullptr && done < size; done += kZeros.size()) {
      write(kZeros.data(), std::min(kZeros.size(), size - done));
    }
    if (data != nullptr) write(data, size);
    return size;
  });
  return written;
}

// Lists the new file's digest, then renames the latest checkpoint to the previous one and the new file to the
// latest. The list is written before any rename, so a crash between the renames leaves every checkpoint
// present listed.
absl::Status RecordAndRename(const std::string& out_dir, const std::string& tmp, const std::string& digest) {
  const std::string path = CheckpointPath(out_dir);
  struct stat st;
  const bool has_latest = stat(path.c_str(), &st) == 0;
  if (has_latest && RecordedDigests(out_dir).empty()) {
    // Checkpoints written before digests were kept: the current one is recorded as found.
    absl::StatusOr<std::string> found = FileSha256(path);
    if (!found.ok()) return found.status();
    if (absl::Status s = RecordDigest(out_dir, *found); !s.ok()) return s;
  }
  if (absl::Status s = RecordDigest(out_dir, digest); !s.ok()) return s;
  if (has_latest) {
    if (absl::Status s = RenameFile(path, PreviousCheckpointPath(out_dir)); !s.ok()) return s;
  }
  return RenameFile(tmp, path);
}

// Writes checkpoint.pt.tmp through a checked file (removed on every way out but the last rename) and puts it
// in place; a storage failure is TrainerError(kExitStorage) naming the file and the OS error.
void WriteCheckpointFiles(const std::string& out_dir, torch::serialize::OutputArchive& archive) {
  CheckedFile tmp;
  Sha256 hash;
  absl::Status written = CheckedFile::Create(CheckpointPath(out_dir) + ".tmp", &tmp);
  if (written.ok()) written = StreamArchive(archive, tmp, hash);
  if (written.ok()) written = tmp.Close();
  if (written.ok()) written = RecordAndRename(out_dir, tmp.path(), hash.HexDigest());
  if (!written.ok()) {
    throw TrainerError(kExitStorage, "cannot write the checkpoint: " + std::string(written.message()));
  }
  tmp.Release();
}

}  // namespace

// The names are nmworker's too (it looks for a fork's parent checkpoint): contract/run_directory.h.
std::string CheckpointPath(const std::string& out_dir) {
  return out_dir + "/" + contract::kCheckpointFiles[0];
}
std::string PreviousCheckpointPath(const std::string& out_dir) {
  return out_dir + "/" + contract::kCheckpointFiles[1];
}

torch::Tensor CpuRngState() {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get_state();
}

void SetCpuRngState(const torch::Tensor& state) {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state);
}

void SaveCheckpoint(const std::string& out_dir, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                    const TrainState& state, const NamedTensors& sparsity_masks) {
  torch::serialize::OutputArchive archive, model_archive, optimizer_archive, state_archive, masks_archive,
      ema_archive;
  model.save(model_archive);
  optimizer.save(optimizer_archive);
  WriteInt(state_archive, "epoch", state.epoch);
  WriteInt(state_archive, "step_in_epoch", state.step_in_epoch);
  WriteInt(state_archive, "global_step", state.global_step);
  WriteInt(state_archive, "seed", static_cast<int64_t>(state.seed));
  WriteInt(state_archive, "world_size", state.world_size);
  state_archive.write("precision", c10::IValue(state.precision));
  if (!state.architecture.empty()) state_archive.write(kArchitectureKey, c10::IValue(state.architecture));
  WriteScalar(state_archive, "best_top1", state.best_top1);
  WriteScalar(state_archive, "train_seconds", state.train_seconds);
  WriteScalar(state_archive, "flops", state.flops);
  WriteScalar(state_archive, "epoch_loss_sum", state.epoch_loss_sum);
  WriteScalar(state_archive, "epoch_samples", state.epoch_samples);
  WriteScalar(state_archive, "epoch_seconds", state.epoch_seconds);
  WriteScalar(state_archive, "last_epoch_loss", state.last_epoch_loss);
  WriteScalar(state_archive, "last_top1", state.last_top1);
  WriteScalar(state_archive, "last_top5", state.last_top5);
  WriteScalar(state_archive, "last_eval_loss", state.last_eval_loss);
  if (!state.ema.empty()) {
    WriteScalar(state_archive, "last_ema_top1", state.last_ema_top1);
    WriteScalar(state_archive, "last_ema_top5", state.last_ema_top5);
    WriteScalar(state_archive, "last_ema_eval_loss", state.last_ema_eval_loss);
  }
  state_archive.write("torch_rng", CpuRngState());
  if (state.rank_rngs.defined()) state_archive.write("rank_rngs", state.rank_rngs);
  if (state.loss_scaler.defined()) state_archive.write("loss_scaler", state.loss_scaler);
  if (!state.lr_scheduler.empty()) {
    state_archive.write("lr_scheduler", torch::tensor(state.lr_scheduler, torch::kFloat64));
  }
  archive.write("model", model_archive);
  archive.write("optimizer", optimizer_archive);
  archive.write("state", state_archive);
  if (!sparsity_masks.empty()) {
    WriteMasks(masks_archive, sparsity_masks);
    archive.write("dynamic_sparsity", masks_archive);
  }
  if (!state.ema.empty()) {
    WriteMasks(ema_archive, state.ema);  // Named tensors, stored as the masks are.
    archive.write("model_ema", ema_archive);
  }
  WriteCheckpointFiles(out_dir, archive);
}

namespace {

// Loads one checkpoint file into model, optimizer and state; throws std::runtime_error naming it.
void LoadCheckpointFile(const std::string& path, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                        TrainState* state, torch::Device device, NamedTensors* sparsity_masks) {
  try {
    torch::serialize::InputArchive archive, model_archive, optimizer_archive, state_archive;
    archive.load_from(path, device);
    archive.read("model", model_archive);
    archive.read("optimizer", optimizer_archive);
    archive.read("state", state_archive);
    model.load(model_archive);
    optimizer.load(optimizer_archive);
    state->epoch = static_cast<int>(ReadInt(state_archive, "epoch"));
    state->step_in_epoch = ReadInt(state_archive, "step_in_epoch");
    state->global_step = ReadInt(state_archive, "global_step");
    state->seed = static_cast<uint64_t>(ReadInt(state_archive, "seed"));
    state->world_size = static_cast<int>(ReadInt(state_archive, "world_size"));
    c10::IValue precision;
    state->precision = state_archive.try_read("precision", precision) ? precision.toStringRef() : "fp32";
    state->best_top1 = ReadScalar(state_archive, "best_top1");
    state->train_seconds = ReadScalar(state_archive, "train_seconds");
    state->flops = ReadScalar(state_archive, "flops");
    state->epoch_loss_sum = ReadScalar(state_archive, "epoch_loss_sum");
    state->epoch_samples = ReadScalar(state_archive, "epoch_samples");
    state->epoch_seconds = ReadScalar(state_archive, "epoch_seconds");
    state->last_epoch_loss = ReadScalar(state_archive, "last_epoch_loss");
    state->last_top1 = ReadScalar(state_archive, "last_top1");
    state->last_top5 = ReadScalar(state_archive, "last_top5");
    state->last_eval_loss = ReadScalar(state_archive, "last_eval_loss");
    state->last_ema_top1 = ReadScalarOr(state_archive, "last_ema_top1", 0.0);
    state->last_ema_top5 = ReadScalarOr(state_archive, "last_ema_top5", 0.0);
    state->last_ema_eval_loss = ReadScalarOr(state_archive, "last_ema_eval_loss", 0.0);
    torch::serialize::InputArchive ema_archive;
    state->ema = archive.try_read("model_ema", ema_archive) ? ReadMasks(ema_archive) : NamedTensors{};
    torch::Tensor rng;
    state_archive.read("torch_rng", rng);
    SetCpuRngState(rng.cpu());
    torch::Tensor rank_rngs;  // absent in one-rank runs and in checkpoints written before it was recorded
    state->rank_rngs = state_archive.try_read("rank_rngs", rank_rngs) ? rank_rngs.cpu() : torch::Tensor();
    torch::Tensor loss_scaler;  // fp16 runs only
    state->loss_scaler =
        state_archive.try_read("loss_scaler", loss_scaler) ? loss_scaler.cpu() : torch::Tensor();
    torch::Tensor lr_scheduler;  // plateau runs only
    state->lr_scheduler.clear();
    if (state_archive.try_read("lr_scheduler", lr_scheduler)) {
      lr_scheduler = lr_scheduler.to(torch::kCPU, torch::kFloat64).contiguous();
      state->lr_scheduler.assign(lr_scheduler.data_ptr<double>(),
                                 lr_scheduler.data_ptr<double>() + lr_scheduler.numel());
    }
    if (sparsity_masks != nullptr) {
      sparsity_masks->clear();
      torch::serialize::InputArchive masks_archive;
      if (archive.try_read("dynamic_sparsity", masks_archive)) *sparsity_masks = ReadMasks(masks_archive);
    }
  } catch (const c10::Error& e) {
    throw std::runtime_error("cannot load checkpoint " + path + ": " + e.what_without_backtrace());
  }
}

}  // namespace

bool LoadCheckpoint(const std::string& out_dir, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                    TrainState* state, torch::Device device, NamedTensors* sparsity_masks,
                    std::string* loaded_from) {
  std::vector<std::string> errors;
  for (const std::string& path : {CheckpointPath(out_dir), PreviousCheckpointPath(out_dir)}) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) continue;
    try {
      CheckIntact(path);
      // Every field is read again from the file that loads, so a failed attempt leaves nothing behind.
      LoadCheckpointFile(path, model, optimizer, state, device, sparsity_masks);
      for (const std::string& error : errors) std::cerr << error << "\n";
      if (!errors.empty()) std::cerr << "falling back to the previous checkpoint " << path << "\n";
      if (loaded_from != nullptr) *loaded_from = path;
      return true;
    } catch (const std::runtime_error& e) {
      errors.push_back(e.what());
    }
  }
  if (!errors.empty()) {
    throw std::runtime_error("no intact checkpoint in " + out_dir + ": " + absl::StrJoin(errors, "; "));
  }
  return false;
}

void CheckIntact(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  bool unverified = false;
  if (absl::Status intact = VerifyCheckpointFile(dir, path, &unverified); !intact.ok()) {
    throw std::runtime_error(std::string(intact.message()));
  }
  if (unverified) {
    std::cerr << "checkpoint " << path << " has no recorded digest (written before digests were kept): "
              << "using it unverified\n";
  }
}

void LoadModelFromCheckpoint(const std::string& path, torch::nn::Module& model) {
  CheckIntact(path);
  torch::serialize::InputArchive archive, model_archive;
  archive.load_from(path, torch::kCPU);
  archive.read("model", model_archive);
  model.load(model_archive);
}

NamedTensors LoadModelEmaFromCheckpoint(const std::string& path) {
  CheckIntact(path);
  torch::serialize::InputArchive archive, ema_archive;
  archive.load_from(path, torch::kCPU);
  return archive.try_read("model_ema", ema_archive) ? ReadMasks(ema_archive) : NamedTensors{};
}

}  // namespace nmsparse
