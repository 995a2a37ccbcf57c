// Reader of IDX files (the MNIST / Fashion-MNIST format), gzip-compressed or plain: a big-endian header
// (magic 0x0000 0x08 <ndim>, then ndim uint32 sizes) followed by uint8 data.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_IDX_READER_H_
#define NMSPARSE_WORKER_TRAINER_DATA_IDX_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "contract/dataset_location.h"
#include "worker/trainer/data/dataset.h"

namespace nmsparse {

struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;
};

// Reads a whole IDX file of unsigned bytes. NotFound / DataLoss errors name the file.
absl::StatusOr<IdxArray> ReadIdxFile(const std::string& path);

// An images file ([N, H, W] or [N, C, H, W]) and a labels file ([N]) as a dataset; num_classes is max label
// + 1.
absl::StatusOr<std::unique_ptr<Dataset>> LoadIdxDataset(const std::string& images_path,
                                                        const std::string& labels_path);

// Fashion-MNIST from FashionMnistDir(dir): the 60k training split (train-*-ubyte.gz) or the 10k test split
// (t10k-*-ubyte.gz). When the files are missing the NotFound error says how to get them.
absl::StatusOr<std::unique_ptr<Dataset>> LoadFashionMnist(const std::string& dir, bool train);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_IDX_READER_H_
