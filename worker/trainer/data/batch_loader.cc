#include "worker/trainer/data/batch_loader.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "common/split_mix64.h"
#include "worker/trainer/data/synthetic_dataset.h"

namespace nmsparse {
namespace {

// Zero-padded random crop and optional horizontal flip of one CHW image, in place.
void Augment(uint8_t* image, const ImageShape& s, const AugmentOptions& a, uint64_t key,
             std::vector<uint8_t>& tmp) {
  const int p = a.crop_padding;
  const uint64_t r = SplitMix64(key);
  const int dy = p > 0 ? static_cast<int>(r % (2 * p + 1)) - p : 0;
  const int dx = p > 0 ? static_cast<int>((r >> 16) % (2 * p + 1)) - p : 0;
  const bool flip =
      a.hflip > 0 && static_cast<double>(SplitMix64(key ^ 0xf11bULL) >> 11) * 0x1.0p-53 < a.hflip;
  if (dy == 0 && dx == 0 && !flip) return;
  tmp.assign(image, image + s.numel());
  // Output (c, y, x) is input (c, y + dy, x' + dx) with x' = x, or W - 1 - x when flipped; zero outside.
  // Row by row: the columns whose source is inside form one interval [x0, x1).
  const int w = s.width;
  const int x0 = flip ? std::max(0, dx) : std::max(0, -dx);
  const int x1 = flip ? std::min(w, w + dx) : std::min(w, w - dx);
  for (int c = 0; c < s.channels; ++c) {
    for (int y = 0; y < s.height; ++y) {
      uint8_t* out = image + (c * s.height + y) * w;
      const int sy = y + dy;
      if (sy < 0 || sy >= s.height || x0 >= x1) {
        std::memset(out, 0, static_cast<size_t>(w));
        continue;
      }
      const uint8_t* in = tmp.data() + (c * s.height + sy) * w;
      std::memset(out, 0, static_cast<size_t>(x0));
      if (flip) {
        for (int x = x0; x < x1; ++x) out[x] = in[w - 1 - x + dx];
      } else {
        std::memcpy(out + x0, in + x0 + dx, static_cast<size_t>(x1 - x0));
      }
      std::memset(out + x1, 0, static_cast<size_t>(w - x1));
    }
  }
}

torch::Tensor ChannelConstants(const std::vector<float>& values, torch::Device device) {
  return torch::tensor(values).view({1, -1, 1, 1}).to(device);
}

}  // namespace

std::vector<int64_t> EpochPermutation(int64_t n, uint64_t seed, int epoch) {
  std::vector<int64_t> perm(n);
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  uint64_t state = HashCombine(seed, 0xe90c0000ULL + static_cast<uint64_t>(epoch));
  for (int64_t i = n - 1; i > 0; --i) {
    state = SplitMix64(state);
    std::swap(perm[i], perm[static_cast<int64_t>(state % static_cast<uint64_t>(i + 1))]);
  }
  return perm;
}

TrainLoader::TrainLoader(const Dataset* data, int64_t global_batch, int rank, int world, uint64_t seed,
                         AugmentOptions augment, Normalization norm, int aug_repeats, HostFinish finish)
    : data_(data),
      global_batch_(global_batch),
      rank_(rank),
      world_(world),
      seed_(seed),
      augment_(augment),
      norm_(std::move(norm)),
      finish_(std::move(finish)) {
  if (global_batch <= 0 || global_batch % world != 0) {
    throw std::invalid_argument("batch_size " + std::to_string(global_batch) +
                                " must be a positive multiple of the world size " + std::to_string(world));
  }
  if (aug_repeats > 0) repeat_ = std::make_unique<RepeatAugSampler>(data->size(), aug_repeats, world);
}

int64_t TrainLoader::steps_per_epoch() const {
  return repeat_ ? repeat_->selected_per_rank() / local_batch() : data_->size() / global_batch_;
}

// Two epochs are enough: loader threads run at most a few batches ahead, across one epoch boundary.
std::shared_ptr<const std::vector<int64_t>> TrainLoader::Permutation(int epoch) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = permutations_.find(epoch);
  if (it != permutations_.end()) return it->second;
  auto permutation =
      std::make_shared<const std::vector<int64_t>>(EpochPermutation(data_->size(), seed_, epoch));
  permutations_[epoch] = permutation;
  while (permutations_.size() > 2) permutations_.erase(permutations_.begin());
  return permutation;
}

