#include "schemas/experiment_config.h"

#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/model_catalog.h"
#include "schemas/param_filter.h"
#include "schemas/pure_memo.h"
#include "schemas/recipe.h"
#include "schemas/reference_config.h"
#include "schemas/semi_structured_layers.h"
#include "schemas/spec_text.h"
#include "schemas/structure_decay.h"
#include "schemas/train_steps.h"
#include "schemas/yaml_util.h"

namespace nmsparse {
namespace {

using yaml_util::Error;
constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();

// One key of a spec: how to read it into a config and how to write it back canonically. The tables of fields
// are built once; a field reaches its value through `ref`, a capture-less accessor.
struct Field {
  std::string key;
  std::function<absl::Status(ExperimentConfig* c, const YAML::Node& value, const std::string& path)> read;
  std::function<std::string(const ExperimentConfig& c)> write;  // The canonical scalar text.
  // Non-empty for keys added after run hashes were first stored: the canonical YAML leaves the key out when
  // its text is this (the default), so older runs keep their canonical text and content hash.
  std::string omitted_default;
};

// `field`, left out of the canonical YAML at its default value (see Field::omitted_default).
Field OmittedAtDefault(Field field) {
  field.omitted_default = field.write(ExperimentConfig());
  return field;
}

template <typename T>
using Ref = T* (*)(ExperimentConfig*);

// The value `ref` reaches in a const config (the accessors only take addresses).
template <typename T>
const T& Get(Ref<T> ref, const ExperimentConfig& c) {
  return *ref(const_cast<ExperimentConfig*>(&c));
}

Field IntField(const std::string& key, Ref<int> ref, int64_t min, int64_t max = kIntMax) {
  return {key,
          [=](ExperimentConfig* c, const YAML::Node& v, const std::string& path) -> absl::Status {
            auto r = yaml_util::ReadInt(v, path, min, max);
            if (!r.ok()) return r.status();
            *ref(c) = static_cast<int>(*r);
            return absl::OkStatus();
          },
          [=](const ExperimentConfig& c) { return absl::StrCat(Get(ref, c)); },
          /*omitted_default=*/""};
}

Field U64Field(const std::string& key, Ref<uint64_t> ref) {
  return {key,
          [=](ExperimentConfig* c, const YAML::Node& v, const std::string& path) -> absl::Status {
            auto r = yaml_util::ReadInt(v, path, 0);
            if (!r.ok()) return r.status();
            *ref(c) = static_cast<uint64_t>(*r);
            return absl::OkStatus();
          },
          [=](const ExperimentConfig& c) { return absl::StrCat(Get(ref, c)); },
          /*omitted_default=*/""};
}

Field DoubleField(const std::string& key, Ref<double> ref, double min, double max = kInf,
                  bool max_open = false) {
  return {key,
          [=](ExperimentConfig* c, const YAML::Node& v, const std::string& path) -> absl::Status {
            auto r = yaml_util::ReadDouble(v, path, min, max, max_open);
            if (!r.ok()) return r.status();
            *ref(c) = *r;
            return absl::OkStatus();
          },
          [=](const ExperimentConfig& c) { return yaml_util::FormatDouble(Get(ref, c)); },
          /*omitted_default=*/""};
}

Field StringField(const std::string& key, Ref<std::string> ref) {
  return {key,
          [=](ExperimentConfig* c, const YAML::Node& v, const std::string& path) -> absl::Status {
            auto r = yaml_util::ReadString(v, path);
            if (!r.ok()) return r.status();
            *ref(c) = *r;
            return absl::OkStatus();
          },
          [=](const ExperimentConfig& c) { return Get(ref, c); },
          /*omitted_default=*/""};
}

// A string from a fixed set, case-insensitive, stored lower case.
Field ChoiceField(const std::string& key, Ref<std::string> ref, const std::vector<std::string>& allowed) {
  std::vector<std::pair<std::string, std::string>> names;
  for (const auto& a : allowed) names.emplace_back(a, a);
  return {key,
          [=](ExperimentConfig* c, const YAML::Node& v, const std::string& path) -> absl::Status {
            auto r = yaml_util::ReadEnum(v, path, names);
            if (!r.ok()) return r.status();
            *ref(c) = *r;
            return absl::OkStatus();
          },
          [=](const ExperimentConfig& c) { return Get(ref, c); },
          /*omitted_default=*/""};
}

using C = ExperimentConfig*;

std::vector<Field> TopLevelScalarFields() {
  return {StringField("name", [](C c) { return &c->name; }), U64Field("seed", [](C c) { return &c->seed; })};
}

std::vector<Field> ModelFields() {
  return {StringField("name", [](C c) { return &c->model.name; }),
          IntField(
              "num_classes", [](C c) { return &c->model.num_classes; }, 0),
          IntField(
              "img_size", [](C c) { return &c->model.img_size; }, 0),
          IntField(
              "in_chans", [](C c) { return &c->model.in_chans; }, 0),
          DoubleField(
              "drop_rate", [](C c) { return &c->model.drop_rate; }, 0.0, 1.0, true),
          DoubleField(
              "drop_path_rate", [](C c) { return &c->model.drop_path_rate; }, 0.0, 1.0, true),
          DoubleField(
              "attn_drop_rate", [](C c) { return &c->model.attn_drop_rate; }, 0.0, 1.0, true)};
}

std::vector<Field> DataFields() {
  return {
      ChoiceField("dataset", [](C c) { return &c->data.dataset; }, {"fashion_mnist", "synthetic", "shards"}),
      StringField("path", [](C c) { return &c->data.path; }),
      IntField(
          "train_subset", [](C c) { return &c->data.train_subset; }, 0),
      IntField(
          "eval_subset", [](C c) { return &c->data.eval_subset; }, 0),
      IntField(
          "batch_size", [](C c) { return &c->data.batch_size; }, 1),
      IntField(
          "eval_batch_size", [](C c) { return &c->data.eval_batch_size; }, 1),
      IntField(
          "random_crop_padding", [](C c) { return &c->data.random_crop_padding; }, 0),
      DoubleField(
          "hflip", [](C c) { return &c->data.hflip; }, 0.0, 1.0),
      IntField(
          "synthetic_size", [](C c) { return &c->data.synthetic_size; }, 1)};
}

std::vector<Field> OptimizerFields() {
  return {ChoiceField("name", [](C c) { return &c->optimizer.name; }, {"adamw"}),
          DoubleField(
              "lr", [](C c) { return &c->optimizer.lr; }, 0.0),
          DoubleField(
              "weight_decay", [](C c) { return &c->optimizer.weight_decay; }, 0.0),
          DoubleField(
              "beta1", [](C c) { return &c->optimizer.beta1; }, 0.0, 1.0, true),
          DoubleField(
              "beta2", [](C c) { return &c->optimizer.beta2; }, 0.0, 1.0, true),
          DoubleField(
              "eps", [](C c) { return &c->optimizer.eps; }, 0.0),
          DoubleField(
              "clip_grad_norm", [](C c) { return &c->optimizer.clip_grad_norm; }, 0.0),
          DoubleField(
              "label_smoothing", [](C c) { return &c->optimizer.label_smoothing; }, 0.0, 1.0, true),
          DoubleField(
              "mixup_alpha", [](C c) { return &c->optimizer.mixup_alpha; }, 0.0),
          IntField(
              "grad_accum_steps", [](C c) { return &c->optimizer.grad_accum_steps; }, 1)};
}

std::vector<Field> ScheduleFields() {
  return {IntField(
              "epochs", [](C c) { return &c->schedule.epochs; }, 1),
          DoubleField(
              "warmup_epochs", [](C c) { return &c->schedule.warmup_epochs; }, 0.0),
          DoubleField(
              "min_lr", [](C c) { return &c->schedule.min_lr; }, 0.0),
          DoubleField(
              "warmup_lr", [](C c) { return &c->schedule.warmup_lr; }, 0.0),
          IntField(
              "log_every_steps", [](C c) { return &c->schedule.log_every_steps; }, 0)};
}

std::vector<Field> ResourceFields() {
  return {IntField(
              "gpus", [](C c) { return &c->resources.gpus; }, 1),
          IntField(
              "cpu_threads", [](C c) { return &c->resources.cpu_threads; }, 0),
          OmittedAtDefault(
              ChoiceField("precision", [](C c) { return &c->resources.precision; }, {"fp32", "bf16"}))};
}

using SectionTable = std::vector<std::pair<std::string, std::vector<Field>>>;

// The map sections of a spec in canonical order, built once.
const SectionTable& Sections() {
  static const auto* sections = new SectionTable{{"model", ModelFields()},
                                                 {"data", DataFields()},
                                                 {"optimizer", OptimizerFields()},
                                                 {"schedule", ScheduleFields()},
                                                 {"resources", ResourceFields()}};
  return *sections;
}

// The fields of section `name`, or nullptr for a name that is not a map section.
const std::vector<Field>* SectionFields(const std::string& name) {
  for (const auto& [section, fields] : Sections()) {
    if (section == name) return &fields;
  }
  return nullptr;
}

// name and seed.
const std::vector<Field>& TopLevelScalars() {
  static const auto* fields = new std::vector<Field>(TopLevelScalarFields());
  return *fields;
}

std::vector<std::string> KeysOf(const std::vector<Field>& fields) {
  std::vector<std::string> keys;
  for (const auto& f : fields) keys.push_back(f.key);
  return keys;
}

absl::Status ParseSection(const YAML::Node& node, const std::string& section,
                          const std::vector<Field>& fields, ExperimentConfig* c) {
  if (yaml_util::IsNullish(node)) return absl::OkStatus();
  if (!node.IsMap()) return Error(node, section, "value " + yaml_util::Describe(node) + " is not a map");
  std::set<std::string> seen;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const std::string path = section + "." + key;
    if (!seen.insert(key).second) return Error(kv.first, path, "duplicate key");
    const Field* field = nullptr;
    for (const auto& f : fields) field = f.key == key ? &f : field;
    if (field == nullptr) {
      return Error(kv.first, path, "unknown key; known keys: " + absl::StrJoin(KeysOf(fields), ", "));
    }
    if (yaml_util::IsNullish(kv.second)) continue;
    if (auto st = field->read(c, kv.second, path); !st.ok()) return st;
  }
  return absl::OkStatus();
}

const std::vector<std::string>& TopLevelKeys() {
  static const auto* keys = new std::vector<std::string>{
      "name", "seed", "model", "data", "optimizer", "schedule", "resources", "sparsity", "semi_structured"};
  return *keys;
}

// Copies section `name` (model, data, optimizer, schedule or resources) of `from` into `to`.
void CopySection(const ExperimentConfig& from, const std::string& name, ExperimentConfig* to) {
  if (name == "model") to->model = from.model;
  if (name == "data") to->data = from.data;
  if (name == "optimizer") to->optimizer = from.optimizer;
  if (name == "schedule") to->schedule = from.schedule;
  if (name == "resources") to->resources = from.resources;
}

// Parses one top-level key into `c`, replacing what `c` had for it (a null value leaves the default).
absl::Status ParseTopLevelKey(const YAML::Node& key_node, const std::string& key, const YAML::Node& value,
                              ExperimentConfig* c) {
  const ExperimentConfig defaults;
  if (key == "name") c->name = defaults.name;
  if (key == "seed") c->seed = defaults.seed;
  for (const Field& field : TopLevelScalars()) {
    if (field.key != key) continue;
    if (yaml_util::IsNullish(value)) return absl::OkStatus();
    return field.read(c, value, key);
  }
  if (key == "sparsity") {
    auto sparsity = ParseSparsityConfig(value, "sparsity.");
    if (!sparsity.ok()) return sparsity.status();
    c->sparsity = *sparsity;
    return absl::OkStatus();
  }
  if (key == "semi_structured") {  // Accelerated 2:4 linears: a section of its own.
    auto semi = ParseSemiStructuredConfig(value, "semi_structured");
    if (!semi.ok()) return semi.status();
    c->semi_structured = *semi;
    return absl::OkStatus();
  }
  const std::vector<Field>* fields = SectionFields(key);
  if (fields == nullptr) {
    return Error(key_node, key, "unknown key; known keys: " + absl::StrJoin(TopLevelKeys(), ", "));
  }
  ExperimentConfig section = defaults;  // Parsed into a default config; only section `key` is copied back.
  if (auto st = ParseSection(value, key, *fields, &section); !st.ok()) return st;
  if (section.resources.cpu_threads == 0) section.resources.cpu_threads = 1;  // The wire's "0: 1".
  CopySection(section, key, c);
  return absl::OkStatus();
}

// Parses the nested form; errors carry "line L: " prefixes.
absl::StatusOr<ExperimentConfig> ParseNested(const YAML::Node& node) {
  ExperimentConfig c;
  std::set<std::string> seen;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (!seen.insert(key).second) return Error(kv.first, key, "duplicate key");
    if (auto st = ParseTopLevelKey(kv.first, key, kv.second, &c); !st.ok()) return st;
  }
  return c;
}

