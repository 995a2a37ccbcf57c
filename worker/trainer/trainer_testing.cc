#include "worker/trainer/trainer_testing.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "schemas/model_catalog.h"
#include "worker/trainer/checkpoint/checkpoint.h"
#include "worker/trainer/models/model_factory.h"

namespace nmsparse {

int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

std::string TestTempDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(base ? base : "/tmp") + "/" + name + "." + std::to_string(getpid());
  mkdir(dir.c_str(), 0755);
  return dir;
}

CapturedRun::CapturedRun(const std::string& name) {
  options.out_dir = TestTempDir(name);
  options.metrics = &metrics;
  options.log = &log;
}

ExperimentConfig ParseValidExperiment(const std::string& yaml) {
  auto config = ParseExperimentYaml(yaml, "test.yaml");
  EXPECT_TRUE(config.ok()) << config.status();
  if (!config.ok()) return ExperimentConfig{};
  EXPECT_TRUE(ValidateExperiment(*config).ok()) << ValidateExperiment(*config);
  return *config;
}

std::vector<std::string> MetricLines(const std::string& out, const std::string& kind) {
  std::istringstream in(out);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"kind\":\"" + kind + "\"") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

std::map<std::string, std::string> MetricFields(const std::string& line) {
  std::map<std::string, std::string> fields;
  std::istringstream parts(line.size() > 2 ? line.substr(1, line.size() - 2) : "");
  for (std::string part; std::getline(parts, part, ',');) {
    const auto colon = part.find("\":");
    if (colon == std::string::npos) continue;
    std::string value = part.substr(colon + 2);
    if (!value.empty() && value.front() == '"') value = value.substr(1, value.size() - 2);
    fields[part.substr(1, colon - 1)] = value;
  }
  return fields;
}

std::map<std::string, std::string> LastMetricFields(const std::string& out, const std::string& kind) {
  const auto lines = MetricLines(out, kind);
  return lines.empty() ? std::map<std::string, std::string>{} : MetricFields(lines.back());
}

std::shared_ptr<ClassifierImpl> ExpectSameCheckpointWeights(const std::string& model_name,
                                                            const std::string& dir_a,
                                                            const std::string& dir_b,
                                                            WeightTolerance tolerance) {
  const ModelArch arch = *LookupModel(model_name);
  auto a = CreateModel(arch);
  auto b = CreateModel(arch);
  LoadModelFromCheckpoint(CheckpointPath(dir_a), *a);
  LoadModelFromCheckpoint(CheckpointPath(dir_b), *b);
  auto pa = a->named_parameters();
  auto pb = b->named_parameters();
  EXPECT_EQ(pa.size(), pb.size());
  for (const auto& item : pa) {
    const torch::Tensor* other = pb.find(item.key());
    if (other == nullptr) {
      ADD_FAILURE() << item.key() << " is missing from " << dir_b;
      continue;
    }
    const bool same = tolerance.rtol == 0.0 && tolerance.atol == 0.0
                          ? torch::equal(item.value(), *other)
                          : torch::allclose(item.value(), *other, tolerance.rtol, tolerance.atol);
    EXPECT_TRUE(same) << item.key() << " max diff " << (item.value() - *other).abs().max().item<double>();
  }
  return a;
}

double DistanceFromFreshWeights(const std::string& model_name, ClassifierImpl& trained) {
  auto fresh = CreateModel(*LookupModel(model_name))->named_parameters();
  double distance = 0.0;
  for (const auto& item : trained.named_parameters()) {
    distance += (item.value() - fresh[item.key()]).abs().sum().item<double>();
  }
  return distance;
}

}  // namespace nmsparse
