// nmshard: converts image datasets into nmsparse's uint8 shard format (docs/data-format.md).
//
//   nmshard fashion-mnist --out DIR [--src DIR] [--per-shard N]   both splits of the IDX files
//   nmshard idx --images F --labels F --out DIR --split S [--per-shard N]
//   nmshard ppm --src DIR --out DIR --split S [--per-shard N]      DIR/<class>/*.ppm|*.pgm (binary P6/P5),
//                                                                  classes numbered in sorted order
//   nmshard imagefolder --src ROOT --out DIR --split S [--per-shard N]
//                                        ROOT/S/<class>/*.JPEG into packed JPEG shards S-NNNNN.nmjpeg
//   nmshard webdataset --src TAR|DIR --out DIR --split S --num-classes K [--per-shard N]
//                                        WebDataset tar shards (<key>.jpg + <key>.cls; DIR: its *.tar,
//                                        sorted) into packed JPEG shards
//   nmshard info DIR                                               shape, classes and counts per split
// Exit codes: 0 ok, 2 usage, 3 data error.
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "worker/trainer/data/directory_listing.h"
#include "worker/trainer/data/idx_reader.h"
#include "worker/trainer/data/image_folder_dataset.h"
#include "worker/trainer/data/jpeg_decoder.h"
#include "worker/trainer/data/packed_jpeg_dataset.h"
#include "worker/trainer/data/packed_jpeg_writer.h"
#include "worker/trainer/data/shard_dataset.h"
#include "worker/trainer/data/webdataset_reader.h"