absl::Status Invalid(const std::string& path, const std::string& reason) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", reason));
}

std::string NMText(const NM& nm) { return absl::StrCat(nm.n, ":", nm.m); }

absl::Status ValidateModelAndData(const ExperimentConfig& c, const ModelArch& arch) {
  if (arch.img_size % arch.patch_size != 0) {
    return Invalid("model.img_size",
                   absl::StrCat("value ", arch.img_size, " is not a multiple of the patch size ",
                                arch.patch_size, " of ", arch.name));
  }
  if (arch.family == ModelFamily::kSwinV2) {
    int res = arch.img_size / arch.patch_size;
    for (size_t s = 0; s < arch.depths.size(); ++s, res /= 2) {
      const int window = std::min(arch.window_size, res);
      if (res == 0 || res % window != 0 || (s + 1 < arch.depths.size() && res % 2 != 0)) {
        return Invalid("model.img_size",
                       absl::StrCat("value ", arch.img_size, " gives a ", res, "x", res,
                                    " token grid at stage ", s, " of ", arch.name, ", which window ", window,
                                    " and the 2x2 patch merging cannot tile"));
      }
    }
  }
  if (c.data.dataset == "fashion_mnist" &&
      (arch.img_size != 28 || arch.in_chans != 1 || arch.num_classes != 10)) {
    return Invalid("model", absl::StrCat("fashion_mnist images are 28x28x1 in 10 classes, but ", arch.name,
                                         " is set up for ", arch.img_size, "x", arch.img_size, "x",
                                         arch.in_chans, " in ", arch.num_classes,
                                         " classes: set model.img_size, model.in_chans, model.num_classes"));
  }
  if (c.data.dataset == "shards" && c.data.path.empty()) {
    return Invalid("data.path", "missing: the shards dataset needs the directory of its shards");
  }
  return absl::OkStatus();
}

