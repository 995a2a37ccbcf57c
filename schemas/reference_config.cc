#include "schemas/reference_config.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/did_you_mean.h"
#include "schemas/reference_key_table.h"
#include "schemas/spec_keys.h"
#include "schemas/yaml_util.h"

namespace nmsparse {
namespace {

using yaml_util::Error;

// Keys read by hand below (model, dataset, opt, opt_betas, clip_mode, lr and its batch-size scaling, amp,
// model_kwargs, cutmix_minmax, gp, input_size; and color_jitter when null).
const std::set<std::string>& SpecialKeys() {
  static const auto* keys = new std::set<std::string>{
      "model",         "dataset",      "opt",           "opt_betas", "clip_mode", "lr",
      "lr_base",       "lr_base_size", "lr_base_scale", "amp",       "amp_dtype", "model_kwargs",
      "cutmix_minmax", "gp",           "input_size",    "pretrained"};
  return *keys;
}

// The aliases of the experiment's key table (the flat train.py key of a nested key path), special keys
// included: {flat key, key path}.
const std::vector<std::pair<std::string, std::string>>& Aliases() {
  static const auto* aliases = [] {
    auto* out = new std::vector<std::pair<std::string, std::string>>;
    for (const KeyInfo& key : ExperimentKeys().Infos()) {
      if (!key.alias.empty()) out->emplace_back(key.alias, key.name);
      for (const KeyInfo& sub : key.keys) {
        if (!sub.alias.empty()) out->emplace_back(sub.alias, key.name + "." + sub.name);
      }
    }
    return out;
  }();
  return *aliases;
}

// train.py keys mapped one to one onto a nested key path: the aliases that are not read by hand.
const std::map<std::string, std::string>& MappedKeys() {
  static const auto* keys = [] {
    auto* out = new std::map<std::string, std::string>;
    for (const auto& [flat, path] : Aliases()) {
      if (SpecialKeys().count(flat) == 0) (*out)[flat] = path;
    }
    return out;
  }();
  return *keys;
}

bool SameScalar(const std::string& a, const std::string& b) {
  char* end_a = nullptr;
  char* end_b = nullptr;
  const double da = std::strtod(a.c_str(), &end_a);
  const double db = std::strtod(b.c_str(), &end_b);
  if (!a.empty() && !b.empty() && *end_a == '\0' && *end_b == '\0') return da == db;
  return absl::EqualsIgnoreCase(a, b);
}

// YAML values equal up to number formatting and the case of booleans.
bool SameValue(const YAML::Node& a, const YAML::Node& b) {
  if (yaml_util::IsNullish(a) || yaml_util::IsNullish(b))
    return yaml_util::IsNullish(a) && yaml_util::IsNullish(b);
  if (a.IsScalar() && b.IsScalar()) return SameScalar(a.Scalar(), b.Scalar());
  if (a.IsSequence() && b.IsSequence() && a.size() == b.size()) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (!SameValue(a[i], b[i])) return false;
    }
    return true;
  }
  return false;
}

// A key that maps onto no spec key: harmless, or at timm's default (null included), changes nothing. Any
// other value would change the training's mathematics: an error.
absl::Status CheckUnmappedKey(const UnmappedReferenceKey& unmapped, const YAML::Node& key_node,
                              const YAML::Node& value) {
  if (unmapped.use == ReferenceKeyUse::kHarmless || yaml_util::IsNullish(value) ||
      SameValue(value, YAML::Load(unmapped.timm_default))) {
    return absl::OkStatus();
  }
  return Error(key_node, unmapped.key,
               "value " + yaml_util::Describe(value) + " is not implemented (" + unmapped.why +
                   "); only timm's default " + unmapped.timm_default + " or null is accepted");
}

