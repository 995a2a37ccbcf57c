#include "schemas/sweep_blocks.h"

#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "schemas/experiment_config.h"
#include "schemas/limits.h"
#include "schemas/metric_objective.h"
#include "schemas/proto_keys.h"
#include "schemas/trained_epochs.h"
#include "schemas/yaml_util.h"

namespace nmsparse {
namespace {

using ES = v1::EarlyStopping;
using SE = v1::Search;
using SW = v1::SweepSpec;
using yaml_util::Error;

constexpr int64_t kMaxCount = std::numeric_limits<uint32_t>::max();

absl::Status Invalid(const std::string& key, const std::string& value, const std::string& reason) {
  return absl::InvalidArgumentError(absl::StrCat(key, ": value ", value, " ", reason));
}

// The file's line of the block, for the cross-key checks of Check*.
absl::Status AtLine(const YAML::Node& node, const absl::Status& st) {
  if (st.ok() || yaml_util::Line(node) == 0) return st;
  return absl::InvalidArgumentError(absl::StrCat("line ", yaml_util::Line(node), ": ", st.message()));
}

// A key of the sweep file that its parser reads itself (the base, the axes): declared for the key list and
// the docs.
SpecKey<SW> DocOnlyKey(const std::string& name, const std::string& doc) {
  SpecKey<SW> key;
  key.info.name = name;
  key.info.kind = KeyKind::kString;
  key.info.doc = doc;
  key.info.no_default = true;
  key.equal = [](const SW&, const SW&) { return true; };
  key.reset = [](SW*) {};
  return key;
}

// A key of the file only: the parser resolves it (base_file into base).
SpecKey<SW> InputOnly(SpecKey<SW> key) {
  key.info.input_only = true;
  return key;
}

// A block of the sweep file (early_stopping, search), read by its own parser.
template <typename M>
SpecKey<SW> BlockKey(const std::string& name, const KeyTable<M>& table, const std::string& doc) {
  SpecKey<SW> key = DocOnlyKey(name, doc);
  key.info.kind = KeyKind::kSection;
  key.info.keys = table.Infos();
  return key;
}

// A block's required key that Read did not see.
absl::Status Missing(const YAML::Node& node, const KeyNodes& read, const std::string& path, const char* key,
                     const std::string& reason) {
  if (ReadNode(read, key)) return absl::OkStatus();
  return Error(node, path + "." + key, "missing: " + reason);
}

// Writes the direction the block ranks by into `mode`, so that the stored sweep says it.
absl::Status FillMode(const std::string& block, const std::string& metric, std::string* mode) {
  absl::StatusOr<bool> maximize =
      ObjectiveMaximizes(metric, *mode, block + ".metric", "say " + block + ".mode: max or min");
  if (!maximize.ok()) return maximize.status();
  *mode = *maximize ? "max" : "min";
  return absl::OkStatus();
}

}  // namespace

const KeyTable<v1::EarlyStopping>& EarlyStoppingKeyTable() {
  static const auto* keys = [] {
    ES defaults;
    defaults.set_policy("asha");
    defaults.set_resource("epoch");
    defaults.set_min_resource(1);
    defaults.set_reduction_factor(3);
    return new KeyTable<ES>(
        {
            ProtoWordKey<ES>("policy", {"asha"}).Doc("the only rule so far"),
            ProtoStringKey<ES>("metric")
                .Doc("an epoch metric nmtrain reports: `top1`, `top5`, `eval_loss`, `loss`")
                .Required(),
            ProtoWordKey<ES>("mode", {"max", "min"})
                .Doc("`max`: larger is better; `min`: smaller is better; default: the metric's declared "
                     "direction (contract/metric_direction.h: top1 and top5 max, losses min), required for "
                     "any other "
                     "metric")
                .NoDefault(),
            ProtoWordKey<ES>("resource", {"epoch"}).Doc("what rungs count: completed epochs"),
            ProtoIntKey<ES>("min_resource", 1, kMaxCount).Doc("the first rung"),
            ProtoIntKey<ES>("reduction_factor", 2, kMaxCount)
                .Doc("η: the rungs are η times apart, and about 1/η of the runs at a rung go on"),
            ProtoIntKey<ES>("max_resource", 1, kMaxCount)
                .Doc(
                    "no rung at or past it (the end of training is no rung); default: the epochs the base "
                    "trains (`schedule.epochs`, plus `cooldown_epochs` and a prefixed warm-up as the trainer "
                    "counts them)")
                .NoDefault(),
            ProtoIntKey<ES>("min_peers", 1, kMaxCount)
                .Doc("the results a rung waits for before it decides: the first runs to reach it go on "
                     "meanwhile, and the one that makes the count decides them all at once; default: "
                     "`reduction_factor` (1: the first run at a rung always goes on)")
                .NoDefault(),
        },
        defaults);
  }();
  return *keys;
}

const KeyTable<v1::Search>& SearchKeyTable() {
  static const auto* keys = [] {
    SE defaults;
    defaults.set_algorithm("tpe");
    defaults.set_parallel(1);
    defaults.set_n_startup(3);
    defaults.set_gamma(0.25);
    defaults.set_n_candidates(24);
    return new KeyTable<SE>(
        {
            ProtoWordKey<SE>("algorithm", {"tpe"}).Doc("the proposer"),
            ProtoIntKey<SE>("budget", 1, limits::kMaxSearchBudget)
                .Doc("runs in all: the sweep's run count, checked against the run limit like a grid's")
                .Required(),
            ProtoIntKey<SE>("seed", 0, std::numeric_limits<int64_t>::max()).Doc("seeds the proposals"),
            ProtoStringKey<SE>("metric").Doc("the final metric to optimize, e.g. `top1`").Required(),
            ProtoWordKey<SE>("mode", {"max", "min"})
                .Doc("`max` or `min`; default: the metric's declared direction, as for `early_stopping.mode`")
                .NoDefault(),
            ProtoIntKey<SE>("parallel", 1, limits::kMaxSearchParallel).Doc("runs in flight at most"),
            ProtoIntKey<SE>("n_startup", 1, limits::kMaxSearchStartup)
                .Doc("results needed before TPE takes over; until then proposals are uniform draws"),
            ProtoNumberKey<SE>("gamma", 0.0, 1.0, /*min_open=*/true, /*max_open=*/true)
                .Doc("the fraction of results counted as good"),
            ProtoIntKey<SE>("n_candidates", 1, limits::kMaxSearchCandidates)
                .Doc(
                    "candidates ranked per proposal (a proposal ranks at most the maximum, whatever an older "
                    "database holds)"),
        },
        defaults);
  }();
  return *keys;
}

const KeyTable<v1::SweepSpec>& SweepKeyTable() {
  static const auto* keys = new KeyTable<SW>({
      ProtoStringKey<SW>("name").Doc("Sweep name."),
      DocOnlyKey("base", "The base experiment spec (nested or flat reference form)."),
      InputOnly(DocOnlyKey("base_file", "Path of the base spec file, relative to the sweep file.")),
      DocOnlyKey("grid",
                 "Grid axes in order. An axis is either a key path with a list of values (label = value), a "
                 "map label -> overrides, or {values: [{label: L, set: overrides} | {L: overrides}, ...]}."),
      DocOnlyKey(
          "random",
          "Random axes: key path -> {min, max, log, integer} (uniform, log-uniform, or integer in [min, "
          "max]) or {choices: [...]} (uniform choice)."),
      ProtoIntKey<SW>("num_samples", 0, kMaxCount).Doc("Random draws per grid point (0 means 1)."),
      ProtoIntKey<SW>("seed", 0, std::numeric_limits<int64_t>::max()).Doc("Seeds the random axes."),
      ProtoIntKey<SW>("priority", std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max())
          .Doc("Higher runs first."),
      ProtoIntKey<SW>("max_retries", 0, kMaxCount).Doc("Requeues after a lost lease or a failed attempt."),
      ProtoIntKey<SW>("gpus_per_run", 0, kMaxCount)
          .Doc("Ranks per run on one node; sets base.resources.gpus when non-zero."),
      ProtoStringKey<SW>("idempotency_key")
          .Doc("A second submission with the same key returns the first sweep."),
      ProtoBoolKey<SW>("no_reuse").Doc("Retrain runs whose content hash already succeeded."),
      BlockKey("early_stopping", EarlyStoppingKeyTable(),
               "ASHA: stop losing runs at rungs (docs/sweeps.md)."),
      BlockKey("search", SearchKeyTable(),
               "TPE: propose the random axes' values from results instead of drawing them (docs/sweeps.md)."),
  });
  return *keys;
}

const std::vector<std::string>& SweepKeys() {
  static const auto* names = new std::vector<std::string>(SweepKeyTable().Names());
  return *names;
}

const std::vector<std::string>& EarlyStoppingKeys() {
  static const auto* names = new std::vector<std::string>(EarlyStoppingKeyTable().Names());
  return *names;
}

const std::vector<std::string>& SearchKeys() {
  static const auto* names = new std::vector<std::string>(SearchKeyTable().Names());
  return *names;
}

absl::Status ReadSweepScalars(const YAML::Node& node, v1::SweepSpec* sweep) {
  for (const SpecKey<SW>& key : SweepKeyTable().keys()) {
    if (!key.read) continue;  // The base, the axes and the blocks have parsers of their own.
    const YAML::Node value = node[key.info.name];
    if (yaml_util::IsNullish(value)) continue;
    if (absl::Status st = key.read(value, key.info.name, sweep); !st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status ParseEarlyStopping(const YAML::Node& node, uint32_t base_epochs, v1::EarlyStopping* out) {
  const std::string b = "early_stopping";
  *out = EarlyStoppingKeyTable().defaults();
  out->set_max_resource(base_epochs);
  KeyNodes read;
  if (auto st = EarlyStoppingKeyTable().Read(node, b, out, &read); !st.ok()) return st;
  if (auto st = Missing(node, read, b, "metric", "name the metric to rank runs by (e.g. top1)"); !st.ok())
    return st;
  if (auto st = FillMode(b, out->metric(), out->mutable_mode()); !st.ok()) return AtLine(node, st);
  v1::SweepSpec probe;
  *probe.mutable_early_stopping() = *out;
  probe.set_base(absl::StrCat("schedule: {epochs: ", base_epochs, "}\n"));
  return AtLine(node, CheckEarlyStopping(probe));
}

absl::Status ParseSearch(const YAML::Node& node, v1::SweepSpec* sweep) {
  const std::string b = "search";
  v1::Search* out = sweep->mutable_search();
  *out = SearchKeyTable().defaults();
  KeyNodes read;
  if (auto st = SearchKeyTable().Read(node, b, out, &read); !st.ok()) return st;
  if (auto st = Missing(node, read, b, "metric", "name the metric to rank runs by (e.g. top1)"); !st.ok())
    return st;
  if (auto st = Missing(node, read, b, "budget", "a search needs a budget (the number of runs)"); !st.ok())
    return st;
  if (auto st = FillMode(b, out->metric(), out->mutable_mode()); !st.ok()) return AtLine(node, st);
  return AtLine(node, CheckSearch(*sweep));
}

absl::Status CheckRandomAxis(const v1::RandomAxis& axis) {
  const std::string path = "random." + axis.key();
  if (axis.choices_size() > 0) return absl::OkStatus();
  const double min = axis.min(), max = axis.max();
  for (const auto& [key, value] : {std::make_pair(".min", min), std::make_pair(".max", max)}) {
    if (!std::isfinite(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, key, ": value ", yaml_util::FormatDouble(value), " is not a finite number"));
    }
  }
  if (max < min) {
    return Invalid(path + ".max", yaml_util::FormatDouble(max),
                   "is out of range: must be >= " + yaml_util::FormatDouble(min));
  }
  if (axis.log() && min <= 0) {
    return Invalid(path + ".min", yaml_util::FormatDouble(min), "is out of range: log needs min > 0");
  }
  if (axis.integer() && std::ceil(min) > std::floor(max)) {
    return Invalid(path + ".max", yaml_util::FormatDouble(max),
                   "leaves no integer: an integer axis needs one in [min, max] (min " +
                       yaml_util::FormatDouble(min) + ")");
  }
  return absl::OkStatus();
}

absl::Status CheckRandomAxes(const v1::SweepSpec& sweep) {
  for (const v1::RandomAxis& axis : sweep.random()) {
    if (absl::Status s = CheckRandomAxis(axis); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status FillObjectiveModes(v1::SweepSpec* sweep) {
  if (sweep->has_early_stopping() && !sweep->early_stopping().policy().empty()) {
    v1::EarlyStopping* es = sweep->mutable_early_stopping();
    if (absl::Status st = FillMode("early_stopping", es->metric(), es->mutable_mode()); !st.ok()) return st;
  }
  if (sweep->has_search() && !sweep->search().algorithm().empty()) {
    v1::Search* s = sweep->mutable_search();
    if (absl::Status st = FillMode("search", s->metric(), s->mutable_mode()); !st.ok()) return st;
  }
  return absl::OkStatus();
}

uint32_t AshaMaxResource(const v1::SweepSpec& sweep) {
  const uint32_t max = sweep.early_stopping().max_resource();
  if (max > 0) return max;
  const absl::StatusOr<ExperimentConfig> base = ParseExperimentYaml(sweep.base(), "");
  return base.ok() ? static_cast<uint32_t>(TrainedEpochs(base->schedule)) : 0;
}

absl::Status CheckEarlyStopping(const v1::SweepSpec& sweep) {
  const v1::EarlyStopping& es = sweep.early_stopping();
  if (es.policy().empty()) return absl::OkStatus();
  const std::string b = "early_stopping.";
  if (absl::Status st = CheckWireWords(EarlyStoppingKeyTable(), es, "early_stopping"); !st.ok()) return st;
  if (es.min_resource() < 1) return Invalid(b + "min_resource", "0", "is out of range: must be >= 1");
  if (es.reduction_factor() < 2) {
    return Invalid(b + "reduction_factor", absl::StrCat(es.reduction_factor()),
                   "is out of range: must be >= 2");
  }
  const uint32_t max = AshaMaxResource(sweep);
  if (max <= es.min_resource()) {
    return Invalid(
        b + "max_resource", absl::StrCat(max),
        absl::StrCat("leaves no rung: it must be greater than min_resource (", es.min_resource(), ")",
                     es.max_resource() == 0 ? "; it defaults to the epochs the base trains" : ""));
  }
  return absl::OkStatus();
}

absl::Status CheckSearch(const v1::SweepSpec& sweep) {
  const v1::Search& s = sweep.search();
  if (s.algorithm().empty()) return absl::OkStatus();
  const std::string b = "search.";
  if (absl::Status st = CheckWireWords(SearchKeyTable(), s, "search"); !st.ok()) return st;
  if (s.budget() < 1 || s.budget() > limits::kMaxSearchBudget) {
    return Invalid(b + "budget", absl::StrCat(s.budget()),
                   absl::StrCat("is out of range: must be in [1, ", limits::kMaxSearchBudget, "]"));
  }
  // 0 takes the default (parallel 1, n_startup 3, n_candidates 24).
  for (const auto& [key, value, max] :
       {std::make_tuple("parallel", s.parallel(), limits::kMaxSearchParallel),
        std::make_tuple("n_startup", s.n_startup(), limits::kMaxSearchStartup),
        std::make_tuple("n_candidates", s.n_candidates(), limits::kMaxSearchCandidates)}) {
    if (value > max) {
      return Invalid(b + key, absl::StrCat(value), absl::StrCat("is out of range: must be <= ", max));
    }
  }
  if (!(s.gamma() >= 0 && s.gamma() < 1)) {
    return Invalid(b + "gamma", absl::StrCat(s.gamma()), "is out of range: must be in (0, 1)");
  }
  if (sweep.random_size() == 0) {
    return absl::InvalidArgumentError("search: a search needs random axes to search over (random: {...})");
  }
  if (sweep.random_size() > limits::kMaxSearchAxes) {
    return absl::InvalidArgumentError(absl::StrCat("random: ", sweep.random_size(),
                                                   " axes, more than the limit of ", limits::kMaxSearchAxes,
                                                   " for a search"));
  }
  for (const v1::RandomAxis& axis : sweep.random()) {
    if (axis.choices_size() > limits::kMaxSearchChoices) {
      return absl::InvalidArgumentError(
          absl::StrCat("random.", axis.key(), ".choices: ", limits::FormatCount(axis.choices_size()),
                       " choices, more than the limit of ", limits::FormatCount(limits::kMaxSearchChoices),
                       " for a search"));
    }
  }
  if (sweep.grid_size() > 0) {
    return absl::InvalidArgumentError(absl::StrCat("grid: ", sweep.grid(0).name(),
                                                   ": a search proposes points of the random axes only; "
                                                   "give categorical axes as random {choices: [...]}"));
  }
  if (sweep.num_samples() > 1) {
    return Invalid("num_samples", absl::StrCat(sweep.num_samples()),
                   "cannot be used with search: search.budget sets the number of runs");
  }
  return absl::OkStatus();
}

}  // namespace nmsparse
