#include "worker/trainer/data/image_folder_dataset.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "worker/trainer/data/directory_listing.h"
#include "worker/trainer/data/jpeg_image_source.h"

namespace nmsparse {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);  // stat follows links, as os.walk(followlinks).
}

// `dir` and its sub-folders, recursively, in sorted path order (torchvision's sorted(os.walk(...))).
std::vector<std::string> FoldersUnder(const std::string& dir) {
  std::vector<std::string> folders = {dir};
  for (size_t i = 0; i < folders.size(); ++i) {
    const std::string parent = folders[i];
    for (const auto& name : SortedNames(parent)) {
      if (IsDirectory(parent + "/" + name)) folders.push_back(parent + "/" + name);
    }
  }
  std::sort(folders.begin(), folders.end());
  return folders;
}

}  // namespace

bool HasImageExtension(const std::string& file) {
  const std::string lower = absl::AsciiStrToLower(file);
  for (const char* ext : {".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp"}) {
    if (absl::EndsWith(lower, ext)) return true;
  }
  return false;
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got < 0) {
      const int error = errno;
      close(fd);
      return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", std::strerror(error)));
    }
    if (got == 0) break;
    bytes.append(buffer, got);
  }
  close(fd);
  return bytes;
}

absl::StatusOr<std::unique_ptr<ImageFolderDataset>> ImageFolderDataset::Open(const std::string& root,
                                                                             const std::string& split) {
  const std::string dir = root + "/" + split;
  std::unique_ptr<ImageFolderDataset> ds(new ImageFolderDataset());
  for (const auto& name : SortedNames(dir)) {
    if (IsDirectory(dir + "/" + name)) ds->classes_.push_back(name);
  }
  if (ds->classes_.empty()) return absl::NotFoundError(absl::StrCat("no class folders in ", dir));
  for (size_t label = 0; label < ds->classes_.size(); ++label) {
    const std::string class_dir = dir + "/" + ds->classes_[label];
    const size_t before = ds->entries_.size();
    for (const auto& folder : FoldersUnder(class_dir)) {
      for (const auto& name : SortedNames(folder)) {
        const std::string path = folder + "/" + name;
        if (IsDirectory(path)) continue;
        if (HasImageExtension(name)) {
          ds->entries_.push_back({path, static_cast<int64_t>(label)});
        } else {
          ds->warnings_.push_back(absl::StrCat("skipped ", path, ": not an image file (extension)"));
        }
      }
    }
    if (ds->entries_.size() == before) {
      return absl::FailedPreconditionError(
          absl::StrCat("class folder ", class_dir, " has no image file (.jpg, .jpeg, .png, ...)"));
    }
  }
  return ds;
}

absl::StatusOr<EncodedSample> ImageFolderDataset::Open(int64_t index) const {
  const Entry& entry = entries_[index];
  auto bytes = ReadWholeFile(entry.path);
  if (!bytes.ok()) return bytes.status();
  auto source = JpegImageSource::Open(*std::move(bytes), entry.path);
  if (!source.ok()) return source.status();
  return EncodedSample{*std::move(source), entry.label};
}

}  // namespace nmsparse