// Names a key that is accepted and ignored, and why that changes nothing trained (issue 40: a config's
// `log_wandb: true` must not be dropped without a word). A key at timm's default is not ignored: it is what
// nmsparse does.
void NoteIgnoredKey(const UnmappedReferenceKey& unmapped, const YAML::Node& key_node, const YAML::Node& value,
                    std::vector<std::string>* warnings) {
  if (warnings == nullptr || unmapped.use != ReferenceKeyUse::kHarmless || yaml_util::IsNullish(value))
    return;
  const int line = yaml_util::Line(key_node);
  warnings->push_back(absl::StrCat(line > 0 ? absl::StrCat("line ", line, ": ") : "", unmapped.key, ": ",
                                   yaml_util::Describe(value), " is ignored (", unmapped.why,
                                   "): it does not change what is trained"));
}

void Set(YAML::Node* nested, const std::string& path, const YAML::Node& value) {
  const size_t dot = path.find('.');
  if (dot == std::string::npos) {
    (*nested)[path] = value;
  } else {
    (*nested)[path.substr(0, dot)][path.substr(dot + 1)] = value;
  }
}

// train.py's learning rate: lr, or lr_base scaled by the global batch over lr_base_size.
absl::StatusOr<YAML::Node> ReferenceLr(const YAML::Node& node) {
  if (!yaml_util::IsNullish(node["lr"])) return node["lr"];
  if (yaml_util::IsNullish(node["lr_base"])) return YAML::Node();  // Neither: nmsparse's default lr.
  auto base = yaml_util::ReadDouble(node["lr_base"], "lr_base", 0.0);
  if (!base.ok()) return base.status();
  double base_size = 256, batch = 128, accum = 1;  // train.py's defaults.
  for (auto [key, out] : {std::pair<const char*, double*>{"lr_base_size", &base_size},
                          {"batch_size", &batch},
                          {"grad_accum_steps", &accum}}) {
    if (yaml_util::IsNullish(node[key])) continue;
    auto v = yaml_util::ReadDouble(node[key], key, 1.0);
    if (!v.ok()) return v.status();
    *out = *v;
  }
  std::string scale;
  if (!yaml_util::IsNullish(node["lr_base_scale"])) {
    auto s = yaml_util::ReadString(node["lr_base_scale"], "lr_base_scale");
    if (!s.ok()) return s.status();
    scale = absl::AsciiStrToLower(*s);
  }
  if (scale.empty()) {  // train.py: sqrt for adaptive optimizers (ada*, lamb), linear otherwise.
    const std::string opt =
        yaml_util::IsNullish(node["opt"]) ? "sgd" : absl::AsciiStrToLower(node["opt"].as<std::string>());
    scale = absl::StrContains(opt, "ada") || absl::StrContains(opt, "lamb") ? "sqrt" : "linear";
  }
  if (scale != "sqrt" && scale != "linear") {
    return Error(node["lr_base_scale"], "lr_base_scale",
                 "value '" + scale + "' is not one of sqrt, linear (or '' for train.py's choice)");
  }
  double ratio = batch * accum / base_size;
  if (scale == "sqrt") ratio = std::sqrt(ratio);
  return YAML::Node(yaml_util::FormatDouble(*base * ratio));
}

// timm's pretrained: true downloads the model's published weights, which nmsparse never does: it is accepted
// with initial_checkpoint (which train.py then loads over them), and refused without.
absl::Status MapPretrained(const YAML::Node& node) {
  if (yaml_util::IsNullish(node["pretrained"])) return absl::OkStatus();
  auto pretrained = yaml_util::ReadBool(node["pretrained"], "pretrained");
  if (!pretrained.ok()) return pretrained.status();
  if (!*pretrained || !yaml_util::IsNullish(node["initial_checkpoint"])) return absl::OkStatus();
  return Error(node["pretrained"], "pretrained",
               "value true needs initial_checkpoint: PATH (a safetensors file or a timm folder): nmsparse "
               "downloads no weights (docs/interop.md)");
}

