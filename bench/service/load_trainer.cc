// A stand-in trainer for service benchmarks: speaks nmtrain's process protocol (JSON metric lines on stdout,
// exit code 0 on success) without training anything. nmworker runs it like nmtrain:
//   load_trainer --spec FILE --out DIR [--resume] [--sleep_ms 500] [--epochs 1] [--top1 0.5]
// It sleeps sleep_ms in total, spread over the epochs, printing one epoch line per epoch, then a final line.
// Defaults may also come from the environment (NMSPARSE_LOAD_SLEEP_MS, NMSPARSE_LOAD_EPOCHS), which the agent
// passes through to its ranks; flags win.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

struct Options {
  long sleep_ms = 500;
  long epochs = 1;
  double top1 = 0.5;
};

// Unknown arguments (--spec, --out, --resume, ...) are accepted and ignored: the agent passes nmtrain's.
bool Parse(int argc, char** argv, Options* o) {
  if (const char* v = std::getenv("NMSPARSE_LOAD_SLEEP_MS")) o->sleep_ms = std::strtol(v, nullptr, 10);
  if (const char* v = std::getenv("NMSPARSE_LOAD_EPOCHS")) o->epochs = std::strtol(v, nullptr, 10);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (a != name) return nullptr;
      if (i + 1 >= argc) return nullptr;
      return argv[++i];
    };
    if (const char* v = value("--sleep_ms")) {
      o->sleep_ms = std::strtol(v, nullptr, 10);
    } else if (const char* v = value("--epochs")) {
      o->epochs = std::strtol(v, nullptr, 10);
    } else if (const char* v = value("--top1")) {
      o->top1 = std::strtod(v, nullptr);
    }
  }
  return o->sleep_ms >= 0 && o->epochs >= 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!Parse(argc, argv, &o)) {
    std::fprintf(stderr, "load_trainer: --sleep_ms must be >= 0 and --epochs >= 1\n");
    return 2;
  }
  for (long e = 0; e < o.epochs; ++e) {
    std::this_thread::sleep_for(std::chrono::milliseconds(o.sleep_ms / o.epochs));
    std::printf("{\"kind\":\"epoch\",\"epoch\":%ld,\"step\":%ld,\"loss\":%.4f}\n", e, e + 1, 1.0 / (e + 1));
    std::fflush(stdout);
  }
  std::printf("{\"kind\":\"final\",\"top1\":%.4f}\n", o.top1);
  std::fflush(stdout);
  return 0;
}
