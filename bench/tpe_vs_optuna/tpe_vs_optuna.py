"""nmsparse's TPE against Optuna's TPESampler (its defaults) and random search, on Branin, Hartmann-6 and a
mixed 4-D space (docs/benchmarks.md, "TPE against Optuna").

nmsparse proposes through tpe_propose (the sampler library nmserver's proposer calls); every sampler sees the
same stand-in trainer: top1 = 1 / (1 + regret), maximised. A study of BUDGET runs keeps PARALLEL in flight:
the oldest finishes first, and the next is proposed from the results finished by then (nmsparse's proposer
sees SUCCEEDED runs only; Optuna sees its RUNNING trials only through its constant liar, on by default).

Usage: tpe_vs_optuna.py TPE_PROPOSE [--seeds 50] [--budget 30] [--parallel 1 4] [--json OUT]
       [-- extra tpe_propose flags, e.g. --gamma=0.1]
"""

import argparse
import collections
import json
import math
import subprocess
import sys

import numpy as np
import optuna
from scipy.stats import mannwhitneyu

optuna.logging.set_verbosity(optuna.logging.WARNING)

# An axis: (name, kind, a, b): kind "float" [a, b], "log" [a, b], "int" [a, b], "cat" choices a.
SPACES = {
    "branin": [("x1", "float", -5.0, 10.0), ("x2", "float", 0.0, 15.0)],
    "hartmann6": [(f"x{i}", "float", 0.0, 1.0) for i in range(6)],
    "mixed4": [("lr", "log", 1e-4, 1e-1), ("x", "float", 0.0, 10.0), ("k", "int", 1, 8),
               ("c", "cat", ["a", "b", "c"], None)],
}

_H_A = np.array([[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14], [3, 3.5, 1.7, 10, 17, 8],
                 [17, 8, 0.05, 10, 0.1, 14]])
