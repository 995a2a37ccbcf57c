// Files written so that every failure is seen: each write(2), the flush to the disk (fsync) and the close are
// checked, and an error names the path and the OS error ("no space left on device: DIR/spec.yaml.tmp"). A
// buffered stream would report a full disk only at its flush, which a destructor ignores, and leave a short
// file behind. Plain C++ and POSIX (nmworker and nmtrain, which also builds with CMake, both use it).
#ifndef NMSPARSE_COMMON_CHECKED_FILE_H_
#define NMSPARSE_COMMON_CHECKED_FILE_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace nmsparse {

// The status of a failed call on `path` with errno `error`: "no space left on device: PATH".
absl::Status FileError(int error, const std::string& path);

// A new file (truncated when present), written through write(2). The destructor of one never released
// closes it and removes it, and never throws: a failed write leaves no partial file.
class CheckedFile {
 public:
  static absl::Status Create(const std::string& path, CheckedFile* file);
  CheckedFile() = default;
  CheckedFile(const CheckedFile&) = delete;
  CheckedFile& operator=(const CheckedFile&) = delete;
  ~CheckedFile();

  absl::Status Write(const void* data, size_t size);
  // fsync, then close: the bytes are on the disk, or an error says why not.
  absl::Status Close();
  // The file is the caller's now (renamed into place): the destructor leaves its path alone.
  void Release() { keep_ = true; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool keep_ = false;
};

// Writes `content` to PATH.tmp, then renames it to `path`; on any failure the temporary file is removed and
// `path` is left as it was.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view content);

// Renames, naming both paths and the OS error on failure.
absl::Status RenameFile(const std::string& from, const std::string& to);

}  // namespace nmsparse

#endif  // NMSPARSE_COMMON_CHECKED_FILE_H_
