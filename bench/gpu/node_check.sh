#!/usr/bin/env bash
# The first thing to run on a new GPU node (docs/gpu.md): one command that proves the GPU path there and
# writes one summary, PASS / FAIL / SKIP per check and the key figures. The node needs PyTorch 2.x with CUDA
# from pip, CMake, ninja and nvcc (compute-sanitizer comes with nvcc's toolkit); no Bazel, gRPC or network.
#
#   source build/gpu-node/env.sh                       # googletest, abseil, yaml-cpp, Fashion-MNIST
#   NMSPARSE_TORCH_PYTHON=$(which python3) bench/gpu/node_check.sh [BUILD_DIR]     (default build/cuda)
#
# Stage 1, correctness (about 5 minutes on a 16-core H100 node):
#   build     nmtrain, the CUDA tests and the 2:4 GEMM bench with CMake, in parallel (-j nproc)
#   gpu_tests every test that uses the GPU: cusparselt_gpu_test, nm_mask_gpu_test, dynamic_mask_test and
#             nmtrain_test's GPU run
#   memcheck  compute-sanitizer --tool memcheck over the cuSPARSELt path (plans, search, compression, fused bias,
#             both gradients) at ViT-B/16's and ViT-L/16's MLP shapes (batch 8: memcheck is slow)
#   sync_*    20 training steps of ViT-B/16 (bf16, batch 64) under NMTRAIN_SYNC_DEBUG=error, which makes any
#             synchronising CUDA call inside a step an error: SR-STE 2:4 on FF + QKV, and the MLP linears as
#             2:4 kernels under accelerate: force
# Stage 2, figures (about 5 minutes):
#   gemm_bench   bench/gpu/semi_structured_gemm_bench: per-GEMM 2:4 speedups, output written column- and
#                row-major (NMSPARSE_CUSPARSELT_OUTPUT: the faster is the one to set, docs/accelerated-2-4.md)
#   gpu_bench    a short bench/gpu/gpu_bench.sh (ViT-B/16 only, one round): images/s against timm eager and
#                compiled (needs timm in PYTHON; SKIP without), SR-STE 2:4 step time / dense
#   auto_e2e     ViT-B/16 batch 256 SR-STE 2:4 FF with the MLP linears under auto and force against masked
#                dense (accelerate: off): the goal is auto >= 0.98x
# Usage: bench/gpu/node_check.sh [BUILD_DIR] [--stage 1|2]   (both stages by default)
# Environment: NMSPARSE_TORCH_PYTHON (python3), PYTHON (for timm; NMSPARSE_TORCH_PYTHON), TORCH_CUDA_ARCH_LIST
# (9.0; 8.0 for an A100), NMSPARSE_DEPS_PREFIX (env.sh sets it).
set -uo pipefail
cd "$(dirname "$0")/../.."
build=build/cuda
stages="1 2"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --stage) stages=$2; shift 2 ;;
    *) build=$1; shift ;;
  esac
done
export NMSPARSE_TORCH_PYTHON=${NMSPARSE_TORCH_PYTHON:-$(command -v python3)}
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
python=${PYTHON:-$NMSPARSE_TORCH_PYTHON}
out="$build/node_check"
mkdir -p "$out"
summary="$out/summary.txt"
start=$SECONDS

# result CHECK STATUS [DETAIL]: one summary line, also printed.
result() {
  printf '%-12s %-5s %s\n' "$1" "$2" "${3:-}" | tee -a "$summary"
}

# check NAME LOG COMMAND...: runs the command (output to LOG), PASS on exit 0.
check() {
  local name=$1 log=$2
  shift 2
  local t0=$SECONDS
  if "$@" > "$log" 2>&1; then
    result "$name" PASS "$((SECONDS - t0)) s, log $log"
  else
    result "$name" FAIL "exit $?, $((SECONDS - t0)) s, log $log: $(grep -m1 -iE 'error|fail' "$log" | cut -c1-160)"
  fi
}

# A ViT-B/16 spec for 20 steps on synthetic images (bf16, batch BATCH), with SPARSITY and SEMI sections.
vit_spec() {
  cat <<YAML
name: node-check
seed: 0
model: {name: vit_base_patch16_224}
data: {dataset: synthetic, synthetic_size: $(($1 * 20)), eval_subset: $1, batch_size: $1}
optimizer: {lr: 0.001, weight_decay: 0.05}
schedule: {epochs: 1, warmup_epochs: 0}
resources: {precision: bf16, cpu_threads: 4}
sparsity: $2
semi_structured: $3
YAML
}

