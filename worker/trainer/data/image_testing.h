// Test data for the image readers, made by the tests: JPEGs from TurboJPEG's encoder, files, folders and
// WebDataset tars (libarchive).
#ifndef NMSPARSE_WORKER_TRAINER_DATA_IMAGE_TESTING_H_
#define NMSPARSE_WORKER_TRAINER_DATA_IMAGE_TESTING_H_

#include <string>
#include <utility>
#include <vector>

namespace nmsparse {

enum class TestJpegKind { kRgb420, kRgb444, kGrey, kCmyk, kProgressive };

// A JPEG of a deterministic pattern (gradients and texture; `seed` varies it).
std::string MakeTestJpeg(int width, int height, TestJpegKind kind = TestJpegKind::kRgb420, int seed = 0);
// The 8-byte PNG signature and a header: a PNG as far as a sniffer can tell.
std::string PngBytes();

// A new empty directory under the test's temporary directory.
std::string NewTestDir();
void MakeDirs(const std::string& path);
void WriteTestFile(const std::string& path, const std::string& bytes);
// A tar at `path` with these members (name, contents), in order.
void WriteTestTar(const std::string& path, const std::vector<std::pair<std::string, std::string>>& members);

}  // namespace nmsparse

#endif  // NMSPARSE_WORKER_TRAINER_DATA_IMAGE_TESTING_H_