namespace nmsparse {
namespace {

constexpr int kUsage = 2;
constexpr int kDataError = 3;

int Usage(const std::string& why) {
  std::cerr << "nmshard: " << why << "\n"
            << "usage: nmshard fashion-mnist --out DIR [--src DIR] [--per-shard N]\n"
            << "       nmshard idx --images FILE --labels FILE --out DIR --split train|eval [--per-shard N]\n"
            << "       nmshard ppm --src DIR --out DIR --split train|eval [--per-shard N]\n"
            << "       nmshard imagefolder --src ROOT --out DIR --split S [--per-shard N]\n"
            << "       nmshard webdataset --src TAR|DIR --out DIR --split S --num-classes K [--per-shard N]\n"
            << "       nmshard info DIR\n";
  return kUsage;
}

absl::Status WriteDataset(const Dataset& data, const std::string& out, const std::string& split,
                          int64_t per_shard) {
  ShardWriter writer(out, split, data.shape(), data.num_classes(), per_shard);
  std::vector<uint8_t> image(data.shape().numel());
  for (int64_t i = 0; i < data.size(); ++i) {
    const int64_t label = data.Read(i, image.data());
    if (auto s = writer.Add(image.data(), label); !s.ok()) return s;
  }
  if (auto s = writer.Finish(); !s.ok()) return s;
  std::cerr << "nmshard: wrote " << writer.written() << " " << split << " images to " << out << "\n";
  return absl::OkStatus();
}

// Reads a binary PGM (P5) or PPM (P6) with maxval 255 as CHW bytes.
absl::Status ReadPnm(const std::string& path, ImageShape* shape, std::vector<uint8_t>* chw) {
  std::ifstream in(path, std::ios::binary);
  std::string magic;
  int w = 0, h = 0, maxval = 0;
  in >> magic >> w >> h >> maxval;
  in.get();
  if (!in || (magic != "P5" && magic != "P6") || maxval != 255 || w <= 0 || h <= 0) {
    return absl::DataLossError(absl::StrCat(path, ": not a binary 8-bit PGM (P5) or PPM (P6)"));
  }
  const int c = magic == "P6" ? 3 : 1;
  std::vector<uint8_t> hwc(static_cast<size_t>(w) * h * c);
  if (!in.read(reinterpret_cast<char*>(hwc.data()), hwc.size())) {
    return absl::DataLossError(absl::StrCat(path, ": truncated pixel data"));
  }
  *shape = {c, h, w};
  chw->resize(hwc.size());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int k = 0; k < c; ++k) (*chw)[(k * h + y) * w + x] = hwc[(y * w + x) * c + k];
  return absl::OkStatus();
}

absl::Status ConvertPnmFolder(const std::string& src, const std::string& out, const std::string& split,
                              int64_t per_shard) {
  std::vector<std::string> classes;
  for (const auto& name : SortedVisibleNames(src)) {
    struct stat st;
    if (stat((src + "/" + name).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) classes.push_back(name);
  }
  if (classes.empty()) return absl::NotFoundError(absl::StrCat("no class folders in ", src));
  std::unique_ptr<ShardWriter> writer;
  ImageShape first;
  for (size_t label = 0; label < classes.size(); ++label) {
    const std::string dir = src + "/" + classes[label];
    for (const auto& file : SortedVisibleNames(dir)) {
      if (!absl::EndsWith(file, ".ppm") && !absl::EndsWith(file, ".pgm")) continue;
      ImageShape shape;
      std::vector<uint8_t> chw;
      if (auto s = ReadPnm(dir + "/" + file, &shape, &chw); !s.ok()) return s;
      if (!writer) {
        first = shape;
        writer =
            std::make_unique<ShardWriter>(out, split, shape, static_cast<int>(classes.size()), per_shard);
      } else if (shape.channels != first.channels || shape.height != first.height ||
                 shape.width != first.width) {
        return absl::DataLossError(absl::StrCat(dir, "/", file, ": size differs from the first image"));
      }
      if (auto s = writer->Add(chw.data(), static_cast<int64_t>(label)); !s.ok()) return s;
    }
  }
  if (!writer) return absl::NotFoundError(absl::StrCat("no .ppm/.pgm images under ", src));
  if (auto s = writer->Finish(); !s.ok()) return s;
  std::cerr << "nmshard: wrote " << writer->written() << " " << split << " images of " << classes.size()
            << " classes to " << out << "\n";
  return absl::OkStatus();
}

constexpr int64_t kProgressEvery = 10000;

// Adds one JPEG, recorded as `name`, to `writer` after checking its header (a message names `where`), so
// that a converted shard holds only JPEGs.
absl::Status AddJpeg(PackedJpegWriter& writer, const std::string& jpeg, int64_t label,
                     const std::string& where, const std::string& name) {
  auto header = ReadJpegHeader(reinterpret_cast<const uint8_t*>(jpeg.data()), jpeg.size(), where);
  if (!header.ok()) return header.status();
  if (auto s = writer.Add(jpeg, label, name); !s.ok()) return s;
  if (writer.written() % kProgressEvery == 0) std::cerr << "nmshard: " << writer.written() << " images\n";
  return absl::OkStatus();
}

absl::Status Finish(PackedJpegWriter& writer, const std::string& split, const std::string& out) {
  if (auto s = writer.Finish(); !s.ok()) return s;
  std::cerr << "nmshard: wrote " << writer.written() << " " << split << " images in " << writer.shards()
            << " packed shards to " << out << "\n";
  return absl::OkStatus();
}

absl::Status ConvertImageFolder(const std::string& src, const std::string& out, const std::string& split,
                                int64_t per_shard) {
  auto folder = ImageFolderDataset::Open(src, split);
  if (!folder.ok()) return folder.status();
  for (const auto& warning : (*folder)->warnings()) std::cerr << "nmshard: warning: " << warning << "\n";
  PackedJpegWriter writer(out, split, (*folder)->classes(), per_shard);
  const std::string prefix = src + "/" + split + "/";
  for (const auto& entry : (*folder)->entries()) {
    auto jpeg = ReadWholeFile(entry.path);
    if (!jpeg.ok()) return jpeg.status();
    // The record's name is its path below the split, as in the ImageFolder.
    const std::string name =
        absl::StartsWith(entry.path, prefix) ? entry.path.substr(prefix.size()) : entry.path;
    if (auto s = AddJpeg(writer, *jpeg, entry.label, entry.path, name); !s.ok()) return s;
  }
  return Finish(writer, split, out);
}

absl::Status ConvertWebDataset(const std::string& src, const std::string& out, const std::string& split,
                               int num_classes, int64_t per_shard) {
  std::vector<std::string> tars;
  struct stat st;
  if (stat(src.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    for (const auto& name : SortedVisibleNames(src)) {
      if (absl::EndsWith(name, ".tar")) tars.push_back(src + "/" + name);
    }
    if (tars.empty()) return absl::NotFoundError(absl::StrCat("no .tar files in ", src));
  } else {
    tars.push_back(src);
  }
  std::vector<std::string> classes;
  for (int i = 0; i < num_classes; ++i) classes.push_back(absl::StrCat(i));
  PackedJpegWriter writer(out, split, classes, per_shard);
  for (const auto& tar : tars) {
    auto status = ReadWebDatasetTar(tar, [&](const WebDatasetSample& sample) {
      if (sample.label >= num_classes) {
        return absl::DataLossError(absl::StrCat(sample.key, ".cls: class ", sample.label,
                                                " is not below --num-classes ", num_classes));
      }
      return AddJpeg(writer, sample.jpeg, sample.label, sample.key, sample.key);
    });
    if (!status.ok()) return status;
  }
  return Finish(writer, split, out);
}

int Info(const std::string& dir) {
  bool any = false;
  for (const char* split : {"train", "eval"}) {
    auto ds = ShardDataset::Open(dir, split);
    if (!ds.ok()) continue;
    any = true;
    const auto s = (*ds)->shape();
    std::cout << split << ": " << (*ds)->size() << " images " << s.channels << "x" << s.height << "x"
              << s.width << ", " << (*ds)->num_classes() << " classes\n";
  }
  for (const char* split : {"train", "val", "eval"}) {
    auto ds = PackedJpegDataset::Open(dir, split);
    if (!ds.ok()) continue;
    any = true;
    std::cout << split << ": " << (*ds)->size() << " packed JPEGs, " << (*ds)->num_classes() << " classes\n";
  }
  if (!any) {
    std::cerr << "nmshard: no shards in " << dir << "\n";
    return kDataError;
  }
  return 0;
}

int Main(int argc, char** argv) {
  if (argc < 2) return Usage("missing command");
  const std::string command = argv[1];
  if (command == "info") return argc == 3 ? Info(argv[2]) : Usage("info takes one directory");
  std::map<std::string, std::string> flags;
  for (int i = 2; i < argc; i += 2) {
    const std::string key = argv[i];
    if (!absl::StartsWith(key, "--") || i + 1 >= argc) return Usage("bad argument " + key);
    flags[key.substr(2)] = argv[i + 1];
  }
  const std::string out = flags["out"];
  if (out.empty()) return Usage("--out is required");
  int64_t per_shard = 10000;
  if (flags.count("per-shard") && (!absl::SimpleAtoi(flags["per-shard"], &per_shard) || per_shard <= 0)) {
    return Usage("--per-shard must be a positive integer");
  }
  mkdir(out.c_str(), 0755);
  absl::Status status;
  if (command == "fashion-mnist") {
    for (bool train : {true, false}) {
      auto data = LoadFashionMnist(flags["src"], train);
      status = data.ok() ? WriteDataset(**data, out, train ? "train" : "eval", per_shard) : data.status();
      if (!status.ok()) break;
    }
  } else if (command == "idx") {
    const std::string split = flags["split"];
    if (split != "train" && split != "eval") return Usage("--split must be train or eval");
    auto data = LoadIdxDataset(flags["images"], flags["labels"]);
    status = data.ok() ? WriteDataset(**data, out, split, per_shard) : data.status();
  } else if (command == "ppm") {
    const std::string split = flags["split"];
    if (split != "train" && split != "eval") return Usage("--split must be train or eval");
    status = ConvertPnmFolder(flags["src"], out, split, per_shard);
  } else if (command == "imagefolder" || command == "webdataset") {
    const std::string split = flags["split"];
    if (split.empty() || split.find('/') != std::string::npos) return Usage("--split must name a split");
    if (flags["src"].empty()) return Usage("--src is required");
    if (command == "imagefolder") {
      status = ConvertImageFolder(flags["src"], out, split, per_shard);
    } else {
      int num_classes = 0;
      if (!absl::SimpleAtoi(flags["num-classes"], &num_classes) || num_classes <= 0) {
        return Usage("--num-classes must be a positive integer");
      }
      status = ConvertWebDataset(flags["src"], out, split, num_classes, per_shard);
    }
  } else {
    return Usage("unknown command " + command);
  }
  if (!status.ok()) {
    std::cerr << "nmshard: " << status.message() << "\n";
    return kDataError;
  }
  return 0;
}

}  // namespace
}  // namespace nmsparse

int main(int argc, char** argv) { return nmsparse::Main(argc, argv); }
