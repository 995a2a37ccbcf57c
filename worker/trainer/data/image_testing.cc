#include "worker/trainer/data/image_testing.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <turbojpeg.h>

#include <cstdlib>
#include <fstream>
#include <vector>

namespace nmsparse {

std::string MakeTestJpeg(int width, int height, TestJpegKind kind, int seed) {
  const bool grey = kind == TestJpegKind::kGrey, cmyk = kind == TestJpegKind::kCmyk;
  const int channels = grey ? 1 : cmyk ? 4 : 3;
  std::vector<unsigned char> pixels(static_cast<size_t>(width) * height * channels);
  uint32_t state = 12345 + seed;
  for (size_t i = 0; i < pixels.size(); ++i) {
    state = state * 1103515245u + 12345u;
    const int x = static_cast<int>(i / channels % width), y = static_cast<int>(i / channels / width);
    pixels[i] = static_cast<unsigned char>(
        (x * 11 + y * 7 + (i % channels) * 60 + seed * 30 + (state >> 16) % 48) % 256);
  }
  const int format = grey ? TJPF_GRAY : cmyk ? TJPF_CMYK : TJPF_RGB;
  const int subsampling = grey ? TJSAMP_GRAY : kind == TestJpegKind::kRgb444 ? TJSAMP_444 : TJSAMP_420;
  const int flags = kind == TestJpegKind::kProgressive ? TJFLAG_PROGRESSIVE : 0;
  tjhandle handle = tjInitCompress();
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  const int status =
      tjCompress2(handle, pixels.data(), width, 0, height, format, &jpeg, &size, subsampling, 90, flags);
  EXPECT_EQ(status, 0) << tjGetErrorStr2(handle);
  std::string bytes(reinterpret_cast<char*>(jpeg), size);
  tjFree(jpeg);
  tjDestroy(handle);
  return bytes;
}

std::string PngBytes() { return std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16); }

std::string NewTestDir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/imagesXXXXXX";
  EXPECT_NE(mkdtemp(pattern.data()), nullptr);
  return pattern;
}

void MakeDirs(const std::string& path) {
  for (size_t at = path.find('/', 1);; at = path.find('/', at + 1)) {
    mkdir(path.substr(0, at).c_str(), 0755);
    if (at == std::string::npos) break;
  }
}

void WriteTestFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  ASSERT_TRUE(out.good()) << path;
}

void WriteTestTar(const std::string& path, const std::vector<std::pair<std::string, std::string>>& members) {
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK) << path;
  for (const auto& [name, contents] : members) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, name.c_str());
    archive_entry_set_size(entry, static_cast<la_int64_t>(contents.size()));
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    archive_write_header(a, entry);
    archive_write_data(a, contents.data(), contents.size());
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
}

}  // namespace nmsparse