// SparsifiableLayers(LookupModel(model...), locations): a pure function of these arguments, remembered on
// all of them, since every run of a sweep walks the same model's layers.
std::shared_ptr<const std::vector<LayerShape>> LayersAt(const ModelConfig& m, const ModelArch& arch,
                                                        const std::vector<SparsityLocation>& locations) {
  static auto* memo = new PureMemo<std::vector<LayerShape>>;
  std::string key = absl::StrCat(m.name, "/", m.img_size, "/", m.in_chans, "/", m.num_classes, "/");
  for (SparsityLocation loc : locations) absl::StrAppend(&key, static_cast<int>(loc), ",");
  return memo->Get(key, [&] { return SparsifiableLayers(arch, locations); });
}

absl::Status ValidateSparsity(const ExperimentConfig& c, const ModelArch& arch) {
  const SparsityConfig& s = c.sparsity;
  for (const NM* nm : {&s.nm, &s.nm_qkv}) {
    if (nm->n < 1 || nm->n > nm->m) {
      return Invalid("sparsity", absl::StrCat("N:M ", NMText(*nm), " is invalid: must have 1 <= N <= M"));
    }
  }
  if (s.sparsity_type == SparsityType::kDense || s.sparsity_type == SparsityType::kUnstructured) {
    return absl::OkStatus();
  }
  const int epochs = c.schedule.epochs;
  for (const LayerShape& layer : *LayersAt(c.model, arch, s.locations)) {
    const NM target = TargetFor(s, layer.location);
    // SR-STE ignores the structure decay (§2): only its target is ever used.
    const auto stages = s.sparsity_type == SparsityType::kSrste ? std::vector<std::pair<int, NM>>{{0, target}}
                                                                : StructureDecayStages(s, epochs, target);
    for (const auto& [start, nm] : stages) {
      if (layer.numel() % nm.m != 0) {
        std::vector<std::string> dims;
        for (int64_t d : layer.shape) dims.push_back(absl::StrCat(d));
        return Invalid(
            "sparsity",
            absl::StrCat("layer ", layer.name, " (", ToString(layer.location), ", shape [",
                         absl::StrJoin(dims, ", "), "], ", layer.numel(), " weights) cannot use ", NMText(nm),
                         start > 0 ? absl::StrCat(" (structure decay stage from epoch ", start, ")") : "",
                         ": its number of weights is not a multiple of M = ", nm.m));
      }
    }
  }
  return absl::OkStatus();
}

