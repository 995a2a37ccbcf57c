#include "worker/trainer/trainer_testing.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace nmsparse {

std::string TestTempDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(base ? base : "/tmp") + "/" + name + "." + std::to_string(getpid());
  mkdir(dir.c_str(), 0755);
  return dir;
}

ExperimentConfig ParseValidExperiment(const std::string& yaml) {
  auto config = ParseExperimentYaml(yaml, "test.yaml");
  EXPECT_TRUE(config.ok()) << config.status();
  if (!config.ok()) return ExperimentConfig{};
  EXPECT_TRUE(ValidateExperiment(*config).ok()) << ValidateExperiment(*config);
  return *config;
}

}  // namespace nmsparse
