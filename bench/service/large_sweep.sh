#!/usr/bin/env bash
# Large sweeps end to end (issue 29): the real nmserver (SQLite file, loopback gRPC, dashboard), one real
# nmworker with SLOTS CPU slots running the stand-in trainer (load_trainer, SLEEP_MS per run), and nmctl.
# For each size: runs completed per second, nmserver CPU per run, the CLI's times and output sizes, the
# dashboard's sweep API and page, and `nmctl report` (REPORT_MAX runs at most). Then a second table of the
# dashboard alone (issue 29): nmserver CPU of the sweep page, of a poll (answered 304) and of a page of the
# run table; a figure's first and cached request; the sweep page's load in headless Chromium when installed,
# at its load event and again once its figures are drawn (30 s of virtual time at most; the plots counted).
# Prints one table row per size and the ratio of the largest size's runs/s to the smallest's.
#   bash bench/service/large_sweep.sh [SIZE...]        (default 1000 10000; add 50000 if time allows)
# Environment: SLOTS (16), SLEEP_MS (30), REPORT_MAX (10000), KEEP=1 keeps the temporary directory.
set -euo pipefail
cd "$(dirname "$0")/../.."

sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(1000 10000)
slots=${SLOTS:-16}
sleep_ms=${SLEEP_MS:-30}
report_max=${REPORT_MAX:-10000}

bazel build --disk_cache="$HOME/.cache/nmsparse-bazel-disk" --jobs="${JOBS:-1}" //server:nmserver \
  //worker/agent:nmworker //cli:nmctl //bench/service:load_trainer >&2
bin=$(bazel info bazel-bin 2>/dev/null)
nmserver=$bin/server/nmserver nmworker=$bin/worker/agent/nmworker nmctl=$bin/cli/nmctl
trainer=$bin/bench/service/load_trainer

tmp=$(mktemp -d /tmp/large_sweep.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [[ "${KEEP:-0}" == 1 ]] || rm -rf "$tmp"
}
trap cleanup EXIT

# nmserver CPU milliseconds per run of COMMAND... (the process's user + system time around N runs of it; the
# kernel counts in 10 ms ticks).
server_cpu() {
  local before n=$1
  shift
  before=$(cpu_ms "$server")
  for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 || { echo FAIL; return; }; done
  awk -v a="$before" -v b="$(cpu_ms "$server")" -v n="$n" 'BEGIN {printf "%.1f ms", (b - a) / n}'
}
# "S s (C ms)": the wall seconds and nmserver CPU of COMMAND...
timed_cpu() {
  local before t0
  before=$(cpu_ms "$server")
  t0=$(now_ms)
  "$@" >/dev/null 2>&1 || { echo FAIL; return; }
  awk -v d=$(($(now_ms) - t0)) -v a="$before" -v b="$(cpu_ms "$server")" \
    'BEGIN {printf "%.2f s (%.0f ms)", d / 1000, b - a}'
}
chromium=$(command -v chromium-headless-shell || command -v chromium || true)
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) * 1000 / hz}' "/proc/$1/stat"; }
now_ms() { date +%s%3N; }
# Seconds COMMAND takes, its stdout thrown away ("FAIL" if it fails).
secs() {
  local t0 t1
  t0=$(now_ms)
  "$@" >/dev/null 2>&1 || { echo FAIL; return; }
  t1=$(now_ms)
  awk -v d=$((t1 - t0)) 'BEGIN {printf "%.2f", d / 1000}'
}

sweep_file() {  # sweep_file N: N runs, 25 learning rates x N/25 seeds
  local n=$1 seeds=$(($1 / 25))
  {
    echo "name: large$n"
    echo "base:"
    echo "  model: {name: vit_micro_patch4_28}"
    echo "  data: {dataset: synthetic, batch_size: 32}"
    echo "  schedule: {epochs: 1}"
    echo "  sparsity: {sparsity_type: SRSTE, n_sparsity: 2, m_sparsity: 4}"
    echo "grid:"
    echo "  optimizer.lr: [$(seq -s, 1 25 | sed 's/\([0-9]*\)/\1e-4/g')]"
    echo "  seed: [$(seq -s, 0 $((seeds - 1)))]"
  } >"$tmp/sweep$n.yaml"
}