// Dynamic sparsity (§7): every group's filter must take at least one of the model's parameters, as the
// trainer's controller will check on the built model; the catalogue lists the same parameters without
// LibTorch.
absl::Status ValidateDynamicGroups(const ExperimentConfig& c, const ModelArch& arch) {
  if (!c.sparsity.IsDynamic()) return absl::OkStatus();
  std::vector<ParamInfo> params;
  for (const ParameterShape& p : ModelParameters(arch)) {
    params.push_back({p.name, static_cast<int64_t>(p.shape.size())});
  }
  return AssignParamGroups(params, c.sparsity.dynamic).status();
}

}  // namespace

bool operator==(const ExperimentConfig& a, const ExperimentConfig& b) {
  return CanonicalYaml(a) == CanonicalYaml(b) && a.sparsity == b.sparsity &&
         a.semi_structured == b.semi_structured;
}

const std::vector<std::string>& ExperimentSectionKeys(const std::string& section) {
  static const auto* keys = [] {
    auto* m = new std::map<std::string, std::vector<std::string>>;
    for (const auto& [name, fields] : Sections()) (*m)[name] = KeysOf(fields);
    (*m)[""] = TopLevelKeys();
    YAML::Node sparsity = SparsityConfigToYaml(SparsityConfig());
    (*m)["sparsity"].push_back(kRecipeKey);  // Input only: expands into the keys below.
    for (const auto& kv : sparsity) (*m)["sparsity"].push_back(kv.first.as<std::string>());
    for (const auto& kv : SemiStructuredConfigToYaml(SemiStructuredConfig())) {
      (*m)["semi_structured"].push_back(kv.first.as<std::string>());
    }
    return m;
  }();
  static const std::vector<std::string> kNone;
  auto it = keys->find(section);
  return it == keys->end() ? kNone : it->second;
}

