#!/usr/bin/env bash
# Security end to end (docs/security.md): the real nmserver, nmworker and nmctl over TLS with tokens, on
# loopback, with a CA and certificates made here by openssl, and a stand-in trainer
# (tests/testdata/recording_trainer.sh). Checks that
# - `nmserver init` / `token add` make tokens in 0600 files; a user submits over TLS, a worker with a client
#   certificate (mTLS) runs the sweep, and nmctl shows who submitted each sweep and run;
# - every refusal is clear: no token, an unknown token, an expired token, a wrong role (worker token on nmctl,
#   user token on nmworker), a worker without a client certificate, a coordinator certificate from another
#   CA, a client certificate from another CA, a user cancelling someone else's sweep or resuming or forking
#   someone else's run, a token file others can read, a non-loopback address without authentication;
# - no token appears in any log;
# - confined paths: a dataset outside the worker's data roots fails the run with the path and the roots in
#   its message, before any rank starts; a run name full of "../" stays out of every path.
#
# Usage: security_e2e_test.sh NMSERVER NMWORKER NMCTL SWEEP_YAML RECORDING_TRAINER
set -uo pipefail

nmserver=$(realpath "$1"); nmworker=$(realpath "$2"); nmctl=$(realpath "$3"); sweep_yaml=$(realpath "$4")
trainer=$(realpath "$5")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/security.XXXXXX")
db="$tmp/nmsparse.db"
work="$tmp/work"
pki="$tmp/pki"
tokens="$tmp/tokens"
mkdir -p "$work" "$pki" "$tokens"

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

# --- A CA, the coordinator's certificate (for 127.0.0.1 and localhost), a worker client certificate, and a
# second, untrusted CA with its own server and client certificates.
make_ca() {  # make_ca NAME
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$1" -keyout "$pki/$1.key" -out "$pki/$1.pem" \
    2>/dev/null
}
make_cert() {  # make_cert CA NAME SUBJECT_ALT_NAMES (empty for a client certificate)
  local ca=$1 name=$2 san=$3
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$name" -keyout "$pki/$name.key" -out "$pki/$name.csr" 2>/dev/null
  if [[ -n "$san" ]]; then echo "subjectAltName=$san" >"$pki/$name.ext"; else : >"$pki/$name.ext"; fi
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/$ca.pem" -CAkey "$pki/$ca.key" -CAcreateserial -days 2 \
    -extfile "$pki/$name.ext" -out "$pki/$name.pem" 2>/dev/null
}
make_ca ca
make_ca rogue_ca
make_cert ca server "IP:127.0.0.1,DNS:localhost"
make_cert ca worker ""
make_cert rogue_ca rogue_worker ""
check "openssl made the certificates" test -s "$pki/server.pem" -a -s "$pki/worker.pem" -a -s "$pki/rogue_worker.pem"

# --- Safe defaults: a non-loopback address without authentication is refused (before binding anything).
refusal=$("$nmserver" --listen=0.0.0.0:0 --db="$tmp/open.db" 2>&1)
check "nmserver refuses 0.0.0.0 without authentication (exit 1)" test $? -eq 1
check "the refusal says why and names --insecure" \
  grep -q "refusing to serve 0.0.0.0:0 without authentication.*--insecure" <<<"$refusal"

# --- Credentials.
"$nmserver" init --db="$db" --token_dir="$tokens" >"$tmp/init.log" 2>&1
check "nmserver init made admin.token and worker.token" test -s "$tokens/admin.token" -a -s "$tokens/worker.token"
check "token files are mode 0600" test "$(stat -c %a "$tokens/admin.token")" = 600
"$nmserver" token add alice --role user --token_file="$tokens/alice.token" --db="$db" >/dev/null
"$nmserver" token add bob --role user --token_file="$tokens/bob.token" --db="$db" >/dev/null
"$nmserver" token add brief --role user --expires_in_s=1 --token_file="$tokens/brief.token" --db="$db" >/dev/null
"$nmserver" token add gone --role user --token_file="$tokens/gone.token" --db="$db" >/dev/null
"$nmserver" token revoke gone --db="$db" >/dev/null
list=$("$nmserver" token list --db="$db")
check "token list names roles, never tokens" \
  bash -c "grep -q '^alice\suser' <<<\"\$1\" && ! grep -q nmt_ <<<\"\$1\"" _ "$list"
"$nmserver" token add alice --role user --token_file="$tokens/alice2.token" --db="$db" >"$tmp/dup.log" 2>&1
check "a taken token name is refused" grep -q "a token named 'alice' exists already" "$tmp/dup.log"