HostBatch TrainLoader::GetHost(int epoch, int64_t step, bool pin_memory) const {
  const auto permutation = Permutation(epoch);
  std::vector<int64_t> indices, positions;
  indices.reserve(local_batch());
  positions.reserve(local_batch());
  for (int64_t i = step * global_batch_ + rank_; i < (step + 1) * global_batch_; i += world_) {
    indices.push_back(repeat_ ? repeat_->IndexAt(*permutation, i) : (*permutation)[i]);
    positions.push_back(i);
  }
  // With repeats an image occurs several times an epoch: its position, not its index, seeds each copy's
  // augmentation. Without, the index does, as before (so that existing runs keep their batches).
  return LoadHostBatch(*data_, indices, augment_, HashCombine(seed_, 0xa0000000ULL + epoch), pin_memory,
                       repeat_ ? &positions : nullptr, epoch, finish_);
}

Batch TrainLoader::Get(int epoch, int64_t step) const {
  return DeviceTransfer(norm_, torch::kCPU)(GetHost(epoch, step));
}

DeviceTransfer::DeviceTransfer(const Normalization& norm, torch::Device device)
    : device_(device), mean_(ChannelConstants(norm.mean, device)), std_(ChannelConstants(norm.std, device)) {}

Batch DeviceTransfer::operator()(const HostBatch& batch) const {
  const bool async = batch.images.is_pinned();
  auto images = batch.images.to(device_, /*non_blocking=*/async);
  if (images.scalar_type() == torch::kUInt8)
    images = images.to(torch::kFloat32).div_(255.0).sub_(mean_).div_(std_);
  return {images, batch.labels.to(device_, /*non_blocking=*/async)};
}

Batch LoadBatch(const Dataset& data, const std::vector<int64_t>& indices, const Normalization& norm) {
  return LoadAugmentedBatch(data, indices, norm, AugmentOptions{}, 0);
}

Batch LoadAugmentedBatch(const Dataset& data, const std::vector<int64_t>& indices, const Normalization& norm,
                         const AugmentOptions& augment, uint64_t augment_seed) {
  return DeviceTransfer(norm, torch::kCPU)(LoadHostBatch(data, indices, augment, augment_seed));
}

HostBatch LoadHostBatch(const Dataset& data, const std::vector<int64_t>& indices,
                        const AugmentOptions& augment, uint64_t augment_seed, bool pin_memory,
                        const std::vector<int64_t>* augment_keys, int epoch, const HostFinish& finish) {
  const ImageShape s = data.shape();
  const int64_t n = s.numel();
  const auto b = static_cast<int64_t>(indices.size());
  HostBatch batch;
  batch.images =
      torch::empty({b, s.channels, s.height, s.width},
                   torch::dtype(finish ? torch::kFloat32 : torch::kUInt8).pinned_memory(pin_memory));
  batch.labels = torch::empty({b}, torch::dtype(torch::kInt64).pinned_memory(pin_memory));
  int64_t* labels = batch.labels.data_ptr<int64_t>();
  std::vector<uint8_t> tmp, finishing(finish ? n : 0);
  const bool augmenting = augment.crop_padding > 0 || augment.hflip > 0;
  for (int64_t i = 0; i < b; ++i) {
    uint8_t* image = finish ? finishing.data() : batch.images.data_ptr<uint8_t>() + i * n;
    const int64_t key = augment_keys != nullptr ? (*augment_keys)[i] : indices[i];
    const uint64_t image_seed = HashCombine(augment_seed, key);
    labels[i] = data.ReadForEpoch(indices[i], epoch, image_seed, image);
    if (augmenting) Augment(image, s, augment, image_seed, tmp);
    if (finish) finish(image, batch.images.data_ptr<float>() + i * n, image_seed);
  }
  return batch;
}

}  // namespace nmsparse