absl::StatusOr<ExperimentConfig> ParseExperimentNode(const YAML::Node& node, const std::string& file_name,
                                                     std::vector<std::string>* warnings) {
  if (!node.IsMap()) {
    return yaml_util::WithFile(Error(node, "(top level)", "expected a map of experiment keys"), file_name);
  }
  absl::StatusOr<ExperimentConfig> config =
      IsFlatReferenceConfig(node) ? ParseReferenceConfig(node, warnings) : ParseNested(node);
  if (!config.ok()) return yaml_util::WithFile(config.status(), file_name);
  return config;
}

absl::StatusOr<ExperimentConfig> ParseExperimentYaml(const std::string& text, const std::string& file_name,
                                                     std::vector<std::string>* warnings) {
  auto node = yaml_util::LoadYaml(text, file_name);
  if (!node.ok()) return node.status();
  return ParseExperimentNode(*node, file_name, warnings);
}

absl::StatusOr<ExperimentConfig> LoadExperimentFile(const std::string& path,
                                                    std::vector<std::string>* warnings) {
  auto text = ReadSpecText(path);
  if (!text.ok()) return text.status();
  return ParseExperimentYaml(*text, path, warnings);
}

absl::Status ValidateExperiment(const ExperimentConfig& c) {
  if (c.model.name.empty()) return Invalid("model.name", "missing: every experiment names a model");
  auto arch = LookupModel(c.model.name, c.model.img_size, c.model.in_chans, c.model.num_classes);
  if (!arch.ok()) return Invalid("model.name", std::string(arch.status().message()));
  if (auto st = ValidateModelAndData(c, *arch); !st.ok()) return st;
  if (c.data.batch_size % c.resources.gpus != 0) {
    return Invalid("data.batch_size",
                   absl::StrCat("value ", c.data.batch_size, " is not divisible by resources.gpus (",
                                c.resources.gpus, "): the global batch is split evenly over ranks"));
  }
  if (auto st = CheckEpochHasSteps(c); !st.ok()) return st;
  if (c.schedule.warmup_epochs > c.schedule.epochs) {
    return Invalid("schedule.warmup_epochs",
                   absl::StrCat("value ", yaml_util::FormatDouble(c.schedule.warmup_epochs),
                                " is out of range: must be <= schedule.epochs (", c.schedule.epochs, ")"));
  }
  if (auto st = ValidateDynamicGroups(c, *arch); !st.ok()) return st;
  if (auto st = ValidateSparsity(c, *arch); !st.ok()) return st;
  return ChooseSemiStructuredLayers(c.semi_structured, c.sparsity, *arch).status();
}

