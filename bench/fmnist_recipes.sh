#!/usr/bin/env bash
# Full Fashion-MNIST runs of the micro ViT under five recipes (dense, 2:4 SR-STE, 1:16 SR-STE, 1:16 MDGF-Exp,
# 1:16 SDGF-Geometric) through the real nmserver + nmworker + nmtrain: prints each run's accuracy and training
# time and the recipe table. --no-reuse: retrain even if an identical run already succeeded in .nmsparse/.
set -euo pipefail
cd "$(dirname "$0")/.."
exec tools/main_job.sh bench/fmnist_recipes_sweep.yaml --no-reuse "$@"
