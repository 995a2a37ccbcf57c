// torchvision's ImageFolder, read in place: root/<split>/<class>/**/<file>, classes numbered 0.. in sorted
// folder-name order, files in sorted path order, only torchvision's image extensions (IMG_EXTENSIONS,
// case-insensitive). Images are read and their headers decoded on Open().
#ifndef NMSPARSE_WORKER_TRAINER_DATA_IMAGE_FOLDER_DATASET_H_
#define NMSPARSE_WORKER_TRAINER_DATA_IMAGE_FOLDER_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/trainer/data/encoded_dataset.h"

namespace nmsparse {

// Whether `file` ends in one of torchvision's IMG_EXTENSIONS (.jpg .jpeg .png .ppm .bmp .pgm .tif .tiff
// .webp), in any case. Only JPEGs decode: the others are images that fail, as a PNG named .JPEG does.
bool HasImageExtension(const std::string& file);

class ImageFolderDataset : public EncodedDataset {
 public:
  struct Entry {
    std::string path;
    int64_t label = 0;
  };

  // Lists `root`/`split`. NotFound when it has no class folder; FailedPrecondition naming the first class
  // folder without an image file (torchvision refuses those too). Other files are skipped with a warning.
  static absl::StatusOr<std::unique_ptr<ImageFolderDataset>> Open(const std::string& root,
                                                                  const std::string& split);

  int64_t size() const override { return static_cast<int64_t>(entries_.size()); }
  int num_classes() const override { return static_cast<int>(classes_.size()); }
  // NotFound naming the file when it cannot be read, DataLoss when it is not a JPEG.
  absl::StatusOr<EncodedSample> Open(int64_t index) const override;
  std::string Describe(int64_t index) const override { return entries_[index].path; }

  const std::vector<std::string>& classes() const { return classes_; }
  const std::vector<Entry>& entries() const { return entries_; }
  // One line per skipped file, naming it, for the caller to print.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  ImageFolderDataset() = default;
  std::vector<std::string> classes_;
  std::vector<Entry> entries_;
  std::vector<std::string> warnings_;
};

// The whole file, or NotFound naming it and why (missing, unreadable).
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_IMAGE_FOLDER_DATASET_H_
