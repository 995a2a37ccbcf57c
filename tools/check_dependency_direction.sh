#!/usr/bin/env bash
# The project's dependency rule (docs/architecture.md): cli/ and server/ never depend on LibTorch, cli/ never on
# server/, and the trainer and the sparsity
# engine never on gRPC or protobuf. Checked on Bazel's graph, so an include that a BUILD file allows is
# caught whatever file it is in.
set -u
cd "$(dirname "$0")/.."
status=0
forbid() {  # forbid FROM TO WHY: no path from targets FROM to targets TO.
  local found
  found=$(bazel query --noshow_progress "somepath($1, $2)" 2>/dev/null)
  if [[ -n "$found" ]]; then
    echo "dependency rule broken: $3; a path:"
    echo "$found" | sed 's/^/  /'
    status=1
  fi
}
forbid '//cli/...' '@system//:torch + @system//:torch_distributed' "cli/ must not depend on LibTorch"
forbid '//server/...' '@system//:torch + @system//:torch_distributed' "server/ must not depend on LibTorch"
forbid '//cli/...' '//server/...' "cli/ must not depend on server/ (shared code lives in schemas/, common/, proto/)"
forbid '//worker/trainer/... + //worker/sparsity/...' '@system//:grpc + @system//:protobuf' \
  "worker/trainer and worker/sparsity must not depend on gRPC or protobuf (the trainer also builds with CMake)"
[[ $status -eq 0 ]] && echo "dependency direction: cli and server without LibTorch, cli without server, trainer without gRPC or protobuf"
exit $status
