"""Does timing over a longer window steady the per-process median of a launch-bound model? (issue 13, H200)

On a shared H200 the per-process medians of one model moved 0.7-1.5x between fresh processes minutes apart, while
each process's 30 samples (about 0.2 s of calls) sat tight. Inside single processes the per-call time jumped
between levels (e.g. 47 -> 33 µs) from one sample to the next and stayed there for tens of samples. If those levels
come and go within seconds, a median over samples spread across several seconds should wander less between
processes than a median over the first 0.2 s; if each process is stuck at its own level, it should not.

``run``: for each of N rounds, for each mode (eager, default, ...): a fresh process (benchmarks/hand_timing.py's
build and warm-up: no kernelscope code in it) pins itself to the CPU where its calls ran fastest, as both timing
tools do, then takes ~5 ms samples (k back-to-back calls between two CUDA events) back to back for ``--seconds``,
each with its start time. One JSON line per process.

``report``: per mode and window (the first 30 samples, the first 0.5, 1, 2 s, all of it): the processes' medians,
their spread (max/min) and the standard deviation of their logarithms.

    python benchmarks/window_length.py run samples/linear_gelu.py --modes eager,default --processes 6 --json W.jsonl
    python benchmarks/window_length.py report W.jsonl
"""

from __future__ import annotations

import gzip
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hand_timing import experiment  # noqa: E402

WINDOWS = (("first 30 samples", None), ("0.5 s", 0.5), ("1 s", 1.0), ("2 s", 2.0), ("all", math.inf))


def worker(model: str, mode: str, device: str, seconds: float, sets: list[str]) -> dict:
    import torch
    from hand_timing import build, fastest_cpu, warm

    fn, inputs, timed, sync = build(model, mode, device, sets)
    _first, k = warm(fn, inputs, mode, sync, timed)
    cpu = None
    with torch.no_grad():
        cpus = sorted(os.sched_getaffinity(0))
        if device == "cuda" and len(cpus) > 1:
            cpu, _speed = fastest_cpu(fn, inputs, timed, k, cpus)
        samples, t0 = [], time.perf_counter()
        while (t := time.perf_counter() - t0) < seconds:
            samples.append((round(t, 5), timed(k)))
    return {"mode": mode, "calls_per_sample": k, "cpu": cpu, "samples": samples}


def windows(samples: list) -> dict[str, float]:
    out = {}
    for name, length in WINDOWS:
        part = samples[:30] if length is None else [(t, ms) for t, ms in samples if t < length]
        out[name] = statistics.median(ms for _t, ms in part)
    return out


def report(path: str) -> None:
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        recs = [json.loads(ln) for ln in f if ln.strip()]
    for mode in dict.fromkeys(r["mode"] for r in recs):
        mine = [r for r in recs if r["mode"] == mode]
        per = [windows(r["samples"]) for r in mine]
        print(f"\n{mode}: {len(per)} processes, {statistics.median(len(r['samples']) for r in mine)} samples each "
              "(median)")
        print("| window | per-process medians (µs) | max/min | sd of log |")
        print("| --- | --- | ---: | ---: |")
        for name, _ in WINDOWS:
            meds = [p[name] * 1e3 for p in per]
            sd = statistics.stdev(math.log(m) for m in meds) if len(meds) > 1 else 0.0
            print(f"| {name} | {', '.join(f'{m:.1f}' for m in meds)} | {max(meds) / min(meds):.2f} | {sd:.3f} |")


def main() -> None:
    experiment(__file__, "window", 6, "seconds", 4.0, worker, report,
               lambda rec: f"{len(rec['samples'])} samples, {windows(rec['samples'])['all'] * 1e3:.1f} µs")


if __name__ == "__main__":
    main()
