#include "worker/trainer/device/device_choice.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "contract/trainer_flags.h"

namespace nmsparse {
namespace {

std::string VisibleText(const char* cuda_visible_devices) {
  return cuda_visible_devices == nullptr ? "CUDA_VISIBLE_DEVICES unset"
                                         : absl::StrCat("CUDA_VISIBLE_DEVICES='", cuda_visible_devices, "'");
}

}  // namespace

absl::StatusOr<DeviceChoice> ChooseDevice(const std::string& flag, int local_rank, int visible_gpus,
                                          const char* cuda_visible_devices) {
  DeviceChoice choice;
  if (flag == contract::kDeviceCpu) return choice;
  absl::string_view rest(flag);
  if (!absl::ConsumePrefix(&rest, contract::kDeviceCuda)) {
    return absl::InvalidArgumentError(absl::StrCat("--device: '", flag, "' is not cpu, cuda or cuda:K"));
  }
  choice.cuda = true;
  choice.index = local_rank;
  if (!rest.empty() &&
      (!absl::ConsumePrefix(&rest, ":") || !absl::SimpleAtoi(rest, &choice.index) || choice.index < 0)) {
    return absl::InvalidArgumentError(absl::StrCat("--device: '", flag, "' is not cpu, cuda or cuda:K"));
  }
  if (visible_gpus <= 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--device ", flag, ": no GPU is usable (this LibTorch has no CUDA, or no GPU is visible; ",
        VisibleText(cuda_visible_devices), "); nmtrain does not fall back to the CPU"));
  }
  if (choice.index >= visible_gpus) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--device ", flag, ": rank's GPU cuda:", choice.index, " (LOCAL_RANK ", local_rank, ") but only ",
        visible_gpus, " GPU(s) are visible (", VisibleText(cuda_visible_devices), ")"));
  }
  choice.physical = absl::StrCat(choice.index);
  if (cuda_visible_devices != nullptr) {
    std::vector<std::string> listed = absl::StrSplit(cuda_visible_devices, ',', absl::SkipWhitespace());
    if (choice.index < static_cast<int>(listed.size())) {
      choice.physical = std::string(absl::StripAsciiWhitespace(listed[choice.index]));
    }
  }
  return choice;
}

std::string DescribeDevice(const DeviceChoice& choice, const std::string& gpu_name) {
  if (!choice.cuda) return contract::kDeviceCpu;
  std::string text = absl::StrCat(contract::kDeviceCuda, ":", choice.index);
  if (choice.physical != absl::StrCat(choice.index)) absl::StrAppend(&text, " (GPU ", choice.physical, ")");
  if (!gpu_name.empty()) absl::StrAppend(&text, " ", gpu_name);
  return text;
}

}  // namespace nmsparse
