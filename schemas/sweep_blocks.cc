#include "schemas/sweep_blocks.h"

#include <cmath>
#include <functional>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "schemas/limits.h"
#include "schemas/yaml_util.h"

namespace nmsparse {
namespace {

using yaml_util::Error;

absl::Status Invalid(const std::string& key, const std::string& value, const std::string& reason) {
  return absl::InvalidArgumentError(absl::StrCat(key, ": value ", value, " ", reason));
}

// An unsigned count key of a block: in [min, max], handed to `set` when present.
struct CountKey {
  const char* key;
  int64_t min;
  std::function<void(uint32_t)> set;
  int64_t max = UINT32_MAX;
};

absl::Status ReadCounts(const YAML::Node& node, const std::string& block, const std::vector<CountKey>& keys) {
  for (const CountKey& k : keys) {
    if (yaml_util::IsNullish(node[k.key])) continue;
    auto v = yaml_util::ReadInt(node[k.key], block + "." + k.key, k.min, k.max);
    if (!v.ok()) return v.status();
    k.set(static_cast<uint32_t>(*v));
  }
  return absl::OkStatus();
}

absl::Status ReadWord(const YAML::Node& node, const std::string& block, const char* key,
                      const std::vector<std::string>& allowed, std::string* out) {
  if (yaml_util::IsNullish(node[key])) return absl::OkStatus();
  std::vector<std::pair<std::string, std::string>> names;
  for (const std::string& a : allowed) names.emplace_back(a, a);
  auto v = yaml_util::ReadEnum(node[key], block + "." + key, names);
  if (!v.ok()) return v.status();
  *out = *v;
  return absl::OkStatus();
}

absl::Status ReadMetric(const YAML::Node& node, const std::string& block, std::string* out) {
  if (yaml_util::IsNullish(node["metric"])) {
    return Error(node, block + ".metric", "missing: name the metric to rank runs by (e.g. top1)");
  }
  auto v = yaml_util::ReadString(node["metric"], block + ".metric");
  if (!v.ok()) return v.status();
  *out = *v;
  return absl::OkStatus();
}

// The file's line of the block, for the cross-key checks of Check*.
absl::Status AtLine(const YAML::Node& node, const absl::Status& st) {
  if (st.ok() || yaml_util::Line(node) == 0) return st;
  return absl::InvalidArgumentError(absl::StrCat("line ", yaml_util::Line(node), ": ", st.message()));
}

bool IsMode(const std::string& mode) { return mode == "max" || mode == "min"; }

}  // namespace

const std::vector<std::string>& SweepKeys() {
  static const auto* keys = new std::vector<std::string>{
      "name",           "base",     "base_file",   "grid",         "random",          "num_samples",
      "seed",           "priority", "max_retries", "gpus_per_run", "idempotency_key", "no_reuse",
      "early_stopping", "search"};
  return *keys;
}

const std::vector<std::string>& EarlyStoppingKeys() {
  static const auto* keys = new std::vector<std::string>{
      "policy", "metric", "mode", "resource", "min_resource", "reduction_factor", "max_resource"};
  return *keys;
}

const std::vector<std::string>& SearchKeys() {
  static const auto* keys = new std::vector<std::string>{
      "algorithm", "budget", "seed", "metric", "mode", "parallel", "n_startup", "gamma", "n_candidates"};
  return *keys;
}

absl::Status ParseEarlyStopping(const YAML::Node& node, uint32_t base_epochs, v1::EarlyStopping* out) {
  const std::string b = "early_stopping";
  if (!node.IsMap()) return Error(node, b, "value " + yaml_util::Describe(node) + " is not a map");
  if (auto st = yaml_util::CheckKeys(node, b + ".", EarlyStoppingKeys()); !st.ok()) return st;
  out->set_policy("asha");
  out->set_mode("max");
  out->set_resource("epoch");
  out->set_min_resource(1);
  out->set_reduction_factor(3);
  out->set_max_resource(base_epochs);
  if (auto st = ReadWord(node, b, "policy", {"asha"}, out->mutable_policy()); !st.ok()) return st;
  if (auto st = ReadWord(node, b, "mode", {"max", "min"}, out->mutable_mode()); !st.ok()) return st;
  if (auto st = ReadWord(node, b, "resource", {"epoch"}, out->mutable_resource()); !st.ok()) return st;
  if (auto st = ReadMetric(node, b, out->mutable_metric()); !st.ok()) return st;
  if (auto st = ReadCounts(node, b,
                           {
                               {"min_resource", 1, [&](uint32_t v) { out->set_min_resource(v); }},
                               {"reduction_factor", 2, [&](uint32_t v) { out->set_reduction_factor(v); }},
                               {"max_resource", 1, [&](uint32_t v) { out->set_max_resource(v); }},
                           });
      !st.ok())
    return st;
  v1::SweepSpec probe;
  *probe.mutable_early_stopping() = *out;
  probe.mutable_base()->mutable_schedule()->set_epochs(base_epochs);
  return AtLine(node, CheckEarlyStopping(probe));
}

absl::Status ParseSearch(const YAML::Node& node, v1::SweepSpec* sweep) {
  const std::string b = "search";
  v1::Search* out = sweep->mutable_search();
  if (!node.IsMap()) return Error(node, b, "value " + yaml_util::Describe(node) + " is not a map");
  if (auto st = yaml_util::CheckKeys(node, b + ".", SearchKeys()); !st.ok()) return st;
  out->set_algorithm("tpe");
  out->set_mode("max");
  out->set_parallel(1);
  out->set_n_startup(3);
  out->set_gamma(0.25);
  out->set_n_candidates(24);
  if (auto st = ReadWord(node, b, "algorithm", {"tpe"}, out->mutable_algorithm()); !st.ok()) return st;
  if (auto st = ReadWord(node, b, "mode", {"max", "min"}, out->mutable_mode()); !st.ok()) return st;
  if (auto st = ReadMetric(node, b, out->mutable_metric()); !st.ok()) return st;
  if (yaml_util::IsNullish(node["budget"])) {
    return Error(node, b + ".budget", "missing: a search needs a budget (the number of runs)");
  }
  if (!yaml_util::IsNullish(node["seed"])) {
    auto seed = yaml_util::ReadInt(node["seed"], b + ".seed", 0);
    if (!seed.ok()) return seed.status();
    out->set_seed(static_cast<uint64_t>(*seed));
  }
  if (auto st = ReadCounts(
          node, b,
          {
              {"budget", 1, [&](uint32_t v) { out->set_budget(v); }, limits::kMaxSearchBudget},
              {"parallel", 1, [&](uint32_t v) { out->set_parallel(v); }, limits::kMaxSearchParallel},
              {"n_startup", 1, [&](uint32_t v) { out->set_n_startup(v); }, limits::kMaxSearchStartup},
              {"n_candidates", 1, [&](uint32_t v) { out->set_n_candidates(v); },
               limits::kMaxSearchCandidates},
          });
      !st.ok())
    return st;
  if (!yaml_util::IsNullish(node["gamma"])) {
    auto gamma = yaml_util::ReadDouble(node["gamma"], b + ".gamma", 0.0, 1.0, /*max_open=*/true);
    if (!gamma.ok()) return gamma.status();
    if (*gamma <= 0)
      return Error(node["gamma"], b + ".gamma", "value " + node["gamma"].Scalar() + " must be > 0");
    out->set_gamma(*gamma);
  }
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

uint32_t AshaMaxResource(const v1::SweepSpec& sweep) {
  const uint32_t max = sweep.early_stopping().max_resource();
  return max > 0 ? max : static_cast<uint32_t>(sweep.base().schedule().epochs());
}

absl::Status CheckEarlyStopping(const v1::SweepSpec& sweep) {
  const v1::EarlyStopping& es = sweep.early_stopping();
  if (es.policy().empty()) return absl::OkStatus();
  const std::string b = "early_stopping.";
  if (es.policy() != "asha") return Invalid(b + "policy", "'" + es.policy() + "'", "is not one of asha");
  if (es.metric().empty()) return Invalid(b + "metric", "''", "is empty: name an epoch metric (e.g. top1)");
  if (!IsMode(es.mode())) return Invalid(b + "mode", "'" + es.mode() + "'", "is not one of max, min");
  if (es.resource() != "epoch")
    return Invalid(b + "resource", "'" + es.resource() + "'", "is not one of epoch");
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
                     es.max_resource() == 0 ? "; it defaults to the base's schedule.epochs" : ""));
  }
  return absl::OkStatus();
}

absl::Status CheckSearch(const v1::SweepSpec& sweep) {
  const v1::Search& s = sweep.search();
  if (s.algorithm().empty()) return absl::OkStatus();
  const std::string b = "search.";
  if (s.algorithm() != "tpe") return Invalid(b + "algorithm", "'" + s.algorithm() + "'", "is not one of tpe");
  if (s.metric().empty()) return Invalid(b + "metric", "''", "is empty: name a final metric (e.g. top1)");
  if (!IsMode(s.mode())) return Invalid(b + "mode", "'" + s.mode() + "'", "is not one of max, min");
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