# --- The coordinator over TLS with tokens, client certificates required of workers.
start_server 0 --tls_cert="$pki/server.pem" --tls_key="$pki/server.key" --tls_client_ca="$pki/ca.pem"
check "nmserver says it serves TLS with tokens" grep -q "TLS, tokens required" "$tmp/nmserver-1.log"
export NMSPARSE_TLS_CA="$pki/ca.pem"
export NMSPARSE_TOKEN_FILE="$tokens/alice.token"  # For wait_runs and the other e2e_lib helpers.

as() {  # as TOKEN_NAME NMCTL_ARGS...: nmctl with that token file.
  local who=$1; shift
  ctl --token-file "$tokens/$who.token" "$@"
}

start_worker() {  # start_worker NAME NMWORKER_FLAGS...
  local name=$1; shift
  "$nmworker" --coordinator="$NMSPARSE_COORDINATOR" --work_dir="$work" --trainer="$trainer" --cpu-slots=1 \
    --host="$name" "$@" >"$tmp/nmworker-$name.log" 2>&1 &
  worker_pid[$name]=$!
}

expect_error() {  # expect_error DESCRIPTION PATTERN COMMAND...: the command fails and its stderr matches.
  local what=$1 pattern=$2; shift 2
  local err
  if err=$("$@" 2>&1 >/dev/null); then fail "$what: succeeded"; return; fi
  if grep -q -- "$pattern" <<<"$err"; then log "ok: $what"; else fail "$what: got '$err'"; fi
}

