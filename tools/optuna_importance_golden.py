#!/usr/bin/env python3
"""Prints Optuna's fANOVA parameter importances on synthetic objectives, with the trials they came from.

report/param_importance_test.cc reads the output (report/testdata/optuna_importances.txt) and checks that
nmsparse's FanovaImportances, on the same trials, ranks the parameters in the same order and lands within a
tolerance of Optuna's numbers. Needs optuna and scikit-learn (PyPI):
  python3 -m venv /tmp/v && /tmp/v/bin/pip install optuna scikit-learn
  /tmp/v/bin/python tools/optuna_importance_golden.py > report/testdata/optuna_importances.txt
Deterministic: a seeded RandomSampler, seeded noise, Optuna's evaluator at seed 0.
"""
import math

import numpy as np
import optuna
from optuna.importance import FanovaImportanceEvaluator, get_param_importances

TRIALS = 120

# name -> (parameter bounds, objective); importances clearly apart by construction.
FUNCTIONS = {
    "linear_10_1_0": ({"x0": (0.0, 1.0), "x1": (0.0, 1.0), "x2": (0.0, 1.0)},
                      lambda p: 10 * p["x0"] + 1 * p["x1"] + 0 * p["x2"]),
    "quadratic_and_step": ({"a": (-2.0, 2.0), "b": (0.0, 10.0), "c": (0.0, 1.0)},
                           lambda p: p["a"] ** 2 + (1.0 if p["b"] > 5 else 0.0) + 0.05 * p["c"]),
    "sine_two_params": ({"u": (0.0, 1.0), "v": (0.0, 1.0)},
                        lambda p: math.sin(6 * p["u"]) + 0.3 * p["v"]),
}


def main():
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    print(f"# optuna {optuna.__version__}: FanovaImportanceEvaluator(seed=0), {TRIALS} RandomSampler trials")
    for index, (name, (bounds, objective)) in enumerate(FUNCTIONS.items()):
        noise = np.random.default_rng(index)

        def trial_value(trial):
            p = {k: trial.suggest_float(k, lo, hi) for k, (lo, hi) in bounds.items()}
            return objective(p) + 0.01 * float(noise.standard_normal())

        study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=index))
        study.optimize(trial_value, n_trials=TRIALS)
        print(f"function {name}")
        for k, (lo, hi) in bounds.items():
            print(f"param {k} {lo!r} {hi!r}")
        for t in study.trials:
            print("trial " + " ".join(repr(t.params[k]) for k in bounds) + f" {t.value!r}")
        importances = get_param_importances(study, evaluator=FanovaImportanceEvaluator(seed=0))
        for k in bounds:
            print(f"importance {k} {importances[k]:.6f}")


if __name__ == "__main__":
    main()
