// Reads WebDataset tar shards (https://github.com/webdataset/webdataset): a sample is the consecutive members
// sharing a key (the member path up to the first '.' of its file name); nmsparse takes the image from
// `<key>.jpg` (or .jpeg) and the class index from `<key>.cls` (decimal text) and ignores other members.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_WEBDATASET_READER_H_
#define NMSPARSE_WORKER_TRAINER_DATA_WEBDATASET_READER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"

namespace nmsparse {

struct WebDatasetSample {
  std::string key;   // "<tar file>:<key>", for messages.
  std::string jpeg;  // The encoded image.
  int64_t label = 0;
};

// Calls `sample` for each sample of the tar file at `path`, in member order; stops at its first error.
// DataLoss naming the tar file and member when the tar is corrupt, a sample lacks its .jpg or .cls, or a .cls
// is not a non-negative integer.
absl::Status ReadWebDatasetTar(const std::string& path,
                               const std::function<absl::Status(const WebDatasetSample&)>& sample);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_WEBDATASET_READER_H_
