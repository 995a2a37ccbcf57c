// Test data for the end-to-end tests of stored images, made with TurboJPEG's encoder (image_testing.h), so
// that no test needs Python or a download:
//   make_test_images imagefolder ROOT CLASSES PER_CLASS WIDTH HEIGHT   ROOT/{train,val}/class_<k>/<i>.jpg
//                                                                      (val: a quarter as many per class)
//   make_test_images cifar10 DIR TRAIN_RECORDS TEST_RECORDS            CIFAR-10's binary files in DIR
// Each class has its own tint so that a model can tell them apart. Exit codes: 0 ok, 2 usage.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "worker/trainer/data/image_testing.h"

namespace nmsparse {
namespace {

int Usage() {
  std::cerr << "usage: make_test_images imagefolder ROOT CLASSES PER_CLASS WIDTH HEIGHT\n"
            << "       make_test_images cifar10 DIR TRAIN_RECORDS TEST_RECORDS\n";
  return 2;
}

void MakeImageFolder(const std::string& root, int classes, int per_class, int width, int height) {
  for (const auto& [split, count] :
       {std::pair<std::string, int>{"train", per_class}, {"val", per_class / 4}}) {
    for (int k = 0; k < classes; ++k) {
      const std::string dir = absl::StrCat(root, "/", split, "/class_", k);
      MakeDirs(dir);
      for (int i = 0; i < count; ++i) {
        WriteTestFile(absl::StrCat(dir, "/", i, ".jpg"), MakeTestJpeg(width, height, TestJpegKind::kRgb420,
                                                                      1000 * k + i + (split == "val") * 500));
      }
    }
  }
}

// Records of 1 label byte and 3 planes of 32x32: a class tint (label * 25 in the red plane) plus a pattern.
void WriteCifarFile(const std::string& path, int64_t records, uint32_t seed) {
  std::ofstream out(path, std::ios::binary);
  uint32_t state = seed;
  for (int64_t r = 0; r < records; ++r) {
    const auto label = static_cast<uint8_t>(r % 10);
    out.put(static_cast<char>(label));
    for (int c = 0; c < 3; ++c) {
      for (int p = 0; p < 32 * 32; ++p) {
        state = state * 1664525u + 1013904223u;
        const int base = c == 0 ? label * 25 : (p % 32) * 8;
        out.put(static_cast<char>((base + (state >> 28)) & 0xff));
      }
    }
  }
}

void MakeCifar10(const std::string& dir, int64_t train, int64_t test) {
  MakeDirs(dir);
  for (int b = 1; b <= 5; ++b) {
    WriteCifarFile(absl::StrCat(dir, "/data_batch_", b, ".bin"), train / 5 + (b <= train % 5 ? 1 : 0), b);
  }
  WriteCifarFile(dir + "/test_batch.bin", test, 99);
}

}  // namespace
}  // namespace nmsparse

int main(int argc, char** argv) {
  using nmsparse::Usage;
  if (argc < 2) return Usage();
  const std::string mode = argv[1];
  if (mode == "imagefolder" && argc == 7) {
    int v[4];
    for (int i = 0; i < 4; ++i) {
      if (!absl::SimpleAtoi(argv[3 + i], &v[i]) || v[i] <= 0) return Usage();
    }
    nmsparse::MakeImageFolder(argv[2], v[0], v[1], v[2], v[3]);
    return 0;
  }
  if (mode == "cifar10" && argc == 5) {
    int64_t train = 0, test = 0;
    if (!absl::SimpleAtoi(argv[3], &train) || !absl::SimpleAtoi(argv[4], &test) || train < 5 || test < 1)
      return Usage();
    nmsparse::MakeCifar10(argv[2], train, test);
    return 0;
  }
  return Usage();
}
