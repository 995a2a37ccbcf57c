#include "schemas/experiment_config.h"

#include <functional>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schemas/model_catalog.h"
#include "schemas/reference_config.h"
#include "schemas/structure_decay.h"
#include "schemas/yaml_util.h"

namespace nmsparse {
namespace {

using yaml_util::Error;
constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();

// One key of a section: how to read it into the config and how to write it back canonically.
struct Field {
  std::string key;
  std::function<absl::Status(const YAML::Node& value, const std::string& path)> read;
  std::function<std::string()> write;  // The canonical scalar text.
};

Field IntField(const std::string& key, int* p, int64_t min, int64_t max = kIntMax) {
  return {key,
          [=](const YAML::Node& v, const std::string& path) -> absl::Status {
            auto r = yaml_util::ReadInt(v, path, min, max);
            if (!r.ok()) return r.status();
            *p = static_cast<int>(*r);
            return absl::OkStatus();
          },
          [=] { return absl::StrCat(*p); }};
}

Field U64Field(const std::string& key, uint64_t* p) {
  return {key,
          [=](const YAML::Node& v, const std::string& path) -> absl::Status {
            auto r = yaml_util::ReadInt(v, path, 0);
            if (!r.ok()) return r.status();
            *p = static_cast<uint64_t>(*r);
            return absl::OkStatus();
          },
          [=] { return absl::StrCat(*p); }};
}

Field DoubleField(const std::string& key, double* p, double min, double max = kInf, bool max_open = false) {
  return {key,
          [=](const YAML::Node& v, const std::string& path) -> absl::Status {
            auto r = yaml_util::ReadDouble(v, path, min, max, max_open);
            if (!r.ok()) return r.status();
            *p = *r;
            return absl::OkStatus();
          },
          [=] { return yaml_util::FormatDouble(*p); }};
}

Field StringField(const std::string& key, std::string* p) {
  return {key,
          [=](const YAML::Node& v, const std::string& path) -> absl::Status {
            auto r = yaml_util::ReadString(v, path);
            if (!r.ok()) return r.status();
            *p = *r;
            return absl::OkStatus();
          },
          [=] { return absl::StrCat(*p); }};
}

// A string from a fixed set, case-insensitive, stored lower case.
Field ChoiceField(const std::string& key, std::string* p, std::vector<std::string> allowed) {
  return {key,
          [=](const YAML::Node& v, const std::string& path) -> absl::Status {
            std::vector<std::pair<std::string, std::string>> names;
            for (const auto& a : allowed) names.emplace_back(a, a);
            auto r = yaml_util::ReadEnum(v, path, names);
            if (!r.ok()) return r.status();
            *p = *r;
            return absl::OkStatus();
          },
          [=] { return absl::StrCat(*p); }};
}

std::vector<Field> ModelFields(ModelConfig* m) {
  return {StringField("name", &m->name),
          IntField("num_classes", &m->num_classes, 0),
          IntField("img_size", &m->img_size, 0),
          IntField("in_chans", &m->in_chans, 0),
          DoubleField("drop_rate", &m->drop_rate, 0.0, 1.0, true),
          DoubleField("drop_path_rate", &m->drop_path_rate, 0.0, 1.0, true),
          DoubleField("attn_drop_rate", &m->attn_drop_rate, 0.0, 1.0, true)};
}

std::vector<Field> DataFields(DataConfig* d) {
  return {ChoiceField("dataset", &d->dataset, {"fashion_mnist", "synthetic", "shards"}),
          StringField("path", &d->path),
          IntField("train_subset", &d->train_subset, 0),
          IntField("eval_subset", &d->eval_subset, 0),
          IntField("batch_size", &d->batch_size, 1),
          IntField("eval_batch_size", &d->eval_batch_size, 1),
          IntField("random_crop_padding", &d->random_crop_padding, 0),
          DoubleField("hflip", &d->hflip, 0.0, 1.0),
          IntField("synthetic_size", &d->synthetic_size, 1)};
}

std::vector<Field> OptimizerFields(OptimizerConfig* o) {
  return {ChoiceField("name", &o->name, {"adamw"}),
          DoubleField("lr", &o->lr, 0.0),
          DoubleField("weight_decay", &o->weight_decay, 0.0),
          DoubleField("beta1", &o->beta1, 0.0, 1.0, true),
          DoubleField("beta2", &o->beta2, 0.0, 1.0, true),
          DoubleField("eps", &o->eps, 0.0),
          DoubleField("clip_grad_norm", &o->clip_grad_norm, 0.0),
          DoubleField("label_smoothing", &o->label_smoothing, 0.0, 1.0, true),
          DoubleField("mixup_alpha", &o->mixup_alpha, 0.0),
          IntField("grad_accum_steps", &o->grad_accum_steps, 1)};
}

std::vector<Field> ScheduleFields(ScheduleConfig* s) {
  return {IntField("epochs", &s->epochs, 1), DoubleField("warmup_epochs", &s->warmup_epochs, 0.0),
          DoubleField("min_lr", &s->min_lr, 0.0), DoubleField("warmup_lr", &s->warmup_lr, 0.0),
          IntField("log_every_steps", &s->log_every_steps, 0)};
}

std::vector<Field> ResourceFields(ResourceConfig* r) {
  return {IntField("gpus", &r->gpus, 1), IntField("cpu_threads", &r->cpu_threads, 0)};
}

// The map sections of a spec, in canonical order.
const std::vector<std::string>& SectionNames() {
  static const auto* names =
      new std::vector<std::string>{"model", "data", "optimizer", "schedule", "resources"};
  return *names;
}

// The fields of section `name` bound to `c`; empty for a name that is not a map section.
std::vector<Field> SectionFields(const std::string& name, ExperimentConfig* c) {
  if (name == "model") return ModelFields(&c->model);
  if (name == "data") return DataFields(&c->data);
  if (name == "optimizer") return OptimizerFields(&c->optimizer);
  if (name == "schedule") return ScheduleFields(&c->schedule);
  if (name == "resources") return ResourceFields(&c->resources);
  return {};
}

// The sections of a spec in canonical order, bound to `c`.
std::vector<std::pair<std::string, std::vector<Field>>> Sections(ExperimentConfig* c) {
  std::vector<std::pair<std::string, std::vector<Field>>> sections;
  for (const std::string& name : SectionNames()) sections.emplace_back(name, SectionFields(name, c));
  return sections;
}

std::vector<std::string> KeysOf(const std::vector<Field>& fields) {
  std::vector<std::string> keys;
  for (const auto& f : fields) keys.push_back(f.key);
  return keys;
}

absl::Status ParseSection(const YAML::Node& node, const std::string& section,
                          const std::vector<Field>& fields) {
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
    if (auto st = field->read(kv.second, path); !st.ok()) return st;
  }
  return absl::OkStatus();
}

const std::vector<std::string>& TopLevelKeys() {
  static const auto* keys = new std::vector<std::string>{"name",      "seed",     "model",     "data",
                                                         "optimizer", "schedule", "resources", "sparsity"};
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
  if (key == "name") {
    c->name = defaults.name;
    if (yaml_util::IsNullish(value)) return absl::OkStatus();
    return StringField("name", &c->name).read(value, key);
  }
  if (key == "seed") {
    c->seed = defaults.seed;
    if (yaml_util::IsNullish(value)) return absl::OkStatus();
    return U64Field("seed", &c->seed).read(value, key);
  }
  if (key == "sparsity") {
    auto sparsity = ParseSparsityConfig(value, "sparsity.");
    if (!sparsity.ok()) return sparsity.status();
    c->sparsity = *sparsity;
    return absl::OkStatus();
  }
  ExperimentConfig section = defaults;  // Parsed into a default config; only section `key` is copied back.
  const std::vector<Field> fields = SectionFields(key, &section);
  if (fields.empty()) {
    return Error(key_node, key, "unknown key; known keys: " + absl::StrJoin(TopLevelKeys(), ", "));
  }
  if (auto st = ParseSection(value, key, fields); !st.ok()) return st;
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
  for (const LayerShape& layer : SparsifiableLayers(arch, s.locations)) {
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

}  // namespace

bool operator==(const ExperimentConfig& a, const ExperimentConfig& b) {
  return CanonicalYaml(a) == CanonicalYaml(b) && a.sparsity == b.sparsity;
}

const std::vector<std::string>& ExperimentSectionKeys(const std::string& section) {
  static const auto* keys = [] {
    auto* m = new std::map<std::string, std::vector<std::string>>;
    ExperimentConfig c;
    for (const auto& [name, fields] : Sections(&c)) (*m)[name] = KeysOf(fields);
    (*m)[""] = TopLevelKeys();
    YAML::Node sparsity = SparsityConfigToYaml(SparsityConfig());
    for (const auto& kv : sparsity) (*m)["sparsity"].push_back(kv.first.as<std::string>());
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
  auto text = yaml_util::ReadTextFile(path);
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
  if (c.schedule.warmup_epochs > c.schedule.epochs) {
    return Invalid("schedule.warmup_epochs",
                   absl::StrCat("value ", yaml_util::FormatDouble(c.schedule.warmup_epochs),
                                " is out of range: must be <= schedule.epochs (", c.schedule.epochs, ")"));
  }
  return ValidateSparsity(c, *arch);
}

std::vector<CanonicalSection> CanonicalSections(const ExperimentConfig& config) {
  ExperimentConfig c = config;  // Field writers read through non-const pointers.
  std::vector<CanonicalSection> out;
  out.push_back({"", {{"name", c.name}, {"seed", U64Field("seed", &c.seed).write()}}});
  for (const auto& [name, fields] : Sections(&c)) {
    CanonicalSection& section = out.emplace_back(CanonicalSection{name, {}});
    for (const auto& f : fields) section.keys.emplace_back(f.key, f.write());
  }
  out.push_back({"sparsity", SparsityScalarTexts(c.sparsity)});
  return out;
}

YAML::Node ExperimentConfigToYaml(const ExperimentConfig& config) {
  YAML::Node out(YAML::NodeType::Map);
  for (const CanonicalSection& section : CanonicalSections(config)) {
    YAML::Node map = section.name.empty() ? out : YAML::Node(YAML::NodeType::Map);
    for (const auto& [key, text] : section.keys) map[key] = text;
    if (!section.name.empty()) out[section.name] = map;
  }
  out["sparsity"]["phases"] = PhasesToYaml(config.sparsity.phases);
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
