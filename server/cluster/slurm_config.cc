#include "server/cluster/slurm_config.h"

#include <fstream>
#include <functional>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "yaml-cpp/yaml.h"

namespace nmsparse::server {
namespace {

using Setter = std::function<absl::Status(const YAML::Node&, const std::string& key, SlurmConfig*)>;

absl::Status Bad(const std::string& key, const YAML::Node& value, const std::string& why) {
  std::string text = value.IsScalar() ? value.Scalar() : "(not a scalar)";
  return absl::InvalidArgumentError(absl::StrCat("slurm.", key, ": '", text, "' ", why));
}

Setter Text(std::string SlurmConfig::*field) {
  return [field](const YAML::Node& v, const std::string& key, SlurmConfig* c) -> absl::Status {
    if (!v.IsScalar()) return Bad(key, v, "must be a string");
    c->*field = v.Scalar();
    return absl::OkStatus();
  };
}

template <typename T>
Setter Number(T SlurmConfig::*field, int64_t min) {
  return [field, min](const YAML::Node& v, const std::string& key, SlurmConfig* c) -> absl::Status {
    int64_t n = 0;
    if (!v.IsScalar() || !YAML::convert<int64_t>::decode(v, n)) return Bad(key, v, "must be an integer");
    if (n < min) return Bad(key, v, absl::StrCat("must be at least ", min));
    c->*field = static_cast<T>(n);
    return absl::OkStatus();
  };
}

Setter List(std::vector<std::string> SlurmConfig::*field) {
  return [field](const YAML::Node& v, const std::string& key, SlurmConfig* c) -> absl::Status {
    if (!v.IsSequence()) return Bad(key, v, "must be a list of strings");
    for (const YAML::Node& item : v) {
      if (!item.IsScalar()) return Bad(key, item, "must be a list of strings");
      (c->*field).push_back(item.Scalar());
    }
    return absl::OkStatus();
  };
}

struct Key {
  const char* name;
  Setter set;
};

// Every key of the `slurm:` section (defaults are SlurmConfig's initialisers; docs/cluster.md explains them).
const std::vector<Key>& SlurmKeys() {
  static const auto* keys = new std::vector<Key>{
      {"nmworker", Text(&SlurmConfig::nmworker)},
      {"work_dir", Text(&SlurmConfig::work_dir)},
      {"coordinator", Text(&SlurmConfig::coordinator)},
      {"partition", Text(&SlurmConfig::partition)},
      {"account", Text(&SlurmConfig::account)},
      {"time", Text(&SlurmConfig::time)},
      {"gpus_per_job", Number(&SlurmConfig::gpus_per_job, 0)},
      {"cpu_slots_per_job", Number(&SlurmConfig::cpu_slots_per_job, 1)},
      {"cpus_per_job", Number(&SlurmConfig::cpus_per_job, 0)},
      {"max_jobs", Number(&SlurmConfig::max_jobs, 1)},
      {"idle_exit_s", Number(&SlurmConfig::idle_exit_s, 1)},
      {"signal_before_end_s", Number(&SlurmConfig::signal_before_end_s, 0)},
      {"poll_interval_s", Number(&SlurmConfig::poll_interval_s, 1)},
      {"job_name", Text(&SlurmConfig::job_name)},
      {"log_dir", Text(&SlurmConfig::log_dir)},
      {"sbatch_args", List(&SlurmConfig::sbatch_args)},
      {"worker_args", List(&SlurmConfig::worker_args)},
      {"slurm_bin_dir", Text(&SlurmConfig::slurm_bin_dir)},
  };
  return *keys;
}

absl::Status Required(const std::string& value, const std::string& key) {
  if (value.empty()) return absl::InvalidArgumentError(absl::StrCat("slurm.", key, ": missing (required)"));
  if (value[0] != '/')
    return absl::InvalidArgumentError(
        absl::StrCat("slurm.", key, ": '", value, "' must be an absolute path (jobs start elsewhere)"));
  return absl::OkStatus();
}

absl::StatusOr<std::optional<SlurmConfig>> ParseSection(const YAML::Node& root) {
  if (!root.IsDefined() || root.IsNull()) return std::nullopt;
  if (!root.IsMap()) return absl::InvalidArgumentError("the file must be a mapping with a 'slurm:' section");
  for (const auto& entry : root) {
    if (entry.first.as<std::string>() != "slurm")
      return absl::InvalidArgumentError(
          absl::StrCat("unknown section '", entry.first.as<std::string>(), "' (known: slurm)"));
  }
  const YAML::Node section = root["slurm"];
  if (!section.IsMap()) return absl::InvalidArgumentError("slurm: must be a mapping of keys");
  SlurmConfig config;
  for (const auto& entry : section) {
    const std::string name = entry.first.as<std::string>();
    const Key* key = nullptr;
    for (const Key& k : SlurmKeys()) {
      if (name == k.name) key = &k;
    }
    if (key == nullptr) {
      std::vector<std::string> known;
      for (const Key& k : SlurmKeys()) known.push_back(k.name);
      return absl::InvalidArgumentError(
          absl::StrCat("slurm.", name, ": unknown key (known: ", absl::StrJoin(known, ", "), ")"));
    }
    NM_RETURN_IF_ERROR(key->set(entry.second, name, &config));
  }
  NM_RETURN_IF_ERROR(Required(config.nmworker, "nmworker"));
  NM_RETURN_IF_ERROR(Required(config.work_dir, "work_dir"));
  if (config.job_name.empty()) return absl::InvalidArgumentError("slurm.job_name: must not be empty");
  if (config.log_dir.empty()) config.log_dir = config.work_dir + "/slurm-logs";
  return config;
}

}  // namespace

absl::StatusOr<std::optional<SlurmConfig>> ParseSlurmConfig(const std::string& yaml,
                                                            const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ":", e.mark.line + 1, ": ", e.msg));
  }
  absl::StatusOr<std::optional<SlurmConfig>> config = ParseSection(root);
  if (!config.ok()) return absl::InvalidArgumentError(absl::StrCat(origin, ": ", config.status().message()));
  return config;
}

absl::StatusOr<std::optional<SlurmConfig>> LoadSlurmConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read config file ", path));
  std::stringstream text;
  text << in.rdbuf();
  return ParseSlurmConfig(text.str(), path);
}

}  // namespace nmsparse::server
