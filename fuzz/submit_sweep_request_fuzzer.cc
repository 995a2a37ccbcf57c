// Fuzzes the coordinator's validation of a SubmitSweep request, as gRPC hands it over: the bytes are a
// serialized v1.SubmitSweepRequest, checked and expanded by the production path (run count against the limit,
// ExpandWithSchemas, the never-fits check) on an in-memory SQLite store. Whatever is refused must be
// INVALID_ARGUMENT (the client's fault, with a message), never a crash or another code; whatever is accepted
// stored exactly the runs it answered with.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "fuzz/fuzz_check.h"
#include "nmsparse/v1/coordinator.pb.h"
#include "server/store/store.h"
#include "server/sweeps/schemas_expander.h"
#include "server/sweeps/sweep_submission.h"

namespace {
constexpr int64_t kMaxRuns = 64;  // Keeps each input fast; the limit check itself is part of what is fuzzed.
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nmsparse::v1::SubmitSweepRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;  // gRPC would refuse these bytes.
  absl::StatusOr<std::unique_ptr<nmsparse::server::Store>> store = nmsparse::server::Store::Open(":memory:");
  FUZZ_CHECK(store.ok(), store.status().ToString());
  const absl::StatusOr<nmsparse::v1::SubmitSweepResponse> response =
      nmsparse::server::SubmitSweep(store->get(), nmsparse::server::ExpandWithSchemas, kMaxRuns, request,
                                    /*owner=*/{"fuzz", ""});
  if (!response.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(response.status()) && !response.status().message().empty(),
               response.status().ToString());
    return 0;
  }
  FUZZ_CHECK(response->runs_size() >= 1 && response->runs_size() <= kMaxRuns, response->DebugString());
  return 0;
}