stage1() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /' |
    tee -a "$summary"
  local torch_dir
  torch_dir=$(bash tools/libtorch2_env.sh) || { result build FAIL "no torch at $NMSPARSE_TORCH_PYTHON"; return; }
  check configure "$out/configure.log" cmake -S worker/trainer -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$torch_dir" -DNMSPARSE_REQUIRE_CUDA=ON -DNMSPARSE_REQUIRE_TESTS=ON \
    -DNMSPARSE_DEPS_PREFIX="${NMSPARSE_DEPS_PREFIX:-}"
  check build "$out/build.log" cmake --build "$build" -j "$(nproc)" --target nmtrain cusparselt_gpu_test \
    nm_mask_gpu_test dynamic_mask_test nmtrain_test semi_structured_gemm_bench
  [[ -x "$build/nmtrain" ]] || return

  check gpu_tests "$out/gpu_tests.log" bash -c "cd '$build' && ./cusparselt_gpu_test && ./nm_mask_gpu_test &&
    ./dynamic_mask_test && ./nmtrain_test --gtest_filter='*Gpu*'"
  grep -h "SKIPPED\|Skipped" "$out/gpu_tests.log" | sed 's/^/  note: /' | tee -a "$summary"

  local sanitizer
  sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
  if [[ -n "$sanitizer" ]]; then
    check memcheck "$out/memcheck.log" "$sanitizer" --tool memcheck --error-exitcode 1 \
      "$build/cusparselt_gpu_test" --gtest_filter='CusparseLtGpuTest.VitLayerShapesAtBatch8'
  else
    result memcheck SKIP "no compute-sanitizer in PATH or /usr/local/cuda/bin"
  fi

  local srste='{sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4, sparsity_loc: FFQKV}'
  vit_spec 64 "$srste" '{}' > "$out/sync_srste.yaml"
  check sync_srste "$out/sync_srste.log" env NMTRAIN_SYNC_DEBUG=error "$build/nmtrain" \
    --spec "$out/sync_srste.yaml" --out "$out/run_srste" --device cuda
  vit_spec 64 "$srste" "{layers: 'blocks.*.mlp.*', accelerate: force, decision_cache: $out/timings.tsv}" \
    > "$out/sync_force.yaml"
  check sync_force "$out/sync_force.log" env NMTRAIN_SYNC_DEBUG=error "$build/nmtrain" \
    --spec "$out/sync_force.yaml" --out "$out/run_force" --device cuda
  grep -o '"semi_structured/blocks\.0\.mlp\.fc[12]":"[^"]*"' "$out/sync_force.log" | sed 's/^/  /' |
    tee -a "$summary"
}

stage2() {
  [[ -x "$build/semi_structured_gemm_bench" ]] || { result gemm_bench SKIP "not built (run stage 1)"; return; }
  check gemm_bench "$out/gemm_bench.log" "$build/semi_structured_gemm_bench" --iters 50
  # Per GEMM: the bare 2:4 GEMM's speedup over cuBLAS, each output order.
  awk 'substr($0, 22, 8) ~ /gemm_(col|row)/ {
         name = substr($0, 1, 20); sub(/ +$/, "", name); split(substr($0, 22), f, " ")
         printf "  2:4 gemm %-20s %s %s\n", name, f[1], f[4] }' "$out/gemm_bench.log" | tee -a "$summary"

  if "$python" -c 'import timm' 2> /dev/null; then
    check gpu_bench "$out/gpu_bench.log" env NMTRAIN="$build/nmtrain" PYTHON="$python" MODELS_ONLY=vit_b \
      ROUNDS=1 STEPS=30 bash bench/gpu/gpu_bench.sh
    grep -E "^ViT-B/16, batch 64|step time vs dense|SM use" "$out/gpu_bench.log" | sed 's/^/  /' | tee -a "$summary"
  else
    result gpu_bench SKIP "no timm in $python (pip install timm, or set PYTHON)"
  fi

  check auto_e2e "$out/auto_e2e.log" env NMTRAIN="$build/nmtrain" MODELS=vit_base_patch16_224 ROUNDS=1 \
    STEPS=20 MASKS=exact bash bench/gpu/semi_structured_e2e.sh
  grep -E "images/s" "$out/auto_e2e.log" | sed 's/^/  /' | tee -a "$summary"
  awk '/^  auto exact:/ { r = $0; sub(/.*s, /, "", r); sub(/x masked.*/, "", r)
         print (r + 0 >= 0.98 ? "  auto >= 0.98x masked dense: yes (" : "  auto >= 0.98x masked dense: NO (") r "x)" }' \
    "$out/auto_e2e.log" | tee -a "$summary"
}

echo "node check $(date -u +%FT%TZ), $(uname -n), build $build" | tee "$summary"
for stage in $stages; do
  t0=$SECONDS
  "stage$stage"
  echo "stage $stage: $((SECONDS - t0)) s" | tee -a "$summary"
done
echo "total: $((SECONDS - start)) s; summary in $summary" | tee -a "$summary"
! grep -q '^[a-z_0-9]* *FAIL' "$summary"
