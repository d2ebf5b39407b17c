"""Why a later process times slow more often than the first: an experiment with no kernelscope code.

In every issue 13 proof recorded so far (benchmarks/results/h200-proofs-*.json and the H100's of 2026-12-05), a
process whose median came out more than 1.3x its mode's median over the whole proof was process 1 in 5 of 82
cases, process 2 in 15 and process 3 in 11. What differs for a later process when it times:

- B, contexts: the other later processes of its group wait beside it holding a CUDA context and their model on
  the GPU (they compiled side by side before the timings; gpu_contexts.py counts up to 6 such contexts);
- C, burst: those processes have just compiled side by side, a few seconds of every CPU busy right before;
- D: both, as in a run.
A: the process times alone on a quiet machine, as a first process does.

Each condition times the same eager call in a fresh process with ``benchmarks/hand_timing.py``'s functions (CUDA
events, the fastest CPU, as kernelscope's --cpu-pinning does), set up beside --helpers processes and, like a later
process at its gate, warmed up and timed the moment they are idle, the conditions interleaved
and rotated over --reps repetitions so that a host whose speed drifts over minutes favours none. Prints one line
per timing and a summary (per condition: the medians, their median, how many came out more than 1.3x A's median).

    python benchmarks/later_slow.py samples/linear_gelu.py [--reps 5] [--helpers 4] [--burst 5] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONDITIONS = {"A": (False, False), "B": (True, False), "C": (False, True), "D": (True, True)}  # (contexts, burst)
SLOW = 1.3


def helper(model: str, device: str, context: bool, burst_s: float, start: Path, ready: Path, hold: Path) -> None:
    """What a later process does before another one's timing: optionally the model on the GPU (a CUDA context);
    once ``start`` exists, optionally a CPU burst (a compile from the cache keeps one CPU busy in each process),
    then idle until ``hold`` is gone. Writes ``ready`` when idle."""
    import torch

    sys.path.insert(0, str(HERE))
    from hand_timing import load_model_file

    mod = load_model_file(model)
    m = mod.get_model()
    if context and device == "cuda":
        m = m.to(device)
        x = [t.to(device) for t in mod.get_inputs() if isinstance(t, torch.Tensor)]
        with torch.no_grad():
            m(*x)
        torch.cuda.synchronize()
    while not start.exists():
        time.sleep(0.02)
    end, n = time.perf_counter() + burst_s, 0
    while time.perf_counter() < end:  # Python work, as Dynamo's tracing and a cache load are
        n += sum(i * i for i in range(2000))
    ready.write_text(str(n))
    while hold.exists():
        time.sleep(0.05)


def timer(model: str, device: str, ready: Path, go: Path) -> dict:
    """hand_timing.py's worker (eager), waiting between its first call and its warm-up as a later process waits
    at its gate: set up first, then warmed up and timed the moment the helpers are done."""
    import torch

    sys.path.insert(0, str(HERE))
    import hand_timing as ht

    fn, inputs, timed, sync = ht.build(model, "eager", device)
    with torch.no_grad():
        fn(*inputs)
    sync()
    ready.write_text("")
    while not go.exists():
        time.sleep(0.005)
    _, k = ht.warm(fn, inputs, "eager", sync, timed)
    samples, cpu, tries = ht.samples_on_fastest_cpu(fn, inputs, timed, k, device == "cuda")
    return {"median_ms": statistics.median(samples), "cpu": cpu, "tries": tries}


def one(model: str, device: str, cond: str, helpers: int, burst_s: float, tmp: Path) -> dict:
    """One timing process in condition ``cond``: it and the helpers set up side by side; the helpers burst (C, D)
    once it waits; it times as soon as they are idle."""
    context, burst = CONDITIONS[cond]
    tag = f"{cond}-{time.time_ns()}"
    start, hold, t_ready, go = (tmp / f"{x}-{tag}" for x in ("start", "hold", "timer-ready", "go"))
    hold.write_text("")
    readies = [tmp / f"ready-{tag}-{i}" for i in range(helpers if cond != "A" else 0)]
    procs = [subprocess.Popen([sys.executable, __file__, "helper", model, "--device", device, "--start", str(start),
                               "--ready", str(r), "--hold", str(hold), "--burst", str(burst_s if burst else 0.0),
                               *(["--context"] if context else [])]) for r in readies]
    out = tmp / f"timer-{tag}.json"
    tp = subprocess.Popen([sys.executable, __file__, "timer", model, "--device", device, "--ready", str(t_ready),
                           "--go", str(go), "--out-file", str(out)])
    try:
        while not t_ready.exists():
            if tp.poll() is not None or any(p.poll() is not None for p in procs):
                sys.exit("a process ended early")
            time.sleep(0.02)
        start.write_text("")
        while not all(r.exists() for r in readies):
            if any(p.poll() is not None for p in procs):
                sys.exit("a helper ended early")
            time.sleep(0.005)
        t0 = time.time()
        go.write_text("")
        if tp.wait(timeout=300) != 0:
            sys.exit("the timing process failed")
    finally:
        hold.unlink(missing_ok=True)
        for p in procs:
            p.wait(timeout=60)
    rec = json.loads(out.read_text())
    return {"condition": cond, **rec, "started": t0}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("step", nargs="?", default="run", choices=["run", "helper", "timer"])
    ap.add_argument("model")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--helpers", type=int, default=4)
    ap.add_argument("--burst", type=float, default=5.0)
    ap.add_argument("--out", default=None)
    ap.add_argument("--context", action="store_true")
    ap.add_argument("--ready")
    ap.add_argument("--hold")
    ap.add_argument("--start")
    ap.add_argument("--go")
    ap.add_argument("--out-file")
    a = ap.parse_args()
    if a.step == "helper":
        helper(a.model, a.device, a.context, a.burst, Path(a.start), Path(a.ready), Path(a.hold))
        return
    if a.step == "timer":
        Path(a.out_file).write_text(json.dumps(timer(a.model, a.device, Path(a.ready), Path(a.go))))
        return
    tmp = Path(tempfile.mkdtemp(prefix="later-slow-"))
    order = list(CONDITIONS)
    recs = []
    t0 = time.perf_counter()
    for rep in range(a.reps):
        for cond in order[rep % len(order):] + order[:rep % len(order)]:  # rotated: none always first
            r = {**one(a.model, a.device, cond, a.helpers, a.burst, tmp), "rep": rep + 1}
            recs.append(r)
            print(json.dumps(r), flush=True)
    base = statistics.median(r["median_ms"] for r in recs if r["condition"] == "A")
    summary = {"model": a.model, "device": a.device, "reps": a.reps, "helpers": a.helpers, "burst_s": a.burst,
               "wall_s": round(time.perf_counter() - t0, 1), "conditions": {}}
    for cond, (context, burst) in CONDITIONS.items():
        ms = [r["median_ms"] for r in recs if r["condition"] == cond]
        summary["conditions"][cond] = {"contexts": context, "burst": burst, "medians_ms": ms,
                                       "median_ms": statistics.median(ms), "vs_A": statistics.median(ms) / base,
                                       "slow": sum(x > SLOW * base for x in ms)}
    for cond, s in summary["conditions"].items():
        print(f"{cond} (contexts {s['contexts']}, burst {s['burst']}): median {s['median_ms']:.4f} ms, "
              f"{s['vs_A']:.3f}x A, {s['slow']} of {len(s['medians_ms'])} more than {SLOW}x A's median")
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "later_slow.json").write_text(json.dumps({"summary": summary, "timings": recs}, indent=1))


if __name__ == "__main__":
    main()
