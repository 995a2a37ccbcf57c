#!/usr/bin/env bash
# End to end through a real Slurm: a one-node cluster on loopback (munged, slurmctld, slurmd, started and
# stopped here; tests/slurm_cluster.sh: two slurmd on one host), the real nmserver with a `slurm:` config launching nmworker jobs
# with sbatch, real nmtrain runs. Covers:
#   A. a sweep end to end: the pool submits jobs for the queued runs (up to max_jobs, the rest shown as
#      waiting), workers register from their jobs, every run succeeds, and the jobs end once the queue drains;
#   B. a job scancel'ed mid-run: the run is requeued and resumes from its checkpoint in a new job;
#   C. a job reaching its time limit: Slurm's USR1 before the end makes the worker stop the run at a
#      checkpoint and hand it back (no retry used), its job ends COMPLETED, and the run starts again;
#   D. a job that fails to start (nmworker missing on the node) is reported as a failed start;
#   E. one run on two nodes: the pool submits one `--nodes=2 --ntasks-per-node=1` job, whose srun starts an
#      nmworker on each node; the two register, form the run's gang and train it (Gloo on the CPU) to
#      SUCCEEDED, each node's worker reporting its end; the job ends COMPLETED once both leave.
# Prints "figure:" lines (submit to first run started; the pool over time) for docs/benchmarks.md.
# Needs root and Debian's slurmctld, slurmd, slurm-client and munge (tools/bootstrap.sh installs them
# when NMSPARSE_SLURM=1, as tools/test.sh does); without them it is SKIPPED, saying why, and checks nothing.
#
# Usage: slurm_e2e_test.sh NMSERVER NMWORKER NMCTL NMTRAIN SWEEP_YAML
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); nmtrain=$(realpath "$4")
sweep_yaml=$(realpath "$5")
here=$(dirname "${BASH_SOURCE[0]}")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/slurm-e2e.XXXXXX")
chmod 0755 "$tmp"
db="$tmp/nmsparse.db"
work="$tmp/work"  # The jobs' work directory: the shared filesystem of a real cluster.

source "$here/e2e_lib.sh"
source "$here/slurm_cluster.sh"

for program in munged slurmctld slurmd sbatch squeue scancel sinfo srun; do
  command -v "$program" >/dev/null || {
    echo "slurm_e2e_test: SKIPPED: $program is not installed; nothing was checked. Install Debian's slurmctld" \
      "slurmd slurm-client munge (NMSPARSE_SLURM=1 tools/bootstrap.sh, as tools/test.sh does)" >&2
    exit 0
  }
done
[[ $(id -u) == 0 ]] || {
  echo "slurm_e2e_test: SKIPPED: needs root (slurmd starts jobs as their user); nothing was checked" >&2
  exit 0
}

