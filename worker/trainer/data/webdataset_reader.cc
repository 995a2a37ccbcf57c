#include "worker/trainer/data/webdataset_reader.h"

#include <archive.h>
#include <archive_entry.h>

#include <memory>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace nmsparse {
namespace {

struct ArchiveCloser {
  void operator()(archive* a) const { archive_read_free(a); }
};

// WebDataset's split of a member path into key and extension: at the first '.' after the last '/'.
void SplitMember(const std::string& member, std::string* key, std::string* ext) {
  const size_t slash = member.rfind('/');
  const size_t dot = member.find('.', slash == std::string::npos ? 0 : slash + 1);
  *key = member.substr(0, dot);
  *ext = dot == std::string::npos ? "" : absl::AsciiStrToLower(member.substr(dot + 1));
}

// The sample being gathered from consecutive members.
struct Pending {
  std::string key;
  std::optional<std::string> jpeg;
  std::optional<std::string> cls;
};

absl::Status Emit(const std::string& path, const Pending& p,
                  const std::function<absl::Status(const WebDatasetSample&)>& sample) {
  const std::string where = absl::StrCat(path, ": sample ", p.key);
  if (!p.jpeg && !p.cls) return absl::OkStatus();  // Members nmsparse does not read (e.g. a .json alone).
  if (!p.jpeg) return absl::DataLossError(absl::StrCat(where, " has a .cls but no .jpg member"));
  if (!p.cls) return absl::DataLossError(absl::StrCat(where, " has a .jpg but no .cls member"));
  WebDatasetSample s{absl::StrCat(path, ":", p.key), *p.jpeg, 0};
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*p.cls), &s.label) || s.label < 0) {
    return absl::DataLossError(absl::StrCat(where, ": ", p.key, ".cls is not a class index: \"",
                                            absl::StripAsciiWhitespace(p.cls->substr(0, 40)), "\""));
  }
  return sample(s);
}

}  // namespace

absl::Status ReadWebDatasetTar(const std::string& path,
                               const std::function<absl::Status(const WebDatasetSample&)>& sample) {
  std::unique_ptr<archive, ArchiveCloser> a(archive_read_new());
  archive_read_support_format_tar(a.get());
  archive_read_support_filter_all(a.get());  // .tar.gz and friends too.
  if (archive_read_open_filename(a.get(), path.c_str(), 1 << 16) != ARCHIVE_OK) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", archive_error_string(a.get())));
  }
  Pending pending;
  std::string last_member = "(start)";
  for (;;) {
    archive_entry* entry = nullptr;
    const int r = archive_read_next_header(a.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
      return absl::DataLossError(absl::StrCat(path, ": corrupt tar after member ", last_member, ": ",
                                              archive_error_string(a.get())));
    }
    if (archive_entry_filetype(entry) != AE_IFREG) continue;
    const std::string member = archive_entry_pathname(entry);
    last_member = member;
    std::string key, ext;
    SplitMember(member, &key, &ext);
    if (key != pending.key) {
      if (auto s = Emit(path, pending, sample); !s.ok()) return s;
      pending = Pending{key, std::nullopt, std::nullopt};
    }
    const bool is_jpeg = ext == "jpg" || ext == "jpeg";
    if (!is_jpeg && ext != "cls") continue;
    std::string bytes(static_cast<size_t>(archive_entry_size(entry)), '\0');
    const la_ssize_t got = archive_read_data(a.get(), bytes.data(), bytes.size());
    if (got != static_cast<la_ssize_t>(bytes.size())) {
      return absl::DataLossError(absl::StrCat(path, ": member ", member, " is truncated (", got < 0 ? 0 : got,
                                              " of ", bytes.size(), " bytes)"));
    }
    (is_jpeg ? pending.jpeg : pending.cls) = std::move(bytes);
  }
  return Emit(path, pending, sample);
}

}  // namespace nmsparse