_H_P = 1e-4 * np.array([[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
                        [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]])
_H_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def regret(fn, v):
    """The objective's distance above its global minimum at the point v (dict name -> value)."""
    if fn == "branin":
        x1, x2 = v["x1"], v["x2"]
        f = ((x2 - 5.1 / (4 * math.pi**2) * x1**2 + 5 / math.pi * x1 - 6)**2 +
             10 * (1 - 1 / (8 * math.pi)) * math.cos(x1) + 10)
        return f - 0.397887357729738
    if fn == "hartmann6":
        x = np.array([v[f"x{i}"] for i in range(6)])
        f = -np.sum(_H_ALPHA * np.exp(-np.sum(_H_A * (x - _H_P)**2, axis=1)))
        return float(f) + 3.32236801141551
    # mixed4: its minimum 0 is at lr = 10^-2.5, x = 3, k = 5, c = b.
    return (((math.log10(v["lr"]) + 2.5) / 1.5)**2 + ((v["x"] - 3) / 5)**2 + ((v["k"] - 5) / 4)**2 +
            {"a": 0.3, "b": 0.0, "c": 0.6}[v["c"]])


def unit(axis, value):
    name, kind, a, b = axis
    if kind == "log":
        return (math.log(value) - math.log(a)) / (math.log(b) - math.log(a))
    if kind == "int":
        return (value - (a - 0.5)) / (b - a + 1)
    return (value - a) / (b - a)


def near(space, x, y, radius=0.05):
    """Whether x lies within `radius` of y in the unit cube (Euclidean over ranges; same choices)."""
    d2 = 0.0
    for axis in space:
        if axis[1] == "cat":
            if x[axis[0]] != y[axis[0]]:
                return False
        else:
            d2 += (unit(axis, x[axis[0]]) - unit(axis, y[axis[0]]))**2
    return math.sqrt(d2) <= radius


def parse(axis, text):
    kind = axis[1]
    return text if kind == "cat" else int(text) if kind == "int" else float(text)


class Nmsparse:
    def __init__(self, binary, fn, extra):
        flags = []
        for name, kind, a, b in SPACES[fn]:
            if kind == "cat":
                flags.append(f"--axis={name}:choices:{','.join(a)}")
            else:
                flags.append(f"--axis={name}:{a!r}:{b!r}" + {"log": ":log", "int": ":int"}.get(kind, ""))
        self.proc = subprocess.Popen([binary] + flags + extra, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)
        self.space = SPACES[fn]

    def study(self, seed):
        proc, space = self.proc, self.space

        class Study:
            def ask(self, index, results):
                lines = [f"{seed} {index} {len(results)}"]
                for texts, top1 in results:
                    lines.append(f"{top1!r} " + " ".join(texts))
                proc.stdin.write("\n".join(lines) + "\n")
                proc.stdin.flush()
                texts = proc.stdout.readline().split()
                assert len(texts) == len(space), texts
                return texts, {axis[0]: parse(axis, t) for axis, t in zip(space, texts)}

            def tell(self, handle, top1):
                pass

        return Study()


class Optuna:
    def __init__(self, fn, make_sampler):
        self.space, self.make_sampler = SPACES[fn], make_sampler

    def study(self, seed):
        study = optuna.create_study(direction="maximize", sampler=self.make_sampler(seed))
        dists = {}
        for name, kind, a, b in self.space:
            dists[name] = (optuna.distributions.CategoricalDistribution(a) if kind == "cat" else
                           optuna.distributions.IntDistribution(a, b) if kind == "int" else
                           optuna.distributions.FloatDistribution(a, b, log=kind == "log"))

        class Study:
            def ask(self, index, results):
                trial = study.ask(dists)
                return trial, dict(trial.params)

            def tell(self, trial, top1):
                study.tell(trial, top1)

        return Study()


def run(study, fn, budget, parallel):
    """One study; returns the regrets in finish order and the near-best flags of proposals 10 on."""
    space = SPACES[fn]
    inflight = collections.deque()
    results, regrets, near_best = [], [], []
    best = None  # (regret, point) of the finished runs.
    index = 0
    while len(regrets) < budget:
        while len(inflight) < parallel and index < budget:
            handle, point = study.ask(index, results)
            if index >= 10 and best is not None:
                near_best.append(near(space, point, best[1]))
            inflight.append((handle, point))
            index += 1
        handle, point = inflight.popleft()
        r = regret(fn, point)
        top1 = 1 / (1 + r)
        study.tell(handle, top1)
        results.append((handle, top1))
        regrets.append(r)
        if best is None or r < best[0]:
            best = (r, point)
    return regrets, near_best


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    p = argparse.ArgumentParser()
    p.add_argument("tpe_propose")
    p.add_argument("--seeds", type=int, default=50)
    p.add_argument("--budget", type=int, default=30)
    p.add_argument("--parallel", type=int, nargs="+", default=[1, 4])
    p.add_argument("--functions", nargs="+", default=list(SPACES))
    p.add_argument("--json")
    args = p.parse_args(argv)
    samplers = {
        "nmsparse": lambda fn: Nmsparse(args.tpe_propose, fn, extra),
        "optuna": lambda fn: Optuna(fn, lambda s: optuna.samplers.TPESampler(seed=s)),
        "optuna_no_liar": lambda fn: Optuna(fn, lambda s: optuna.samplers.TPESampler(seed=s, constant_liar=False)),
        "random": lambda fn: Optuna(fn, lambda s: optuna.samplers.RandomSampler(seed=s)),
    }
    checkpoints = [k for k in (10, 20, 30) if k <= args.budget]
    out = {}
    print(f"budget {args.budget}, {args.seeds} seeds, tpe_propose flags {extra or 'defaults'}")
    print("| function | parallel | sampler | median regret at " + " / ".join(map(str, checkpoints)) +
          " | near-best share of proposals 10+ | p (nmsparse worse) | p (nmsparse better) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for fn in args.functions:
        for parallel in args.parallel:
            best_at = {}
            for name, make in samplers.items():
                if name == "optuna_no_liar" and parallel == 1:
                    continue  # The liar only acts on trials in flight.
                driver = make(fn)
                curves, flags = [], []
                for seed in range(args.seeds):
                    regrets, near_best = run(driver.study(seed), fn, args.budget, parallel)
                    curves.append(np.minimum.accumulate(regrets))
                    flags += near_best
                curves = np.array(curves)
                best_at[name] = curves[:, -1]
                out[f"{fn}/p{parallel}/{name}"] = {"best_regret": curves.tolist(), "near_best": flags}
                medians = " / ".join(f"{np.median(curves[:, k - 1]):.4g}" for k in checkpoints)
                share = f"{np.mean(flags):.0%}" if flags else "-"
                worse = better = ""
                if name != "nmsparse":
                    ours = best_at["nmsparse"]
                    worse = f"{mannwhitneyu(ours, best_at[name], alternative='greater').pvalue:.3g}"
                    better = f"{mannwhitneyu(ours, best_at[name], alternative='less').pvalue:.3g}"
                print(f"| {fn} | {parallel} | {name} | {medians} | {share} | {worse} | {better} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f)


if __name__ == "__main__":
    main()
