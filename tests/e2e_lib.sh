# Helpers shared by the end-to-end scripts: logging and checks, starting and stopping the real nmserver and
# nmworker processes, and polling runs through nmctl. The sourcing script sets nmserver, nmctl, tmp (a fresh
# directory) and db (the SQLite file) first; start_cpu_worker also needs nmworker, nmtrain and work.

declare -A worker_pid=()
server_pid=""
failures=0

log() { echo "e2e: $*" >&2; }
fail() { log "FAIL: $*"; failures=$((failures + 1)); }
check() {  # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then log "ok: $what"; else fail "$what"; fi
}

stop_pid() {  # SIGTERM, then SIGKILL after 5 s.
  local pid=$1
  kill -CONT "$pid" 2>/dev/null
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
}

stop_worker() {  # A worker and, should any outlive it, its ranks (by pid).
  local pid=$1 ranks
  ranks=$(pgrep -P "$pid" | tr '\n' ' ')
  stop_pid "$pid"
  for r in $ranks; do kill -CONT "$r" 2>/dev/null; kill -KILL "$r" 2>/dev/null; done
}

cleanup() {
  for name in "${!worker_pid[@]}"; do stop_worker "${worker_pid[$name]}"; done
  [[ -n "$server_pid" ]] && stop_pid "$server_pid"
  wait 2>/dev/null
  if ((failures > 0)); then
    for f in "$tmp"/*.log; do echo "===== $f (tail)"; tail -n 40 "$f"; done
  fi
}
trap cleanup EXIT

server_starts=0
server_args=()  # More nmserver flags for every start (e.g. --config=FILE).
start_server() {  # start_server PORT [FLAGS...] (port 0: any free one); sets $address and NMSPARSE_COORDINATOR.
  server_starts=$((server_starts + 1))
  local log_file="$tmp/nmserver-$server_starts.log"
  "$nmserver" --listen="127.0.0.1:$1" --db="$db" --lease_ms=3000 --grace_ms=1000 --schedule_interval_ms=200 \
    "${server_args[@]}" "${@:2}" >"$log_file" 2>&1 &
  server_pid=$!
  address=""
  for _ in $(seq 100); do
    address=$(sed -n 's/^nmserver listening on \(.*\)$/\1/p' "$log_file")
    [[ -n "$address" ]] && break
    sleep 0.1
  done
  [[ -n "$address" ]] || { log "nmserver did not start"; cat "$log_file" >&2; exit 1; }
  export NMSPARSE_COORDINATOR="$address"
  log "nmserver $server_pid on $address"
}

start_cpu_worker() {  # start_cpu_worker NAME [NMWORKER_FLAGS...]: one CPU slot running the real nmtrain.
  "$nmworker" --coordinator="$NMSPARSE_COORDINATOR" --work_dir="$work" --trainer="$nmtrain" --cpu-slots=1 \
    --host="$1" "${@:2}" >"$tmp/nmworker-$1.log" 2>&1 &
  worker_pid[$1]=$!
}
start_worker() { start_cpu_worker "$@"; }  # The default; a script whose workers differ redefines it.

ctl() { "$nmctl" "$@"; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
# Until the run's log has a line with TEXT (2 minutes at most): e.g. a trainer's "holding after 2 epochs".
wait_log() {  # wait_log RUN TEXT
  for _ in $(seq 600); do
    ctl logs "$1" 2>/dev/null | grep -qF -- "$2" && return 0
    sleep 0.2
  done
  return 1
}

# Polls `nmctl runs --sweep S --json` until the Python condition over `runs` holds (timeout in seconds).
wait_runs() {
  local sweep=$1 condition=$2 timeout=${3:-120}
  local deadline=$((SECONDS + timeout))
  while ((SECONDS < deadline)); do
    if ctl runs --sweep "$sweep" --json 2>/dev/null | python3 -c "
import json,sys
runs=json.load(sys.stdin)['runs']
sys.exit(0 if runs and ($condition) else 1)"; then return 0; fi
    sleep 0.3
  done
  log "timed out waiting for sweep $sweep: $condition"
  ctl runs --sweep "$sweep" >&2
  return 1
}

run_state() { ctl run "$1" --json | json "d['run']['state']"; }
wait_state() {  # wait_state RUN STATE TIMEOUT_S: until the run is in STATE
  local deadline=$((SECONDS + $3))
  while ((SECONDS < deadline)); do
    [[ "$(run_state "$1")" == "$2" ]] && return 0
    sleep 0.3
  done
  log "run $1 is $(run_state "$1"), not $2"
  return 1
}

final_points() {  # The number of "final" metric points of a run.
  ctl run "$1" --json | json "sum(1 for p in d['metrics'] if p['kind']=='final')"
}

# Which worker (by host name) holds a run.
holder_of() {
  local worker_id
  worker_id=$(ctl runs --json | json "[r['worker_id'] for r in d['runs'] if str(r['id'])=='$1'][0]")
  ctl workers --json | json "[w['host'] for w in d['workers'] if str(w['id'])=='$worker_id'][0]"
}

now_ms() { date +%s%3N; }
# until_gone TIMEOUT_S PIDS...: polls (a measurement, every 20 ms) until none of the processes is alive; prints
# the time it returned at, in ms. Fails after TIMEOUT_S.
until_gone() {
  local deadline=$(($(now_ms) + $1 * 1000)) alive; shift
  while (($(now_ms) < deadline)); do
    alive=0
    for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
    ((alive)) || { now_ms; return 0; }
    sleep 0.02
  done
  return 1
}

# Ends the script: exit 1 when any check failed.
finish() {
  if ((failures > 0)); then
    log "$failures check(s) failed"
    exit 1
  fi
  log "all checks passed"
}
