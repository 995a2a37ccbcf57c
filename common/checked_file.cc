#include "common/checked_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace nmsparse {

absl::Status FileError(int error, const std::string& path) {
  std::string reason = std::strerror(error);
  if (!reason.empty()) reason[0] = absl::ascii_tolower(static_cast<unsigned char>(reason[0]));
  return absl::Status(absl::ErrnoToStatusCode(error), absl::StrCat(reason, ": ", path));
}

absl::Status CheckedFile::Create(const std::string& path, CheckedFile* file) {
  file->path_ = path;
  file->fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (file->fd_ < 0) return FileError(errno, path);
  return absl::OkStatus();
}

CheckedFile::~CheckedFile() {
  if (fd_ >= 0) close(fd_);
  if (!keep_ && !path_.empty()) unlink(path_.c_str());
}

absl::Status CheckedFile::Write(const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = write(fd_, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return FileError(errno, path_);
    p += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status CheckedFile::Close() {
  const int fd = fd_;
  fd_ = -1;
  if (fsync(fd) != 0) {
    const int error = errno;
    close(fd);
    return FileError(error, path_);
  }
  if (close(fd) != 0) return FileError(errno, path_);
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view content) {
  CheckedFile file;
  NM_RETURN_IF_ERROR(CheckedFile::Create(path + ".tmp", &file));
  NM_RETURN_IF_ERROR(file.Write(content.data(), content.size()));
  NM_RETURN_IF_ERROR(file.Close());
  NM_RETURN_IF_ERROR(RenameFile(file.path(), path));
  file.Release();
  return absl::OkStatus();
}

absl::Status RenameFile(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) == 0) return absl::OkStatus();
  return FileError(errno, absl::StrCat(from, " -> ", to));
}

}  // namespace nmsparse
