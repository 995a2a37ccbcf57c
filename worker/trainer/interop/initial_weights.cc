#include "worker/trainer/interop/initial_weights.h"

#include <sys/stat.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "worker/trainer/checkpoint/checkpoint_digest.h"
#include "worker/trainer/interop/safetensors.h"
#include "worker/trainer/interop/torch_save.h"
#include "worker/trainer/trainer_error.h"

namespace nmsparse {
namespace {

std::string ShapeText(const torch::Tensor& t) { return "[" + absl::StrJoin(t.sizes(), ", ") + "]"; }

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// timm's SwinV2 buffers that older checkpoints persisted (timm's swin_transformer_v2 checkpoint_filter_fn).
bool IsSkippedBuffer(const std::string& name) {
  for (const char* suffix : {"relative_position_index", "relative_coords_table", "attn_mask"}) {
    if (absl::EndsWith(name, suffix)) return true;
  }
  return false;
}

std::string ClassifierPrefix(const ModelArch& arch) {
  return arch.family == ModelFamily::kVit ? "head." : "head.fc.";
}

// `value` as the model's parameter `name` (shaped like `param`) takes it, adapted as timm's loader does:
// ViT's pos_embed resampled to the model's grid, the first conv's input channels to the model's in_chans.
torch::Tensor Adapted(const std::string& name, const torch::Tensor& value, const torch::Tensor& param,
                      const ModelArch& arch, std::ostream& log) {
  if (value.sizes() == param.sizes()) return value;
  if (name == "pos_embed" && arch.family == ModelFamily::kVit && value.dim() == 3 &&
      value.size(2) == param.size(2)) {
    const int64_t grid = arch.img_size / arch.patch_size;
    log << "initial weights: pos_embed " << ShapeText(value) << " resampled to the " << grid << "x" << grid
        << " grid (timm's resample_abs_pos_embed)\n";
    return ResampleAbsPosEmbed(value, grid, arch.class_token ? 1 : 0);
  }
  if (name == "patch_embed.proj.weight" && value.dim() == 4 && value.size(0) == param.size(0)) {
    torch::Tensor w = value;
    if (w.size(2) != param.size(2) || w.size(3) != param.size(3)) {
      log << "initial weights: patch_embed.proj.weight " << ShapeText(w) << " resampled to " << param.size(2)
          << "x" << param.size(3) << " patches (timm's resample_patch_embed)\n";
      w = ResamplePatchEmbed(w, param.size(2), param.size(3));
    }
    if (w.size(1) != param.size(1)) {
      log << "initial weights: patch_embed.proj.weight " << ShapeText(w) << " adapted from " << w.size(1)
          << " to " << param.size(1) << " input channel(s) (timm's adapt_input_conv)\n";
      w = AdaptInputConv(param.size(1), w);
    }
    return w;
  }
  return value;
}

// The file's bytes, read once in 1 MiB chunks and hashed as they are read (where there is a digest to
// check): the digest check and the load see the same bytes. A non-empty `sha256` that differs is
// TrainerError(kExitUsage) naming the file and both digests.
std::string ReadCheckedBytes(const std::string& file, const std::string& sha256) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) throw TrainerError(kExitUsage, "model.initial_checkpoint: cannot open " + file);
  std::string bytes(static_cast<size_t>(in.tellg()), '\0');
  in.seekg(0);
  Sha256 hash;
  constexpr size_t kChunk = size_t{1} << 20;
  for (size_t at = 0; at < bytes.size(); at += kChunk) {
    const size_t n = std::min(kChunk, bytes.size() - at);
    if (!in.read(bytes.data() + at, static_cast<std::streamsize>(n))) {
      throw TrainerError(kExitUsage, "model.initial_checkpoint: reading " + file + " failed (it shrank?)");
    }
    if (!sha256.empty()) hash.Update(bytes.data() + at, n);
  }
  if (sha256.empty()) return bytes;
  const std::string digest = hash.HexDigest();
  if (digest == sha256) return bytes;
  throw TrainerError(kExitUsage, "model.initial_checkpoint: the SHA-256 of " + file + " is " + digest +
                                     ", not model.initial_checkpoint_sha256 " + sha256 +
                                     " that the run was submitted with (the file changed, or this worker "
                                     "holds another file at this path)");
}

// The tensors of a safetensors file, or of a torch.save file's state dict (told apart by their first bytes).
absl::StatusOr<NamedTensors> ReadWeightsFile(const std::string& file, const std::string& sha256) {
  const std::string bytes = ReadCheckedBytes(file, sha256);
  const std::string prefix = bytes.substr(0, 4);
  if (!absl::EndsWith(file, ".safetensors") && (LooksLikeZip(prefix) || LooksLikePickle(prefix))) {
    return ReadTorchSaveStateDictBytes(bytes, file);
  }
  absl::StatusOr<SafetensorsContents> read = ReadSafetensorsBytes(bytes, file);
  if (!read.ok()) return read.status();
  return std::move(read->tensors);
}

}  // namespace

torch::Tensor AdaptInputConv(int64_t in_chans, const torch::Tensor& weight) {
  const int64_t base_chans = weight.size(1);
  if (in_chans == base_chans) return weight;
  const torch::Tensor w = weight.to(torch::kFloat32);
  // One channel: the sum, which a grey image replicated into every source channel would have met.
  if (in_chans == 1) return w.sum(1, /*keepdim=*/true).to(weight.scalar_type());
  // Others: the source channels repeated, cut to in_chans and scaled so that the activation's scale holds.
  const int64_t repeat = (in_chans + base_chans - 1) / base_chans;
  return (w.repeat({1, repeat, 1, 1}).narrow(1, 0, in_chans) *
          (static_cast<double>(base_chans) / static_cast<double>(in_chans)))
      .to(weight.scalar_type());
}