// train.py's mixed precision: amp with amp_dtype bfloat16 is nmsparse's bf16 autocast, with float16
// (train.py's default) its fp16 autocast with GradScaler's loss scaling, as train.py's NativeScaler. Other
// dtypes are refused (train.py would silently read them as float16). Without amp, amp_dtype changes nothing.
absl::Status MapAmp(const YAML::Node& node, YAML::Node* nested) {
  if (yaml_util::IsNullish(node["amp"])) return absl::OkStatus();
  auto amp = yaml_util::ReadBool(node["amp"], "amp");
  if (!amp.ok()) return amp.status();
  if (!*amp) return absl::OkStatus();
  std::string dtype = "float16";  // train.py's default.
  if (!yaml_util::IsNullish(node["amp_dtype"])) {
    auto text = yaml_util::ReadString(node["amp_dtype"], "amp_dtype");
    if (!text.ok()) return text.status();
    dtype = *text;
  }
  const std::string lower = absl::AsciiStrToLower(dtype);
  if (lower == "bfloat16") {
    (*nested)["resources"]["precision"] = "bf16";
  } else if (lower == "float16") {
    (*nested)["resources"]["precision"] = "fp16";  // With train.py's NativeScaler (GradScaler) loss scaling.
  } else {
    return Error(node["amp_dtype"], "amp_dtype", "value '" + dtype + "' is not float16 or bfloat16");
  }
  return absl::OkStatus();
}

// model_kwargs (timm's create_model arguments): each key onto the model key whose alias is model_kwargs.K.
absl::Status MapModelKwargs(const YAML::Node& kwargs, YAML::Node* nested) {
  if (yaml_util::IsNullish(kwargs)) return absl::OkStatus();
  if (!kwargs.IsMap()) {
    return Error(kwargs, "model_kwargs",
                 "value " + yaml_util::Describe(kwargs) + " is not a map of model arguments");
  }
  std::vector<std::string> known;
  for (const auto& [flat, path] : Aliases()) {
    if (absl::StartsWith(flat, "model_kwargs.")) known.push_back(flat.substr(13));
  }
  for (const auto& kv : kwargs) {
    const std::string name = kv.first.Scalar();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return Error(kv.first, "model_kwargs." + name,
                   "unknown model argument; known: " + absl::StrJoin(known, ", "));
    }
    (*nested)["model"][name] = kv.second;
  }
  return absl::OkStatus();
}

// timm's image keys that a mapping cannot say: color_jitter null is timm's None (no ColorJitter, where an
// absent key is train.py's 0.4), and input_size [C, H, W] sets the model's channels and (square) size.
absl::Status MapImageKeys(const YAML::Node& node, YAML::Node* nested) {
  const YAML::Node jitter = node["color_jitter"];
  if (jitter.IsDefined() && yaml_util::IsNullish(jitter)) (*nested)["data"]["color_jitter"] = 0;
  const YAML::Node size = node["input_size"];
  if (yaml_util::IsNullish(size)) return absl::OkStatus();
  if (!size.IsSequence() || size.size() != 3) {
    return Error(size, "input_size", "value " + yaml_util::Describe(size) + " is not a list [C, H, W]");
  }
  if (size[1].Scalar() != size[2].Scalar()) {
    return Error(size, "input_size",
                 "value " + yaml_util::Describe(size) + " is not square: nmsparse's models take H = W");
  }
  (*nested)["model"]["in_chans"] = size[0];
  (*nested)["model"]["img_size"] = size[1];
  return absl::OkStatus();
}

// gp, timm's global pool (null: the model's own): token or avg, nmsparse's two, onto model.global_pool,
// which the model then checks (SwinV2 pools by avg; a ViT by token with its class token). model_kwargs'
// global_pool wins, as in train.py, where model_kwargs override the arguments.
absl::Status MapGlobalPool(const YAML::Node& node, YAML::Node* nested) {
  if (yaml_util::IsNullish(node["gp"])) return absl::OkStatus();
  auto gp = yaml_util::ReadString(node["gp"], "gp");
  if (!gp.ok()) return gp.status();
  const std::string pool = absl::AsciiStrToLower(*gp);
  if (pool != "token" && pool != "avg") {
    return Error(node["gp"], "gp",
                 "value '" + *gp +
                     "' is not implemented: nmsparse's models pool by token or avg (null: the "
                     "model's own)");
  }
  if (!(*nested)["model"]["global_pool"]) (*nested)["model"]["global_pool"] = pool;
  return absl::OkStatus();
}

