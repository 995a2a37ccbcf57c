# A two-node Slurm cluster on loopback, for the real-Slurm end-to-end test (sourced by slurm_e2e_test.sh).
# Everything lives in a fresh short directory under /tmp ($slurm_dir; Slurm and munge put Unix sockets in their
# spool directories, and socket paths must fit in 108 bytes): its own munge key and socket, a generated
# slurm.conf with free ports, state and spool directories, logs. start_slurm_cluster starts munged, slurmctld and slurmd in the
# foreground as children of the test; stop_slurm_cluster stops them. Nothing outside the directory is
# touched, so it runs beside any other Slurm or munge on the machine. Needs root (slurmd runs jobs as their
# user) and Debian's slurmctld, slurmd, slurm-client and munge (tools/bootstrap.sh NMSPARSE_SLURM=1).
#
# Two nodes, nmnode1 and nmnode2, both on 127.0.0.1: two slurmd on one host, each with a port of its own
# (Debian's Slurm 22.05 is built with MULTIPLE_SLURMD; each started as `slurmd -N NAME`), so that a
# `--nodes=2 --ntasks-per-node=1` job runs one task on each. Each node is CPU-only: 4 CPUs from the
# configuration, whatever the machine has (config_overrides), one partition "cpu" as the default.

slurm_pids=()
slurm_dir=""

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_slurm_cluster: sets slurm_dir, SLURM_CONF (exported, so sbatch, squeue, scancel and nmserver use it),
# slurm_nodes and slurm_node (the nodes' common prefix: nmnode1 and nmnode2); returns non-zero when
# the cluster does not come up within 60 s.
start_slurm_cluster() {
  local dir host
  slurm_dir=$(mktemp -d /tmp/nmslurm.XXXXXX)
  chmod 0755 "$slurm_dir"  # munged wants the socket's directory open to all (execute).
  dir=$slurm_dir
  host=$(hostname -s)
  slurm_node=nmnode
  slurm_nodes=(nmnode1 nmnode2)
  mkdir -p "$dir"/{munge,state,spool,log}
  chmod 0700 "$dir/munge"
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$dir/munge/munge.key"
  local socket="$dir/munge.socket"
  munged --foreground --force --key-file="$dir/munge/munge.key" --socket="$socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" \
    >"$dir/log/munged.out" 2>&1 &
  slurm_pids+=($!)

  local ctld_port slurmd_port port1 port2
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  port1=$(free_port)
  port2=$(free_port)
  export SLURM_CONF="$dir/slurm.conf"
  cat >"$SLURM_CONF" <<EOF
ClusterName=nmtest
SlurmctldHost=${host}(127.0.0.1)
SlurmctldPort=${ctld_port}
SlurmdPort=${slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=${socket}
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/slurmd-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=5
MinJobAge=600
MessageTimeout=10
SlurmdTimeout=30
InactiveLimit=0
NodeName=nmnode1 NodeHostname=${host} NodeAddr=127.0.0.1 Port=${port1} CPUs=4 RealMemory=2000 State=UNKNOWN
NodeName=nmnode2 NodeHostname=${host} NodeAddr=127.0.0.1 Port=${port2} CPUs=4 RealMemory=2000 State=UNKNOWN
PartitionName=cpu Nodes=nmnode[1-2] Default=YES MaxTime=INFINITE State=UP
EOF
  slurmctld -D -i -f "$SLURM_CONF" >"$dir/log/slurmctld.out" 2>&1 &
  slurm_pids+=($!)
  local node
  for node in "${slurm_nodes[@]}"; do
    slurmd -D -N "$node" -f "$SLURM_CONF" >"$dir/log/slurmd-$node.out" 2>&1 &
    slurm_pids+=($!)
  done
  local deadline=$((SECONDS + 60))
  while ((SECONDS < deadline)); do
    if [[ "$(timeout 5 sinfo -h -N -o '%t' 2>/dev/null | grep -cx idle)" == "${#slurm_nodes[@]}" ]]; then return 0; fi
    sleep 0.5
  done
  echo "slurm: nodes ${slurm_nodes[*]} did not become idle; sinfo says: $(sinfo -h -N -o '%N %t %E' 2>&1)" >&2
  return 1
}

# Cancels what is left of the test's jobs, then stops slurmd, slurmctld and munged (SIGTERM, SIGKILL after 10 s).
stop_slurm_cluster() {
  scancel --full --quiet --partition=cpu 2>/dev/null || true
  local i pid
  for ((i = ${#slurm_pids[@]} - 1; i >= 0; i--)); do
    pid=${slurm_pids[$i]}
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  slurm_pids=()
  [[ -n "$slurm_dir" ]] && rm -rf "$slurm_dir"
}
