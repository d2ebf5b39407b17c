"""How often kernelscope's across-process interval covers a rerun (analysis/stats.py, simulated; no torch).

Each simulated run times one mode in P processes of S samples: process medians scatter log-normally by
--between (the H200's launch-bound default read 0.076-0.135 ms in three runs: ~25%), samples inside a process
by --within. Optionally one process in --wild runs is slowed by --wild-factor (a neighbour on the machine), or
each process on its own, with probability --slow-share, by --slow-factor (a host whose processes land now and
then on a contended CPU: the H100's eager processes of 2026-12-05 read ~0.033 ms, and 3 of 15 read 1.4-1.7x that).
For five identical runs (the issue's proof) it counts

    pairwise:  another run's median inside this run's interval (95% by construction at normal noise)
    proof:     for at least 4 of the 5 runs, all 4 others' medians inside that run's interval
    compare:   two runs' intervals separate (compare would call a change in identical code)

and compares with a bootstrap over processes and samples. Results are in benchmarks/RESULTS.md.

    python benchmarks/interval_calibration.py [--trials 400] [--processes 3,5,7]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics

from kernelscope.analysis.stats import combine_processes


def one_run(rng: random.Random, p: int, s: int, between: float, within: float, wild: float,
            wild_factor: float, slow_share: float = 0.0, slow_factor: float = 1.0) -> dict:
    procs = []
    slow = rng.randrange(p) if rng.random() < wild else -1
    for k in range(p):
        mu = math.exp(rng.gauss(0, between)) * (wild_factor if k == slow else 1.0)
        if slow_share and rng.random() < slow_share:  # no draw otherwise: the earlier scenarios' numbers stand
            mu *= slow_factor
        xs = [mu * math.exp(rng.gauss(0, within)) for _ in range(s)]
        procs.append({"median": statistics.median(xs), "samples": xs})
    return combine_processes(procs)


def boot_interval(run: dict, rng: random.Random, n: int = 300) -> tuple[float, float]:
    groups = run["process_samples"]
    meds = []
    for _ in range(n):
        pick = [groups[rng.randrange(len(groups))] for _ in groups]
        meds.append(statistics.median(statistics.median(rng.choices(g, k=len(g))) for g in pick))
    meds.sort()
    return meds[int(0.025 * (n - 1))], meds[int(0.975 * (n - 1))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--processes", default="3,5,7")
    ap.add_argument("--samples", type=int, default=30)
    ap.add_argument("--between", type=float, default=0.25)
    ap.add_argument("--within", type=float, default=0.05)
    ap.add_argument("--wild", type=float, default=0.0, help="share of runs with one slowed process")
    ap.add_argument("--wild-factor", type=float, default=5.0)
    ap.add_argument("--slow-share", type=float, default=0.0, help="share of processes slowed, each on its own")
    ap.add_argument("--slow-factor", type=float, default=1.6)
    ap.add_argument("--bootstrap", action="store_true", help="also the bootstrap interval (slow)")
    a = ap.parse_args()
    rng = random.Random(13)
    print(f"between {a.between:.0%}, within {a.within:.0%}, {a.samples} samples, wild {a.wild:.0%} x{a.wild_factor:g}, "
          f"slow processes {a.slow_share:.0%} x{a.slow_factor:g}")
    for p in (int(x) for x in a.processes.split(",")):
        tallies = {"ks": [0, 0, 0], "boot": [0, 0, 0]}
        widths = []
        for _ in range(a.trials):
            runs = [one_run(rng, p, a.samples, a.between, a.within, a.wild, a.wild_factor, a.slow_share,
                            a.slow_factor) for _ in range(5)]
            kinds = {"ks": [(r["low"], r["high"]) for r in runs]}
            if a.bootstrap:
                kinds["boot"] = [boot_interval(r, rng) for r in runs]
            widths.append(statistics.median(h / lo for lo, h in kinds["ks"]))
            for kind, ivs in kinds.items():
                good = 0
                for i, (lo, hi) in enumerate(ivs):
                    inside = [lo <= runs[j]["median"] <= hi for j in range(5) if j != i]
                    tallies[kind][0] += sum(inside)
                    good += all(inside)
                tallies[kind][1] += good >= 4
                tallies[kind][2] += sum(ivs[i][1] < ivs[j][0] for i in range(5) for j in range(5) if i != j)
        for kind, (pair, proof, sep) in tallies.items():
            if kind == "boot" and not a.bootstrap:
                continue
            extra = f", median high/low {statistics.median(widths):.2f}" if kind == "ks" else ""
            print(f"P={p} {kind:4s}: pairwise {pair / (20 * a.trials):.1%}, proof met {proof / a.trials:.1%}, "
                  f"intervals separate {sep / (20 * a.trials):.2%}{extra}")


if __name__ == "__main__":
    main()
