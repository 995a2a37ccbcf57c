#include "worker/trainer/data/idx_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace nmsparse {
namespace {

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

// Reads exactly `n` bytes; gzread also reads uncompressed files transparently.
bool ReadExactly(gzFile f, void* out, int64_t n) {
  auto* p = static_cast<uint8_t*>(out);
  while (n > 0) {
    const int chunk = static_cast<int>(std::min<int64_t>(n, 1 << 30));
    const int got = gzread(f, p, chunk);
    if (got <= 0) return false;
    p += got;
    n -= got;
  }
  return true;
}

}  // namespace

absl::StatusOr<IdxArray> ReadIdxFile(const std::string& path) {
  std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path.c_str(), "rb"));
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open IDX file ", path));
  uint8_t magic[4];
  if (!ReadExactly(file.get(), magic, 4))
    return absl::DataLossError(absl::StrCat(path, ": truncated header"));
  if (magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08 || magic[3] == 0 || magic[3] > 4) {
    return absl::DataLossError(absl::StrCat(path, ": not an IDX file of unsigned bytes (bad magic)"));
  }
  IdxArray array;
  int64_t total = 1;
  for (int d = 0; d < magic[3]; ++d) {
    uint8_t b[4];
    if (!ReadExactly(file.get(), b, 4)) return absl::DataLossError(absl::StrCat(path, ": truncated header"));
    const int64_t size = (int64_t{b[0]} << 24) | (int64_t{b[1]} << 16) | (int64_t{b[2]} << 8) | b[3];
    array.dims.push_back(size);
    total *= size;
  }
  array.data.resize(total);
  if (!ReadExactly(file.get(), array.data.data(), total)) {
    return absl::DataLossError(absl::StrCat(path, ": truncated data (expected ", total, " bytes)"));
  }
  return array;
}

absl::StatusOr<std::unique_ptr<Dataset>> LoadIdxDataset(const std::string& images_path,
                                                        const std::string& labels_path) {
  auto images = ReadIdxFile(images_path);
  if (!images.ok()) return images.status();
  auto labels = ReadIdxFile(labels_path);
  if (!labels.ok()) return labels.status();
  const auto& d = images->dims;
  if (d.size() != 3 && d.size() != 4) {
    return absl::DataLossError(absl::StrCat(images_path, ": expected [N, H, W] or [N, C, H, W] images"));
  }
  if (labels->dims.size() != 1 || labels->dims[0] != d[0]) {
    return absl::DataLossError(
        absl::StrCat(labels_path, ": expected ", d[0], " labels to match ", images_path));
  }
  ImageShape shape;
  shape.channels = d.size() == 4 ? static_cast<int>(d[1]) : 1;
  shape.height = static_cast<int>(d[d.size() - 2]);
  shape.width = static_cast<int>(d[d.size() - 1]);
  std::vector<int64_t> label_values(labels->data.begin(), labels->data.end());
  const int num_classes =
      label_values.empty()
          ? 0
          : static_cast<int>(*std::max_element(label_values.begin(), label_values.end())) + 1;
  return std::unique_ptr<Dataset>(
      new InMemoryDataset(shape, num_classes, std::move(images->data), std::move(label_values)));
}

absl::StatusOr<std::unique_ptr<Dataset>> LoadFashionMnist(const std::string& dir, bool train) {
  const std::string root = FashionMnistDir(dir);
  const std::string prefix = root + (train ? "/train" : "/t10k");
  auto data = LoadIdxDataset(prefix + "-images-idx3-ubyte.gz", prefix + "-labels-idx1-ubyte.gz");
  if (absl::IsNotFound(data.status())) {
    return absl::NotFoundError(absl::StrCat(
        data.status().message(), ". Fashion-MNIST is not in ", root, ": install it (apt-get install ",
        "dataset-fashion-mnist), or unpack that package anywhere and set ", kFashionMnistDirVariable,
        " to its usr/share/datasets/fashion-mnist (docs/gpu.md), or set data.path"));
  }
  return data;
}

}  // namespace nmsparse