printf '| runs | runs/s | nmserver CPU/run | submit s (bytes) | validate s | sweeps s | runs s | best s | '
printf 'compare s | export csv s | tensorboard s | dashboard api s | dashboard page s | report s |\n'
printf '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n'
first_rate=""
last_rate=""
dash_rows=()
for n in "${sizes[@]}"; do
  dir=$tmp/n$n
  mkdir -p "$dir/work"
  sweep_file "$n"
  "$nmserver" --listen=127.0.0.1:0 --db="$dir/db" --http_listen=127.0.0.1:0 --max_runs_per_sweep=100000 \
    >"$dir/nmserver.log" 2>&1 &
  server=$!
  pids+=("$server")
  address=""
  for _ in $(seq 100); do
    address=$(sed -n 's/^nmserver listening on \(.*\)$/\1/p' "$dir/nmserver.log")
    [[ -n "$address" ]] && break
    sleep 0.1
  done
  http=$(grep -o 'dashboard on http://[^ /]*' "$dir/nmserver.log" | sed 's|.*http://||' | head -1)
  export NMSPARSE_COORDINATOR=$address
  validate=$(secs "$nmctl" validate "$tmp/sweep$n.yaml")
  t0=$(now_ms)
  "$nmctl" submit "$tmp/sweep$n.yaml" >"$dir/submit.out"
  submit=$(awk -v d=$(($(now_ms) - t0)) 'BEGIN {printf "%.2f", d / 1000}')
  sweep=$(sed -n 's/^sweep \([0-9]*\).*/\1/p' "$dir/submit.out" | head -1)
  cpu0=$(cpu_ms "$server")
  t0=$(now_ms)
  NMSPARSE_LOAD_SLEEP_MS=$sleep_ms NMSPARSE_LOAD_EPOCHS=1 "$nmworker" --coordinator="$address" \
    --work_dir="$dir/work" --trainer="$trainer" --cpu-slots="$slots" --host=bench >"$dir/nmworker.log" 2>&1 &
  pids+=("$!")
  while true; do
    sleep 1
    left=$("$nmctl" --json sweeps | python3 -c "import json,sys
s=[x for x in json.load(sys.stdin)['sweeps'] if str(x['id'])=='$sweep'][0]['run_counts']
print(sum(v for k,v in s.items() if k in ('QUEUED','ASSIGNED','RUNNING')))")
    [[ "$left" == 0 ]] && break
  done
  elapsed=$(($(now_ms) - t0))
  cpu=$(awk -v a="$cpu0" -v b="$(cpu_ms "$server")" -v n="$n" 'BEGIN {printf "%.2f ms", (b - a) / n}')
  rate=$(awk -v n="$n" -v d="$elapsed" 'BEGIN {printf "%.1f", n * 1000 / d}')
  [[ -n "$first_rate" ]] || first_rate=$rate
  last_rate=$rate
  report="-"
  if ((n <= report_max)); then report=$(secs "$nmctl" report "$sweep" -o "$dir/report"); fi
  api="-" page="-"
  if [[ -n "$http" ]]; then
    api=$(secs curl -sf --compressed "http://$http/api/sweeps/$sweep")
    page=$(secs curl -sf --compressed "http://$http/sweeps/$sweep")
    u="http://$http"
    etag=$(curl -sf -D - -o /dev/null "$u/api/sweeps/$sweep" | sed -n 's/^ETag: \(.*\)\r$/\1/p')
    svg="$u/sweeps/$sweep/report/curves_top1.svg"
    first_figure=$(timed_cpu curl -sf --compressed "$svg")
    cached_figure=$(timed_cpu curl -sf --compressed "$svg")
    browser="-" drawn="-"
    if [[ -n "$chromium" ]]; then
      browser=$(secs "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$dir/chromium" \
        --dump-dom "$u/sweeps/$sweep")
      # Until its figures are drawn too (the DOM at load has none yet: they come from /figures after it).
      t_drawn=$(now_ms)
      "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$dir/chromium" \
        --virtual-time-budget=30000 --dump-dom "$u/sweeps/$sweep" >"$dir/drawn.html" 2>/dev/null || true
      drawn=$(awk -v d=$(($(now_ms) - t_drawn)) -v n="$(grep -o 'class="main-svg"' "$dir/drawn.html" | wc -l)" \
        'BEGIN {printf "%.2f (%d plots)", d / 1000, n}')
    fi
    dash_rows+=("$(printf '| %s | %s | %s | %s | %s | %s | %s | %s |' "$n" \
      "$(server_cpu 10 curl -sf --compressed "$u/sweeps/$sweep")" \
      "$(server_cpu 10 curl -sf -H "If-None-Match: $etag" "$u/api/sweeps/$sweep")" \
      "$(server_cpu 10 curl -sf --compressed "$u/api/sweeps/$sweep/runs?offset=100&limit=100&sort=top1&desc=1")" \
      "$first_figure" "$cached_figure" "$browser" "$drawn")")
  fi
  printf '| %s | %s | %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$n" "$rate" "$cpu" \
    "$submit" "$(wc -c <"$dir/submit.out")" "$validate" "$(secs "$nmctl" sweeps)" \
    "$(secs "$nmctl" runs --sweep "$sweep")" "$(secs "$nmctl" best "$sweep" -k 5)" \
    "$(secs "$nmctl" compare "$sweep" --metric top1)" "$(secs "$nmctl" export "$sweep" --format csv)" \
    "$(secs "$nmctl" export "$sweep" --format tensorboard -o "$dir/tb")" "$api" "$page" "$report"
  kill "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  pids=()
  rm -rf "$dir/work"
done
echo
printf '| runs | sweep page CPU | poll (304) CPU | runs page CPU | figure: first s (CPU) | cached s (CPU) | '
printf 'page in Chromium s | with its figures drawn s |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n'
printf '%s\n' "${dash_rows[@]}"
awk -v a="$first_rate" -v b="$last_rate" -v lo="${sizes[0]}" -v hi="${sizes[-1]}" \
  'BEGIN {printf "runs/s at %s vs %s: %.2f (goal >= 0.80)\n", hi, lo, b / a}'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores" >&2