dump_slurm_logs() {
  if ((failures > 0)); then
    for f in "$slurm_dir"/log/*.log "$work"/slurm-logs/*.out; do
      [[ -f "$f" ]] && { echo "===== $f (tail)"; tail -n 30 "$f"; }
    done
  fi
}
trap 'dump_slurm_logs; stop_slurm_cluster; cleanup' EXIT

start_slurm_cluster || { fail "the Slurm cluster did not start"; exit 1; }
log "slurm up: $(sinfo -h -o '%P %a %D %t %c CPUs')"

# While it exists, a trainer that has finished two epochs waits (NMTRAIN_HOLD_FILE): sections B and C hold their
# run mid-training instead of hoping that it is still running when the job is cancelled or reaches its limit
# (on an idle machine the nano ViT trains hundreds of epochs in seconds). sbatch passes nmserver's environment
# to the job, nmworker passes it to nmtrain.
hold="$tmp/hold"
export NMTRAIN_HOLD_FILE="$hold" NMTRAIN_HOLD_AFTER_EPOCHS=2

port=$(free_port)
write_config() {  # write_config NAME KEY=VALUE...: a server config whose slurm: section has these keys.
  local file="$tmp/$1.yaml"; shift
  {
    echo "slurm:"
    echo "  nmworker: ${nmworker_for_jobs:-$nmworker}"
    echo "  work_dir: $work"
    echo "  partition: cpu"
    echo "  gpus_per_job: 0"
    echo "  cpu_slots_per_job: 1"
    echo "  poll_interval_s: 1"
    echo "  idle_exit_s: 3"
    echo "  worker_args: [--trainer=$nmtrain, --kill_grace_ms=20000, --trainer_threads=1]"
    for kv in "$@"; do echo "  ${kv%%=*}: ${kv#*=}"; done
  } >"$file"
  echo "$file"
}
serve_with() {  # serve_with CONFIG: (re)starts nmserver on the fixed port with that config.
  [[ -n "$server_pid" ]] && stop_pid "$server_pid"
  server_args=(--config="$1")
  start_server "$port"
}

active_jobs() { squeue -h --states=PENDING,RUNNING,CONFIGURING,COMPLETING -n nmworker | wc -l; }
no_active_jobs() { test "$(active_jobs)" = 0; }
cluster_json() { ctl cluster --json; }
run_history() { ctl run "$1" --json | json "'\n'.join(h.get('reason','') for h in d.get('history',[]))"; }
run_field() { ctl run "$1" --json | json "d['run'].get('$2', '')"; }
job_of_run() {  # The Slurm job id of the worker holding a run.
  local worker_id
  worker_id=$(run_field "$1" worker_id)
  ctl workers --json | json "[w.get('job','') for w in d['workers'] if str(w['id'])=='$worker_id'][0].split(':')[1]"
}
wait_for() {  # wait_for TIMEOUT_S COMMAND...: polls until the command succeeds.
  local deadline=$((SECONDS + $1)); shift
  while ((SECONDS < deadline)); do "$@" && return 0; sleep 0.5; done
  return 1
}

# --- A. a sweep end to end: four runs, at most two jobs
serve_with "$(write_config a time=10:00 max_jobs=2 signal_before_end_s=0)"
timeline="$tmp/pool_timeline.txt"
(  # The pool as squeue and the queue see it, once a second, for the benchmark figure.
  start=$SECONDS
  while kill -0 "$server_pid" 2>/dev/null; do
    "$nmctl" cluster --json 2>/dev/null | python3 -c "
import json,sys
d=json.load(sys.stdin)
jobs=[j for j in d.get('jobs',[]) if j['state'] in ('PENDING','RUNNING','CONFIGURING','COMPLETING')]
print('$((SECONDS - start)) s: queued runs %d, jobs %d (%d with a worker)' % (int(d.get('queued_runs',0)), len(jobs), sum(1 for j in jobs if int(j.get('worker_id',0))>0)))" 2>/dev/null
    sleep 1
  done
) >"$timeline" 2>/dev/null &
sampler=$!
sweep_a=$(ctl submit "$sweep_yaml" --set name=slurm-a1 --no-reuse --json | json "d['sweep']['id']")
sweep_b=$(ctl submit "$sweep_yaml" --set name=slurm-a2 --no-reuse --json | json "d['sweep']['id']")
check "the first run starts through a Slurm job" \
  wait_runs "$sweep_a" "any(r['state'] in ('RUNNING','SUCCEEDED') for r in runs)" 120
first_start=$(ctl runs --sweep "$sweep_a" --json | json "min(int(r['started_at_ms']) for r in d['runs'] if int(r.get('started_at_ms',0))>0) - min(int(r['created_at_ms']) for r in d['runs'])")
log "figure: submit to first run started through Slurm: ${first_start} ms (the coordinator's timestamps)"
check "no more than max_jobs (2) jobs pending or running" test "$(active_jobs)" -le 2
check "every run of both sweeps succeeds" wait_runs "$sweep_a" "all(r['state']=='SUCCEEDED' for r in runs)" 300
check "(second sweep)" wait_runs "$sweep_b" "all(r['state']=='SUCCEEDED' for r in runs)" 300
check "once the queue drains the idle workers leave and their jobs end" wait_for 60 no_active_jobs
jobs_ended_cleanly() {  # Every job ended COMPLETED (a pending job no run needed may have been cancelled).
  test "$(cluster_json | json "all(j['state']=='COMPLETED' or j.get('reason')=='no queued run needs it' for j in d['jobs'])")" = True
}
check "the jobs ended COMPLETED, not killed (as the pool sees them)" wait_for 15 jobs_ended_cleanly
check "every job had a worker register from it" \
  test "$(cluster_json | json "all(int(j.get('worker_id',0))>0 for j in d['jobs'])")" = True
check "nmctl workers shows the job behind each worker" \
  bash -c "'$nmctl' workers | grep -q 'slurm:[0-9]* COMPLETED on $slurm_node[12]'"
sleep 2
kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
log "figure: the pool over time (sampled about once a second; unchanged lines left out):"
uniq -f2 "$timeline" | sed 's/^/figure:   /' >&2

# --- B. a job scancel'ed mid-run: the run is requeued and resumes from its checkpoint in a new job
touch "$hold"
sweep_c=$(ctl submit "$sweep_yaml" --set schedule.epochs=30 --set name=slurm-scancel --no-reuse --json | json "d['sweep']['id']")
check "a long run is running with a checkpoint" wait_runs "$sweep_c" \
  "any(r['state']=='RUNNING' for r in runs)" 120
victim=$(ctl runs --sweep "$sweep_c" --json | json "[r['id'] for r in d['runs'] if r['state']=='RUNNING'][0]")
wait_for 60 bash -c "'$nmctl' run '$victim' --json | python3 -c \"import json,sys; d=json.load(sys.stdin); sys.exit(0 if sum(1 for p in d.get('metrics',[]) if p['kind']=='epoch')>=2 else 1)\""
job=$(job_of_run "$victim")
check "nmctl workers shows the running job, its node and time left" \
  bash -c "'$nmctl' workers | grep -q 'slurm:$job RUNNING on $slurm_node[12], .* left'"
log "scancel job $job (running run $victim)"
scancel "$job"
check "the run is requeued after its job was cancelled" \
  wait_for 60 bash -c "'$nmctl' run '$victim' --json | grep -q 'requeued'"
rm -f "$hold"  # The retry resumes after epoch 2 and trains on to the end.
check "the pool reports the cancelled job" wait_for 30 bash -c "'$nmctl' cluster | grep -q 'slurm:$job .*CANCELLED'"
check "the run succeeds in a new job" wait_runs "$sweep_c" "all(r['state']=='SUCCEEDED' for r in runs)" 300
check "its retry resumed from the checkpoint" bash -c "'$nmctl' logs '$victim' | grep -q 'resuming from'"
check "on a later attempt" test "$(run_field "$victim" attempt)" -ge 2
check "and the pool is empty again" wait_for 60 no_active_jobs

# --- C. a time limit reached: the worker hands its run back at Slurm's warning, cleanly
serve_with "$(write_config c time=1 max_jobs=1 signal_before_end_s=45)"
touch "$hold"  # Held until the sweep is cancelled: running at the time limit, and again in the next job.
sweep_d=$(ctl submit "$sweep_yaml" --set schedule.epochs=400 --set name=slurm-timelimit --no-reuse --json | json "d['sweep']['id']")
check "a run starts in a 1-minute job" wait_runs "$sweep_d" "any(r['state']=='RUNNING' for r in runs)" 120
long=$(ctl runs --sweep "$sweep_d" --json | json "[r['id'] for r in d['runs'] if r['state']=='RUNNING'][0]")
first_job=$(job_of_run "$long")
check "before the time limit the worker hands the run back (no retry used)" \
  wait_for 100 bash -c "'$nmctl' run '$long' --json | grep -q 'handed back by its worker.*no retry used'"
check "the job ended COMPLETED (the worker left before the limit), not TIMEOUT" \
  wait_for 30 bash -c "squeue -h -t all -j '$first_job' -o '%T' | grep -qx COMPLETED"
check "the run stopped at a checkpoint and starts again in a new job" \
  wait_for 90 bash -c "'$nmctl' run '$long' --json | python3 -c \"import json,sys; r=json.load(sys.stdin)['run']; sys.exit(0 if r['state']=='RUNNING' and int(r['attempt'])>=2 else 1)\""
check "and resumed from its checkpoint" wait_for 30 bash -c "'$nmctl' logs '$long' | grep -q 'resuming from'"
ctl cancel --sweep "$sweep_d" >/dev/null
check "the cancelled run ends" wait_runs "$sweep_d" "all(r['state']=='CANCELLED' for r in runs)" 60
rm -f "$hold"
check "and its worker leaves, ending its job" wait_for 60 no_active_jobs

# --- D. a job that fails to start is seen and reported
serve_with "$(nmworker_for_jobs=/nonexistent/nmworker write_config d time=5 max_jobs=1)"
sweep_e=$(ctl submit "$sweep_yaml" --set name=slurm-broken --no-reuse --json | json "d['sweep']['id']")
check "a job whose nmworker cannot start is reported as a failed start" \
  wait_for 60 bash -c "'$nmctl' cluster | grep -q 'before its worker registered: a failed start'"
check "why work waits: the second run waits for a slot at max_jobs (1)" \
  bash -c "'$nmctl' cluster | grep -q '1 run waits for a slot: the pool is at max_jobs (1)'"
ctl cancel --sweep "$sweep_e" >/dev/null

# --- E. one run on two nodes: one allocation of 2 nodes, an nmworker on each, one gang
serve_with "$(write_config e time=10:00 max_jobs=2 signal_before_end_s=0)"
sweep_g=$(ctl submit "$sweep_yaml" --set resources.nodes=2 --set name=slurm-gang --no-reuse --json | json "d['sweep']['id']")
check "both 2-node runs succeed through Slurm" \
  wait_runs "$sweep_g" "all(r['state']=='SUCCEEDED' for r in runs)" 300
check "the pool submitted one job of 2 nodes for them" \
  bash -c "'$nmctl' cluster | grep -q 'submitted job slurm:[0-9]* of 2 nodes'"
gang_run=$(ctl runs --sweep "$sweep_g" --json | json "d['runs'][0]['id']")
check "the run's gang is two workers of one Slurm job, one on each node" python3 - "$(ctl run "$gang_run" --json)" \
  "$(ctl workers --json)" "$(squeue -h -t all -n nmworker -o '%i|%N|%D')" <<'PY'
import json, sys
members = json.loads(sys.argv[1])['run']['gang']['members']
jobs = {str(w['id']): w.get('job', '') for w in json.loads(sys.argv[2])['workers']}
nodes = dict(l.split('|', 1) for l in sys.argv[3].split())
job = {jobs[str(m['worker_id'])] for m in members}
ok = len(members) == 2 and len({m['worker_id'] for m in members}) == 2 and len(job) == 1
slurm_id = next(iter(job)).split(':')[-1] if ok else ''
ok = ok and nodes.get(slurm_id) == 'nmnode[1-2]|2'
sys.exit(0 if ok else f"gang {members}, workers' jobs {jobs}, squeue {nodes}")
PY
gang_worker=$(ctl run "$gang_run" --json | json "d['run']['gang']['members'][0]['worker_id']")
gang_job=$(ctl workers --json | json "[w.get('job','') for w in d['workers'] if str(w['id'])=='$gang_worker'][0].split(':')[1]")
check "both nodes' ranks logged, tagged node 0 and node 1" \
  bash -c "'$nmctl' logs '$gang_run' | grep -q 'node0/rank0' && '$nmctl' logs '$gang_run' | grep -q 'node1/rank1'"
check "the nmworker on each node saw the attempt end SUCCEEDED" test \
  "$(grep -c "run $gang_run attempt 1 ended: SUCCEEDED exit 0" "$work/slurm-logs/nmworker-$gang_job.out")" = 2
check "once idle, both workers leave and the job ends" wait_for 60 no_active_jobs
check "COMPLETED" wait_for 30 bash -c "squeue -h -t all -j '$gang_job' -o '%T' | grep -qx COMPLETED"
ctl cluster >&2

finish
