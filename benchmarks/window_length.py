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

import argparse
import gzip
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

WINDOWS = (("first 30 samples", None), ("0.5 s", 0.5), ("1 s", 1.0), ("2 s", 2.0), ("all", math.inf))


def worker(model: str, mode: str, device: str, seconds: float, sets: list[str]) -> dict:
    import torch
    from hand_timing import build, warm

    fn, inputs, timed, sync = build(model, mode, device, sets)
    _first, k = warm(fn, inputs, mode, sync, timed)
    cpu = None
    with torch.no_grad():
        cpus = sorted(os.sched_getaffinity(0))
        if device == "cuda" and len(cpus) > 1:
            speed = {}
            for c in cpus:
                os.sched_setaffinity(0, {c})
                fn(*inputs)
                speed[c] = statistics.median(timed(k) for _ in range(3))
            cpu = min(speed, key=speed.__getitem__)
            os.sched_setaffinity(0, {cpu})
        samples, t0 = [], time.perf_counter()
        while (t := time.perf_counter() - t0) < seconds:
            samples.append((round(t, 5), timed(k)))
    return {"mode": mode, "calls_per_sample": k, "cpu": cpu, "samples": samples}


def windows(samples: list) -> dict[str, float]:
    out = {}
    for name, length in WINDOWS:
        part = samples[:30] if length is None else [ms for t, ms in samples if t < length]
        if length is None:
            part = [ms for _t, ms in part]
        out[name] = statistics.median(part)
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
    ap = argparse.ArgumentParser()
    ap.add_argument("step", choices=["run", "report", "worker"])
    ap.add_argument("path", help="run/worker: the model file; report: the JSON lines file")
    ap.add_argument("--modes", default="eager,default")
    ap.add_argument("--mode", default="eager")
    ap.add_argument("--processes", type=int, default=6)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--json", default="window_length.jsonl")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    a = ap.parse_args()
    if a.step == "report":
        report(a.path)
        return
    if a.step == "worker":
        print("@@window " + json.dumps(worker(a.path, a.mode, a.device, a.seconds, a.set)), flush=True)
        return
    modes = [m.strip() for m in a.modes.split(",") if m.strip()]
    caches = {m: tempfile.mkdtemp(prefix=f"window-cache-{m}-") for m in modes}
    with open(a.json, "a") as f:
        for rnd in range(1, a.processes + 1):
            for m in modes:
                env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": caches[m],
                       "TRITON_CACHE_DIR": os.path.join(caches[m], "triton")}
                proc = subprocess.run([sys.executable, __file__, "worker", a.path, "--mode", m, "--device", a.device,
                                       "--seconds", str(a.seconds), *(f"--set={x}" for x in a.set)],
                                      capture_output=True, text=True, env=env, check=False)
                line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("@@window ")), None)
                if line is None:
                    sys.exit(f"window worker {m} round {rnd} failed: {proc.stderr[-2000:]}")
                rec = {**json.loads(line[len("@@window "):]), "process": rnd, "time": time.time()}
                f.write(json.dumps(rec) + "\n")
                f.flush()
                print(rnd, m, len(rec["samples"]), f"{windows(rec['samples'])['all'] * 1e3:.1f} µs", flush=True)


if __name__ == "__main__":
    main()