std::vector<CanonicalSection> CanonicalSections(const ExperimentConfig& config) {
  std::vector<CanonicalSection> out;
  out.reserve(Sections().size() + 2);
  out.push_back({"", {}});
  for (const Field& f : TopLevelScalars()) out.back().keys.emplace_back(f.key, f.write(config));
  for (const auto& [name, fields] : Sections()) {
    CanonicalSection& section = out.emplace_back(CanonicalSection{name, {}});
    section.keys.reserve(fields.size());
    for (const Field& f : fields) {
      std::string text = f.write(config);
      if (!f.omitted_default.empty() && text == f.omitted_default) continue;
      section.keys.emplace_back(f.key, std::move(text));
    }
  }
  out.push_back({"sparsity", SparsityScalarTexts(config.sparsity)});
  return out;
}

YAML::Node ExperimentConfigToYaml(const ExperimentConfig& config) {
  YAML::Node out(YAML::NodeType::Map);
  for (const CanonicalSection& section : CanonicalSections(config)) {
    YAML::Node map = section.name.empty() ? out : YAML::Node(YAML::NodeType::Map);
    for (const auto& [key, text] : section.keys) map[key] = text;
    if (!section.name.empty()) out[section.name] = map;
  }
  out["sparsity"] = SparsityConfigToYaml(config.sparsity);  // Its scalars, then phases and dynamic groups.
  if (config.semi_structured.Enabled()) {  // Only when used, so that every other run keeps its hash.
    out["semi_structured"] = SemiStructuredConfigToYaml(config.semi_structured);
  }
  return out;
}

std::string CanonicalYamlByEmitter(const ExperimentConfig& config) {
  YAML::Emitter out;
  out << ExperimentConfigToYaml(config);
  return std::string(out.c_str()) + "\n";
}

absl::Status ParseExperimentKey(const YAML::Node& key_node, const YAML::Node& value,
                                ExperimentConfig* config) {
  return ParseTopLevelKey(key_node, key_node.as<std::string>(), value, config);
}

}  // namespace nmsparse
