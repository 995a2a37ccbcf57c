# Shell helpers shared by the benchmark scripts (sourced, not run).

# The value of KEY in nmtrain's epoch line, read from nmtrain's stdout on stdin.
epoch_field() { grep '"kind":"epoch"' | grep -o "\"$1\":[0-9.e+-]*" | cut -d: -f2; }

# The median of the numbers on stdin, one per line.
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }

# images/s of nmtrain's step lines after the first WARMUP steps (stdin: nmtrain's stdout, run with
# schedule.log_every_steps = WARMUP): the steady rate, as timm's baseline skips its warm-up steps. Each step
# line covers the same number of images, so the steady rate is the harmonic mean of the lines after the first.
steady_rate() {
  grep '"kind":"step"' | awk -v warmup="$1" '
    { step = $0; sub(/.*"step":/, "", step); sub(/[,}].*/, "", step)
      rate = $0; sub(/.*"images_per_s":/, "", rate); sub(/[,}].*/, "", rate)
      if (step + 0 > warmup + 0 && rate > 0) { inverse += 1 / rate; n++ } }
    END { if (n) printf "%.6g\n", n / inverse; else exit 1 }'
}

# Builds nmserver, nmworker, nmctl and nmtrain and copies them into DIR: a rebuild while the benchmark runs must
# not change the programs under it. Sets nmserver, nmworker, nmctl and nmtrain to the copies.
build_service_programs() {  # build_service_programs DIR
  bazel build --jobs=1 --disk_cache="$HOME/.cache/nmsparse-bazel-disk" //server:nmserver //worker/agent:nmworker \
    //cli:nmctl //worker/trainer:nmtrain >&2 || return 1
  local bin
  bin=$(bazel info bazel-bin 2>/dev/null)
  cp -L "$bin/server/nmserver" "$bin/worker/agent/nmworker" "$bin/cli/nmctl" "$bin/worker/trainer/nmtrain" "$1/"
  nmserver=$1/nmserver nmworker=$1/nmworker nmctl=$1/nmctl nmtrain=$1/nmtrain
}

# The address nmserver prints in LOG once it listens (10 s at most); otherwise prints the log and fails.
nmserver_address() {  # nmserver_address LOG
  local address=""
  for _ in $(seq 100); do
    address=$(sed -n 's/^nmserver listening on \(.*\)$/\1/p' "$1")
    [[ -n "$address" ]] && { echo "$address"; return 0; }
    sleep 0.1
  done
  cat "$1" >&2
  return 1
}
