#!/usr/bin/env bash
# The claim bench's summary of sweep SWEEP (bench/claim/claim_sweep.yaml): the paper's table (top-1 in percent,
# mean ± sample std over seeds, one column per N:M, dense trained once), then each recipe's paired Δ vs SR-STE
# beside each column (mean ± std of the per-seed differences, in percentage points). Both are nmctl compare's
# (report/paper_table.h), as Markdown for docs/benchmarks.md.
# Usage: bench/claim/summarise.sh SWEEP [nmctl compare options, e.g. --metric top1]   (NMCTL: the nmctl to use)
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 SWEEP [nmctl compare options]" >&2; exit 2; }
sweep=$1
shift
nmctl=${NMCTL:-nmctl}
echo "## Table"
"$nmctl" compare "$sweep" --format markdown "$@"
echo
echo "## Paired Δ vs SR-STE"
"$nmctl" compare "$sweep" --delta srste --format markdown "$@"
