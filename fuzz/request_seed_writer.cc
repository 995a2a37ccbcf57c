// Writes the seed corpus of submit_sweep_request_fuzzer: each sweep file named on the command line, parsed as
// nmctl parses it, serialized as the v1.SubmitSweepRequest nmctl would send (a dry run too).
// Usage: request_seed_writer OUT_DIR SWEEP.yaml...
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "nmsparse/v1/coordinator.pb.h"
#include "schemas/sweep.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s OUT_DIR SWEEP.yaml...\n", argv[0]);
    return 2;
  }
  for (int i = 2; i < argc; ++i) {
    const absl::StatusOr<nmsparse::v1::SweepSpec> sweep = nmsparse::ParseSweepFile(argv[i]);
    if (!sweep.ok()) {
      std::fprintf(stderr, "%s\n", sweep.status().ToString().c_str());
      return 1;
    }
    for (const bool dry_run : {false, true}) {
      nmsparse::v1::SubmitSweepRequest request;
      *request.mutable_spec() = *sweep;
      request.set_dry_run(dry_run);
      const std::string name = std::string(argv[1]) + "/" + std::filesystem::path(argv[i]).stem().string() +
                               (dry_run ? "-dry" : "");
      std::ofstream(name, std::ios::binary) << request.SerializeAsString();
    }
  }
  return 0;
}