absl::Status MapSpecialKeys(const YAML::Node& node, YAML::Node* nested, std::vector<std::string>* warnings) {
  if (auto st = MapImageKeys(node, nested); !st.ok()) return st;
  // train.py's scheduler when none is named: cosine (nmsparse's own default, warmup_cosine, is no train.py
  // value).
  if (yaml_util::IsNullish(node["sched"])) (*nested)["schedule"]["sched"] = "cosine";
  if (auto st = MapAmp(node, nested); !st.ok()) return st;
  if (auto st = MapPretrained(node); !st.ok()) return st;
  if (auto st = MapModelKwargs(node["model_kwargs"], nested); !st.ok()) return st;
  auto name = yaml_util::ReadString(node["model"], "model");
  if (!name.ok()) return name.status();
  (*nested)["model"]["name"] = node["model"];
  if (auto st = MapGlobalPool(node, nested); !st.ok()) return st;
  if (!yaml_util::IsNullish(node["opt"])) {
    auto opt = yaml_util::ReadString(node["opt"], "opt");
    if (!opt.ok()) return opt.status();
    const std::string name = absl::AsciiStrToLower(*opt);
    if (name != "adamw" && name != "lion") {
      return Error(node["opt"], "opt",
                   "value '" + *opt + "' is not supported: nmsparse implements adamw and lion");
    }
    (*nested)["optimizer"]["name"] = name;
    // timm.optim.Lion's own default betas, which train.py keeps when opt_betas is not given.
    if (name == "lion" && yaml_util::IsNullish(node["opt_betas"])) (*nested)["optimizer"]["beta2"] = 0.99;
  }
  if (!yaml_util::IsNullish(node["clip_mode"])) {
    auto mode = yaml_util::ReadString(node["clip_mode"], "clip_mode");
    if (!mode.ok()) return mode.status();
    if (absl::AsciiStrToLower(*mode) != "norm") {
      return Error(node["clip_mode"], "clip_mode", "value '" + *mode + "' is not supported: only norm");
    }
  }
  const YAML::Node betas = node["opt_betas"];
  if (!yaml_util::IsNullish(betas)) {
    if (!betas.IsSequence() || betas.size() != 2) {
      return Error(betas, "opt_betas", "value " + yaml_util::Describe(betas) + " is not a list of two betas");
    }
    (*nested)["optimizer"]["beta1"] = betas[0];
    (*nested)["optimizer"]["beta2"] = betas[1];
  }
  const YAML::Node minmax = node["cutmix_minmax"];
  if (!yaml_util::IsNullish(minmax)) {
    if (!minmax.IsSequence() || minmax.size() != 2) {
      return Error(minmax, "cutmix_minmax",
                   "value " + yaml_util::Describe(minmax) + " is not a list of two box fractions [min, max]");
    }
    (*nested)["optimizer"]["cutmix_min"] = minmax[0];
    (*nested)["optimizer"]["cutmix_max"] = minmax[1];
  }
  auto lr = ReferenceLr(node);
  if (!lr.ok()) return lr.status();
  if (lr->IsDefined() && !lr->IsNull()) (*nested)["optimizer"]["lr"] = *lr;
  const YAML::Node dataset = node["dataset"];
  if (!yaml_util::IsNullish(dataset)) {
    auto text = yaml_util::ReadString(dataset, "dataset");
    if (!text.ok()) return text.status();
    const std::string lower = absl::AsciiStrToLower(*text);
    if (lower.empty()) return absl::OkStatus();
    if (absl::StrContains(lower, "fashion")) {
      (*nested)["data"]["dataset"] = "fashion_mnist";
    } else if (lower == "synthetic") {
      (*nested)["data"]["dataset"] = "synthetic";
    } else if (absl::StrContains(lower, "cifar100")) {  // timm's torch/cifar100.
      (*nested)["data"]["dataset"] = "cifar100";
    } else if (absl::StrContains(lower, "cifar10")) {
      (*nested)["data"]["dataset"] = "cifar10";
    } else if (absl::StrContains(lower, "imagenet") || absl::StrContains(lower, "folder")) {
      (*nested)["data"]["dataset"] = "imagefolder";  // timm reads both as an ImageFolder at data_dir.
    } else {
      (*nested)["data"]["dataset"] = "shards";
      if (warnings != nullptr) {
        warnings->push_back("reference key dataset = " + *text +
                            " is read as nmsparse shards (docs/data-format.md) at data_dir");
      }
    }
  }
  return absl::OkStatus();
}

