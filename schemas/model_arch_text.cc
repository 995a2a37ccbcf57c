#include "schemas/model_arch_text.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace nmsparse {
namespace {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

std::string Bool(bool b) { return b ? "true" : "false"; }
std::string List(const std::vector<int>& v) { return absl::StrCat("[", absl::StrJoin(v, ", "), "]"); }

KeyValues ArchKeyValues(const ModelArch& a) {
  const bool vit = a.family == ModelFamily::kVit;
  KeyValues kv = {{"family", vit ? "vit" : "swinv2"},           {"img_size", absl::StrCat(a.img_size)},
                  {"patch_size", absl::StrCat(a.patch_size)},   {"in_chans", absl::StrCat(a.in_chans)},
                  {"num_classes", absl::StrCat(a.num_classes)}, {"embed_dim", absl::StrCat(a.embed_dim)}};
  if (vit) {
    kv.insert(kv.end(), {{"depth", absl::StrCat(a.depth)}, {"num_heads", absl::StrCat(a.num_heads)}});
  } else {
    kv.insert(kv.end(), {{"depths", List(a.depths)},
                         {"num_heads", List(a.stage_heads)},
                         {"window_size", absl::StrCat(a.window_size)}});
    // Only where given, so that the text of every other architecture stays as it was.
    for (int s : a.pretrained_window_sizes) {
      if (s != 0) {
        kv.emplace_back("pretrained_window_sizes", List(a.pretrained_window_sizes));
        break;
      }
    }
  }
  kv.insert(kv.end(), {{"mlp_ratio", absl::StrFormat("%.17g", a.mlp_ratio)}, {"qkv_bias", Bool(a.qkv_bias)}});
  if (vit) kv.emplace_back("class_token", Bool(a.class_token));
  return kv;
}

KeyValues ParseText(const std::string& text) {
  KeyValues kv;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::pair<std::string, std::string> p = absl::StrSplit(line, absl::MaxSplits(": ", 1));
    kv.push_back(std::move(p));
  }
  return kv;
}

const std::string* Find(const KeyValues& kv, const std::string& key) {
  for (const auto& [k, v] : kv) {
    if (k == key) return &v;
  }
  return nullptr;
}

}  // namespace

std::string ArchitectureText(const ModelArch& arch) {
  std::string text;
  for (const auto& [key, value] : ArchKeyValues(arch)) absl::StrAppend(&text, key, ": ", value, "\n");
  return text;
}

std::vector<ArchitectureDifference> ArchitectureDifferences(const std::string& before,
                                                            const std::string& after) {
  const KeyValues b = ParseText(before), a = ParseText(after);
  std::vector<ArchitectureDifference> out;
  for (const auto& [key, value] : b) {
    const std::string* other = Find(a, key);
    if (other == nullptr || *other != value)
      out.push_back({"model." + key, value, other ? *other : "(none)"});
  }
  for (const auto& [key, value] : a) {
    if (Find(b, key) == nullptr) out.push_back({"model." + key, "(none)", value});
  }
  return out;
}

std::string DescribeDifferences(const std::vector<ArchitectureDifference>& differences,
                                const std::string& before_name) {
  return absl::StrJoin(differences, "; ", [&](std::string* out, const ArchitectureDifference& d) {
    absl::StrAppend(out, d.key, ": ", d.after, " differs from ", before_name, " ", d.before);
  });
}

}  // namespace nmsparse
