#include "worker/agent/slots.h"

#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace nmsparse::agent {
namespace {

std::string RunCommand(const char* command) {
  std::string output;
  FILE* pipe = popen(command, "r");
  if (pipe == nullptr) return output;
  char buffer[1024];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  if (pclose(pipe) != 0) output.clear();
  return output;
}

}  // namespace

std::vector<GpuInfo> ParseNvidiaSmiQuery(absl::string_view output) {
  std::vector<GpuInfo> gpus;
  for (absl::string_view line : absl::StrSplit(output, '\n', absl::SkipWhitespace())) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ',');
    if (fields.size() < 3) continue;
    GpuInfo gpu;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(fields[0]), &gpu.device)) continue;
    gpu.name = std::string(absl::StripAsciiWhitespace(fields[1]));
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(fields[2]), &gpu.memory_mb)) gpu.memory_mb = 0;
    gpus.push_back(gpu);
  }
  return gpus;
}

std::vector<GpuInfo> ParseNvidiaSmiList(absl::string_view output) {
  std::vector<GpuInfo> gpus;
  for (absl::string_view line : absl::StrSplit(output, '\n', absl::SkipWhitespace())) {
    line = absl::StripAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, "GPU ")) continue;
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    GpuInfo gpu;
    if (!absl::SimpleAtoi(line.substr(0, colon), &gpu.device)) continue;
    absl::string_view name = line.substr(colon + 1);
    const size_t uuid = name.find(" (UUID");
    if (uuid != absl::string_view::npos) name = name.substr(0, uuid);
    gpu.name = std::string(absl::StripAsciiWhitespace(name));
    gpus.push_back(gpu);
  }
  return gpus;
}

std::vector<GpuInfo> DetectGpus() {
  std::vector<GpuInfo> gpus = ParseNvidiaSmiQuery(
      RunCommand("nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader,nounits 2>/dev/null"));
  if (gpus.empty()) gpus = ParseNvidiaSmiList(RunCommand("nvidia-smi -L 2>/dev/null"));
  return gpus;
}

absl::StatusOr<NodeSlots> BuildSlots(const std::string& gpus_flag, int cpu_slots,
                                     const std::vector<GpuInfo>& detected) {
  std::vector<GpuInfo> gpus;
  const std::string flag(absl::StripAsciiWhitespace(gpus_flag));
  auto described = [&](int device) {
    for (const GpuInfo& g : detected) {
      if (g.device == device) return g;
    }
    return GpuInfo{device, "gpu", 0};
  };
  int count = 0;
  if (flag.empty() || flag == "auto") {
    gpus = detected;
  } else if (flag == "none") {
  } else if (flag.find(',') == std::string::npos && absl::SimpleAtoi(flag, &count)) {
    if (count < 0) return absl::InvalidArgumentError(absl::StrCat("--gpus: negative count ", flag));
    for (int i = 0; i < count; ++i)
      gpus.push_back(i < static_cast<int>(detected.size()) ? detected[i] : described(i));
  } else {
    for (absl::string_view item : absl::StrSplit(flag, ',')) {
      int device = 0;
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(item), &device) || device < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("--gpus: '", flag, "' is not a count or a list of CUDA device numbers"));
      }
      gpus.push_back(described(device));
    }
  }
  if (cpu_slots < 0) cpu_slots = gpus.empty() ? 1 : 0;

  NodeSlots node;
  for (const GpuInfo& gpu : gpus) {
    v1::Slot slot;
    slot.set_index(static_cast<uint32_t>(node.slots.size()));
    slot.set_kind(v1::Slot::GPU);
    slot.set_name(gpu.name);
    slot.set_memory_mb(gpu.memory_mb);
    node.slots.push_back(slot);
    node.devices.push_back(gpu.device);
  }
  for (int i = 0; i < cpu_slots; ++i) {
    v1::Slot slot;
    slot.set_index(static_cast<uint32_t>(node.slots.size()));
    slot.set_kind(v1::Slot::CPU);
    slot.set_name("cpu");
    node.slots.push_back(slot);
    node.devices.push_back(-1);
  }
  if (node.slots.empty()) return absl::InvalidArgumentError("no slots: give --gpus or --cpu-slots");
  return node;
}

}  // namespace nmsparse::agent