std::string InitialWeightsFile(const std::string& path) {
  if (!IsDirectory(path)) return path;
  // timm's and the Hub's names, safetensors first as timm's loader prefers it.
  for (const char* name : {"model.safetensors", "pytorch_model.bin"}) {
    const std::string file = path + "/" + name;
    struct stat st;
    if (stat(file.c_str(), &st) == 0) return file;
  }
  throw TrainerError(kExitUsage,
                     "model.initial_checkpoint: the folder " + path +
                         " has neither model.safetensors nor pytorch_model.bin (a timm save_for_hf "
                         "/ Hugging Face folder)");
}

torch::Tensor ResampleAbsPosEmbed(const torch::Tensor& pos_embed, int64_t new_grid,
                                  int64_t num_prefix_tokens) {
  const int64_t old_tokens = pos_embed.size(1) - num_prefix_tokens;
  const int64_t old_grid = static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(old_tokens))));
  const int64_t dim = pos_embed.size(2);
  const torch::Tensor prefix = pos_embed.narrow(1, 0, num_prefix_tokens);
  torch::Tensor grid = pos_embed.narrow(1, num_prefix_tokens, old_tokens).to(torch::kFloat32);
  grid = grid.reshape({1, old_grid, old_grid, dim}).permute({0, 3, 1, 2});
  namespace F = torch::nn::functional;
  grid = F::interpolate(grid, F::InterpolateFuncOptions()
                                  .size(std::vector<int64_t>{new_grid, new_grid})
                                  .mode(torch::kBicubic)
                                  .align_corners(false)
                                  .antialias(true));
  grid = grid.permute({0, 2, 3, 1}).reshape({1, new_grid * new_grid, dim}).to(pos_embed.scalar_type());
  return torch::cat({prefix, grid}, 1);
}

torch::Tensor ResamplePatchEmbed(const torch::Tensor& weight, int64_t new_h, int64_t new_w) {
  const int64_t old_h = weight.size(2), old_w = weight.size(3);
  if (old_h == new_h && old_w == new_w) return weight;
  // The resize's matrix [new_h*new_w, old_h*old_w]: column i is basis image i resized as timm resizes.
  const int64_t old_total = old_h * old_w;
  namespace F = torch::nn::functional;
  const torch::Tensor resized =
      F::interpolate(torch::eye(old_total, torch::kFloat32).reshape({old_total, 1, old_h, old_w}),
                     F::InterpolateFuncOptions()
                         .size(std::vector<int64_t>{new_h, new_w})
                         .mode(torch::kBicubic)
                         .align_corners(false)
                         .antialias(true));
  const torch::Tensor resize = resized.squeeze(1).permute({1, 2, 0}).reshape({new_h * new_w, old_total});
  // A kernel k' with <k', resize(x)> = <k, x> for every patch x: k' = pinv(resize^T) k, applied per row.
  const torch::Tensor pinv = torch::linalg_pinv(resize);  // [old_total, new_total]
  const torch::Tensor flat = weight.reshape({weight.size(0), weight.size(1), old_total}).to(torch::kFloat32);
  return torch::matmul(flat, pinv)
      .reshape({weight.size(0), weight.size(1), new_h, new_w})
      .to(weight.scalar_type());
}

void LoadInitialWeights(const std::string& path, const ModelArch& arch, torch::nn::Module& model,
                        std::ostream& log, const std::string& sha256) {
  const std::string file = InitialWeightsFile(path);
  absl::StatusOr<NamedTensors> read = ReadWeightsFile(file, sha256);
  if (!read.ok())
    throw TrainerError(kExitUsage, "model.initial_checkpoint: " + std::string(read.status().message()));
  std::map<std::string, torch::Tensor> tensors;
  for (auto& [name, t] : *read) {
    if (!IsSkippedBuffer(name)) tensors[name] = t.to(torch::kFloat32);
  }
  auto params = model.named_parameters();
  const std::string head = ClassifierPrefix(arch);
  // A classifier of another size is dropped (timm: num_classes != the pretrained cfg's).
  bool head_dropped = false;
  if (auto it = tensors.find(head + "weight"); it != tensors.end() && params.contains(head + "weight") &&
                                               it->second.size(0) != params[head + "weight"].size(0)) {
    log << "initial weights: " << file << " has a " << it->second.size(0) << "-class head, the model "
        << arch.num_classes << " classes: " << head << "weight and " << head << "bias stay re-initialised\n";
    tensors.erase(head + "weight");
    tensors.erase(head + "bias");
    head_dropped = true;
  }
  std::vector<std::string> problems;
  torch::NoGradGuard no_grad;
  for (auto& item : params) {
    const std::string& name = item.key();
    auto it = tensors.find(name);
    if (it == tensors.end()) {
      if (!(head_dropped && absl::StartsWith(name, head)))
        problems.push_back("missing " + name + " " + ShapeText(item.value()));
      continue;
    }
    const torch::Tensor value = Adapted(name, it->second, item.value(), arch, log);
    if (value.sizes() != item.value().sizes()) {
      problems.push_back(absl::StrCat(name, ": the file's shape ", ShapeText(value), ", the model's ",
                                      ShapeText(item.value())));
    } else {
      item.value().copy_(value);
    }
    tensors.erase(it);
  }
  for (const auto& [name, t] : tensors) problems.push_back("unexpected " + name + " " + ShapeText(t));
  if (!problems.empty()) {
    throw TrainerError(kExitUsage, "model.initial_checkpoint: " + file + " does not fit " + arch.name + ": " +
                                       absl::StrJoin(problems, "; "));
  }
}

}  // namespace nmsparse
