#include "worker/trainer/trainer_testing.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

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

}  // namespace nmsparse
