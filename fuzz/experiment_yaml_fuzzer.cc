// Fuzzes the experiment-spec parser (nested form; a flat reference config is detected and parsed too) and the
// promises of the canonical form: a valid spec's canonical YAML parses back to an equal config, and the
// direct writer gives the emitter's text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "schemas/experiment_config.h"
#include "schemas/testing/generic_paths.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> warnings;
  const absl::StatusOr<nmsparse::ExperimentConfig> config =
      nmsparse::ParseExperimentYaml(text, "fuzz.yaml", &warnings);
  if (!config.ok()) {
    FUZZ_CHECK(!config.status().message().empty(), "an error without a message");
    return 0;
  }
  if (!nmsparse::ValidateExperiment(*config).ok()) return 0;
  const std::string canonical = nmsparse::CanonicalYaml(*config);
  FUZZ_CHECK(canonical == nmsparse::testing::CanonicalYamlByEmitter(*config), canonical);
  const absl::StatusOr<nmsparse::ExperimentConfig> again =
      nmsparse::ParseExperimentYaml(canonical, "canonical.yaml");
  FUZZ_CHECK(again.ok(), again.status().ToString() + "\n" + canonical);
  FUZZ_CHECK(*again == *config, canonical);
  return 0;
}