wait_log() {  # wait_log FILE PATTERN: up to 20 s.
  for _ in $(seq 200); do grep -q -- "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

start_worker node1 --token_file="$tokens/worker.token" --tls_cert="$pki/worker.pem" --tls_key="$pki/worker.key"
check "the worker registers over mTLS" wait_log "$tmp/nmworker-node1.log" "registered with"

sweep=$(as alice submit "$sweep_yaml" --set name=tls --no-reuse --json | json "d['sweep']['id']")
check "alice submits over TLS" test -n "$sweep"
check "both runs succeed on the worker" wait_runs "$sweep" "all(r['state']=='SUCCEEDED' for r in runs) and len(runs)==2" 60
check "each run records alice as its submitter" wait_runs "$sweep" "all(r['submitted_by']=='alice' for r in runs)" 5
as bob sweeps >"$tmp/sweeps.log"
check "nmctl sweeps shows the submitter" grep -Eq "^ *$sweep +e2e +alice " "$tmp/sweeps.log"
check "nmctl run shows the submitter" bash -c "'$nmctl' --token-file '$tokens/alice.token' run \$1 | grep -q 'by: *alice'" _ \
  "$(as alice runs --sweep "$sweep" --json | json "d['runs'][0]['id']")"

# --- Refusals, each with its own clear message.
expect_error "no token" "this coordinator requires a token" env -u NMSPARSE_TOKEN_FILE "$nmctl" sweeps
expect_error "unknown token" "unknown or revoked token" env -u NMSPARSE_TOKEN_FILE NMSPARSE_TOKEN=nmt_0000 \
  "$nmctl" sweeps
expect_error "revoked token" "unknown or revoked token" as gone sweeps
sleep 1.2
expect_error "expired token" "token 'brief' expired at" as brief sweeps
expect_error "worker token on nmctl submit" \
  "token 'worker' has role worker, which may not call /nmsparse.v1.Coordinator/SubmitSweep" \
  as worker submit "$sweep_yaml" --set name=worker_submits
chmod 644 "$tokens/bob.token"
expect_error "a token file others can read" "mode 0644 lets other users read or change this token; run chmod 600" \
  as bob sweeps
chmod 600 "$tokens/bob.token"

long=$(as alice submit "$sweep_yaml" --set name=long --set schedule.epochs=50 --no-reuse --json | json "d['sweep']['id']")
expect_error "bob cancels alice's sweep" "'bob' may not cancel sweep $long, submitted by 'alice'" as bob cancel --sweep "$long"
check "alice cancels her own sweep" as alice cancel --sweep "$long"
long_run=$(as alice runs --sweep "$long" --json | json "d['runs'][0]['id']")  # Ownership is checked first.
expect_error "bob resumes alice's run" \
  "'bob' may not resume run $long_run, submitted by 'alice': users resume their own sweeps and runs only" \
  as bob resume "$long_run"
expect_error "bob forks alice's run" "'bob' may not fork run $long_run, submitted by 'alice'" \
  as bob fork "$long_run" --set schedule.epochs=60
check "an admin cancels anyone's" as admin cancel --sweep "$sweep"

expect_error "a coordinator certificate from another CA" "certificate verify failed.*not signed by the CA of --tls-ca" \
  env NMSPARSE_TLS_CA="$pki/rogue_ca.pem" "$nmctl" --token-file "$tokens/alice.token" sweeps
expect_error "plaintext to the TLS coordinator" "cannot reach the coordinator.*if it serves TLS, give --tls-ca" \
  env -u NMSPARSE_TLS_CA "$nmctl" --token-file "$tokens/alice.token" sweeps

start_worker user_as_worker --token_file="$tokens/alice.token" --tls_cert="$pki/worker.pem" --tls_key="$pki/worker.key"
check "a user token cannot register a worker" wait_log "$tmp/nmworker-user_as_worker.log" \
  "PERMISSION_DENIED: token 'alice' has role user, which may not call /nmsparse.v1.WorkerGateway/Register"
start_worker no_cert --token_file="$tokens/worker.token"
check "a worker without a client certificate is refused" wait_log "$tmp/nmworker-no_cert.log" \
  "needs a client certificate signed by nmserver --tls_client_ca"
start_worker rogue_cert --token_file="$tokens/worker.token" --tls_cert="$pki/rogue_worker.pem" \
  --tls_key="$pki/rogue_worker.key"
check "a worker certificate from another CA cannot connect" wait_log "$tmp/nmworker-rogue_cert.log" \
  "cannot register with coordinator.*UNAVAILABLE"
for w in user_as_worker no_cert rogue_cert; do stop_worker "${worker_pid[$w]}"; unset "worker_pid[$w]"; done

# --- Confined paths: the worker (default data roots: Fashion-MNIST's directory and its work dir) refuses a
# dataset elsewhere, before starting any rank; a name made of ../ never becomes a path.
escape=$(as alice submit "$sweep_yaml" --set name=../../escape --set data.dataset=shards --set data.path=/etc \
  --no-reuse --json | json "d['sweep']['id']")
check "a dataset outside the data roots fails the run" wait_runs "$escape" "all(r['state']=='FAILED' for r in runs)" 60
run=$(as alice runs --sweep "$escape" --json | json "d['runs'][0]['id']")
message=$(as alice run "$run" --json | json "d['run']['message']")
check "the failure names the path and the roots" \
  grep -q "data.path /etc is outside this worker's data roots \[/usr/share/datasets/fashion-mnist, .*$work\] (nmworker --data_root)" <<<"$message"
check "no rank started for it" test ! -e "$work/runs/$run/rank-0.txt"
inside=$(as alice submit "$sweep_yaml" --set name=../../escape --no-reuse --json | json "d['sweep']['id']")
check "a run named ../../escape succeeds" wait_runs "$inside" "all(r['state']=='SUCCEEDED' for r in runs)" 60
run=$(as alice runs --sweep "$inside" --json | json "d['runs'][0]['id']")
check "its files are under runs/<id>" test -s "$work/runs/$run/rank-0.txt"
check "and nothing outside the work dir" test ! -e "$tmp/escape" -a ! -e "$work/escape"

# --- Issue 36: idempotency keys are per caller, a key used again with another spec is refused, and ownership
# is by token: a name revoked and given to someone else does not inherit the old holder's sweeps.
keyed=$(as alice submit "$sweep_yaml" --set name=keyed --no-reuse --idempotency-key k36 --json | json "d['sweep']['id']")
again=$(as alice submit "$sweep_yaml" --set name=keyed --no-reuse --idempotency-key k36 --json | json "d['sweep']['id']")
check "alice's second submit under her key returns her sweep" test -n "$keyed" -a "$keyed" = "$again"
bobs=$(as bob submit "$sweep_yaml" --set name=bobs --no-reuse --idempotency-key k36 --json | json "d['sweep']['id']")
check "bob's submit under alice's key stores a sweep of his own" test -n "$bobs" -a "$bobs" != "$keyed"
expect_error "alice's key used again for another spec is refused" \
  "idempotency key 'k36' was used for sweep $keyed with another spec" \
  as alice submit "$sweep_yaml" --set name=other --no-reuse --idempotency-key k36
"$nmserver" token revoke alice --db="$db" >/dev/null
"$nmserver" token add alice --role user --token_file="$tokens/alice_new.token" --db="$db" >/dev/null
expect_error "a name re-added for someone else cannot cancel the old holder's sweep" \
  "submitted by an earlier holder of the name 'alice'" as alice_new cancel --sweep "$keyed"

# --- No token in any log.
for t in "$tokens"/*.token; do
  check "$(basename "$t") appears in no log" bash -c "! grep -rqF \"\$(cat '$t')\" '$tmp'/*.log" 
done
finish
