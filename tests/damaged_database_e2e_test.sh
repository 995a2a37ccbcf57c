#!/usr/bin/env bash
# End to end (issue 36): nmserver refuses, at start and naming the file, a database whose b-tree pages are
# damaged; before, it started with no word and later reads answered DATA_LOSS with the statement's text. The
# database is a real one (20 sweeps submitted through nmctl); then the root page of its runs table and its last
# two pages are overwritten, page 1 (the header and the schema) left intact, and nmserver is started on it.
#
# Usage: damaged_database_e2e_test.sh NMSERVER NMWORKER NMCTL SWEEP_YAML
set -uo pipefail

nmserver=$(realpath "$1"); nmctl=$(realpath "$3")
sweep_yaml=$(realpath "$4")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/damaged.XXXXXX")
db="$tmp/nmsparse.db"

source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

start_server 0
for i in $(seq 20); do ctl submit "$sweep_yaml" --set name="damaged-$i" --no-reuse >/dev/null || fail "submit $i"; done
stop_pid "$server_pid"
server_pid=""

pages=$(python3 - "$db" <<'PY'
import sqlite3, sys
db = sys.argv[1]
c = sqlite3.connect(db)  # Closing it folds any write-ahead log into the file.
size = c.execute("PRAGMA page_size").fetchone()[0]
count = c.execute("PRAGMA page_count").fetchone()[0]
root = c.execute("SELECT rootpage FROM sqlite_master WHERE name = 'runs'").fetchone()[0]
c.close()
damaged = sorted({root, count - 1, count} - {1})
with open(db, "r+b") as f:
    for page in damaged:
        f.seek((page - 1) * size)
        f.write(b"\xa5" * size)
print(" ".join(map(str, damaged)), "of", count)
PY
)
log "damaged pages $pages of $db"

# Bounded: a server that starts anyway is stopped after 30 s (exit 124), and that is a failure.
timeout 30 "$nmserver" --listen=127.0.0.1:0 --db="$db" >"$tmp/damaged.log" 2>&1
code=$?
log "nmserver on the damaged database: exit $code: $(head -c 600 "$tmp/damaged.log")"
check "nmserver refuses to start (exit $code)" test "$code" -ne 0 -a "$code" -ne 124
check "its message names the file" grep -qF "$db" "$tmp/damaged.log"
check "and says that it is damaged" grep -q "is damaged" "$tmp/damaged.log"

finish