// Every key a flat config takes but the sparsity section's, for "did you mean".
std::vector<std::string> ReferenceKeyNames() {
  std::vector<std::string> names(SpecialKeys().begin(), SpecialKeys().end());
  for (const auto& [flat, path] : MappedKeys()) names.push_back(flat);
  for (const UnmappedReferenceKey& k : UnmappedReferenceKeys()) names.push_back(k.key);
  return names;
}

// "line L: optimizer.clip_grad_norm: ..." -> "line L: clip_grad: ..." so that errors name the key as written.
absl::Status RenameNestedPath(const absl::Status& status) {
  std::string message(status.message());
  for (const auto& [flat, path] : Aliases()) {
    const std::string needle = ": " + path + ": ";
    const size_t at = message.find(needle);
    if (at != std::string::npos) {
      message.replace(at, needle.size(), ": " + flat + ": ");
      return absl::Status(status.code(), message);
    }
  }
  const std::string sparsity = ": sparsity.";
  if (const size_t at = message.find(sparsity); at != std::string::npos)
    message.replace(at, sparsity.size(), ": ");
  return absl::Status(status.code(), message);
}

}  // namespace

bool IsFlatReferenceConfig(const YAML::Node& node) {
  return node.IsMap() && node["model"] && node["model"].IsScalar();
}

bool IsReferenceKey(const std::string& key) {
  return MappedKeys().count(key) > 0 || SpecialKeys().count(key) > 0 ||
         FindUnmappedReferenceKey(key) != nullptr;
}

absl::StatusOr<ExperimentConfig> ParseReferenceConfig(const YAML::Node& node,
                                                      std::vector<std::string>* warnings) {
  YAML::Node nested(YAML::NodeType::Map);
  std::set<std::string> seen;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (!seen.insert(key).second) return Error(kv.first, key, "duplicate key");
    const YAML::Node& value = kv.second;
    if (IsSparsityKey(key)) {
      nested["sparsity"][key] = value;
    } else if (auto mapped = MappedKeys().find(key); mapped != MappedKeys().end()) {
      if (!yaml_util::IsNullish(value)) Set(&nested, mapped->second, value);
    } else if (const UnmappedReferenceKey* unmapped = FindUnmappedReferenceKey(key)) {
      if (auto st = CheckUnmappedKey(*unmapped, kv.first, value); !st.ok()) return st;
      NoteIgnoredKey(*unmapped, kv.first, value, warnings);
    } else if (SpecialKeys().count(key) == 0) {
      return Error(kv.first, key,
                   "unknown key" + DidYouMean(key, ReferenceKeyNames()) +
                       ": neither a timm train.py key nor an nmsparse key");
    }
  }
  if (auto st = MapSpecialKeys(node, &nested, warnings); !st.ok()) return st;
  // `experiment: ''` means no name; the nested parser would keep it anyway.
  auto config = ParseExperimentNode(nested, "");
  if (!config.ok()) return RenameNestedPath(config.status());
  return config;
}

}  // namespace nmsparse
