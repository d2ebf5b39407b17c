"""Timing fidelity: `kernelscope profile`'s latency against an independent CUDA-event timing, and how often a rerun's
median falls in a run's interval. Runs on a CUDA GPU (on the CPU the peer times with perf_counter).

    python benchmarks/timing_vs_cuda_events.py samples/linear_gelu.py [--runs 5] [--modes eager,default]
        [--processes P] [--set NAME=VALUE ...] [--out DIR] [--device cuda]

Runs R pairs. A pair is one `kernelscope profile MODEL` run (its default --processes unless --processes) and one
hand timing with the same number of fresh processes per mode and no kernelscope code in them: the model file built
(seed 0) and compiled as kernelscope compiles it, the first call, a warm-up of at least 200 calls and 1 s, on CUDA
the CPU where the calls run fastest, then 30 samples of k back-to-back calls between two CUDA events (~5 ms each).
The hand timing goes after kernelscope's run in odd pairs and before it in even ones, so a host whose speed drifts
over the minutes favours neither side. Finished pairs stay in DIR (default kernelscope-out/timing): the same
command continues where a stopped one left off.

Prints per mode:
- kernelscope / CUDA events: the median of every kernelscope process against the median of every hand process,
  with a 95% bootstrap interval (each side's processes resampled), and pair by pair;
- rerun: the runs whose interval holds every other run's median, and the pairs (i, j) whose j median lies in i's
  interval;
- compare: how many pairs of identical runs `kernelscope compare` read as `none`;
and the wall of each profile run against its hand timing's (which neither profiles nor writes reports).
An H100 takes about 2 minutes a pair for the seed sample (eager and default, 3 processes).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# kernelscope's modes as torch.compile modes (kernelscope compiles max-autotune without CUDA graphs)
MODES = {"eager": None, "default": "default", "max-autotune": "max-autotune-no-cudagraphs"}
SAMPLE_MS = 5.0  # one sample's length: its fixed cost (the last kernel's tail, the event) stays under 1%


# ---------------------------------------------------------------------------------------------------- the peer
def load_model_file(model_path: str, sets: list[str] | None = None):  # noqa: ANN201
    """The model file executed as a module after seeding 0, its constants overridden as kernelscope's --set does."""
    import ast
    import importlib.util

    import torch

    random.seed(0)
    torch.manual_seed(0)
    spec = importlib.util.spec_from_file_location("hand_model", model_path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    for item in sets or []:
        name, _, raw = item.partition("=")
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw
        setattr(mod, name.strip(), value)
    return mod


def compiled(model, mode: str, device: str):  # noqa: ANN001, ANN201
    """The model as kernelscope compiles it in ``mode`` (freezing on for the CPU, off for CUDA)."""
    import torch

    if mode == "eager":
        return model
    import torch._inductor.config as ic

    ic.freezing = device != "cuda"
    return torch.compile(model, mode=MODES[mode])


def timers(call, device: str):  # noqa: ANN001, ANN201
    """(sync, timed): ``timed(n)`` is ms per call over n back-to-back ``call()``s between two CUDA events
    (perf_counter on the CPU)."""
    import torch

    cuda = device == "cuda"

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    def timed(n: int) -> float:
        if cuda:
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(n):
                call()
            b.record()
            b.synchronize()
            return a.elapsed_time(b) / n
        t0 = time.perf_counter()
        for _ in range(n):
            call()
        return (time.perf_counter() - t0) * 1e3 / n

    return sync, timed


def warm(call, mode: str, sync, timed) -> tuple[float, int]:  # noqa: ANN001
    """The first call (the compile, timed) and the warm-up (at least 200 calls and 1 s); returns (first call s, k),
    k the calls in one ~5 ms sample."""
    import torch

    with torch.no_grad():
        t0 = time.perf_counter()
        call()
        sync()
        first = time.perf_counter() - t0
        if mode != "eager":
            try:  # as kernelscope does: the compile-worker pool would run beside the timed calls
                from torch._inductor import async_compile

                async_compile.shutdown_compile_workers()
            except Exception:
                pass
        w0, calls = time.perf_counter(), 0
        while calls < 200 or time.perf_counter() - w0 < 1.0:
            call()
            calls += 1
        sync()
        per_call = statistics.median(timed(10) for _ in range(5))
        k = max(1, min(1000, int(SAMPLE_MS / max(per_call, 1e-4))))
    return first, k


def fastest_cpu(call, timed, k: int, cpus: list[int]) -> tuple[int, dict[int, float]]:  # noqa: ANN001
    """kernelscope's --cpu-pinning question, coded separately: which CPU runs the calls fastest now (median of 3
    samples on each). Pins this process there; returns it and every CPU's ms per call."""
    speed = {}
    for c in cpus:
        os.sched_setaffinity(0, {c})
        call()
        speed[c] = statistics.median(timed(k) for _ in range(3))
    cpu = min(speed, key=speed.__getitem__)
    os.sched_setaffinity(0, {cpu})
    return cpu, speed


def hand_worker(model_path: str, mode: str, device: str, sets: list[str]) -> dict:
    """One fresh process of the hand timing: build, compile, warm up, choose the CPU, 30 samples. On CUDA the
    samples are taken again after a new choice (up to 3 times) when they ran 15% slower than the CPU promised."""
    import torch

    mod = load_model_file(model_path, sets)
    model = mod.get_model().to(device).eval()
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()]
    fn = compiled(model, mode, device)

    def call() -> object:
        return fn(*inputs)

    sync, timed = timers(call, device)
    first, k = warm(call, mode, sync, timed)
    cpus, cpu = sorted(os.sched_getaffinity(0)), None
    with torch.no_grad():
        for _ in range(3):
            if device != "cuda" or len(cpus) < 2:
                samples = [timed(k) for _ in range(30)]
                break
            cpu, speed = fastest_cpu(call, timed, k, cpus)
            samples = [timed(k) for _ in range(30)]
            if statistics.median(samples) <= 1.15 * speed[cpu]:
                break
    return {"mode": mode, "first_call_s": first, "median_ms": statistics.median(samples), "calls_per_sample": k,
            "cpu": cpu}


def hand_run(a: argparse.Namespace, processes: int, dest: Path) -> None:
    """``processes`` rounds of one fresh process per mode, interleaved as kernelscope's are, each mode on its own
    Inductor cache (empty in round 1, reused later, as kernelscope's later processes do)."""
    caches = {m: tempfile.mkdtemp(prefix=f"hand-cache-{m}-") for m in a.mode_list}
    per: dict[str, list[float]] = {m: [] for m in a.mode_list}
    t0 = time.perf_counter()
    for rnd in range(1, processes + 1):
        for m in a.mode_list:
            env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": caches[m],
                   "TRITON_CACHE_DIR": os.path.join(caches[m], "triton")}
            proc = subprocess.run([sys.executable, __file__, a.model, "--worker", m, "--device", a.device,
                                   *(f"--set={x}" for x in a.set)], capture_output=True, text=True, env=env)
            line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("@@hand ")), None)
            if line is None:
                sys.exit(f"hand process {rnd} of {m} failed: {proc.stderr[-2000:]}")
            per[m].append(json.loads(line[len("@@hand "):])["median_ms"])
    dest.write_text(json.dumps({"wall_s": time.perf_counter() - t0, "per_process_ms": per}, indent=1))


# ---------------------------------------------------------------------------------------------------- the pairs
def profile_run(a: argparse.Namespace, run_dir: Path) -> None:
    cmd = [sys.executable, "-m", "kernelscope", "profile", a.model, "--out", str(run_dir), "--force",
           "--modes", ",".join(a.mode_list), "--device", a.device, *(f"--set={x}" for x in a.set)]
    if a.processes:
        cmd += ["--processes", str(a.processes)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    (run_dir.parent / f"{run_dir.name}.wall").write_text(f"{time.perf_counter() - t0:.2f}\n")
    (run_dir.parent / f"{run_dir.name}.log").write_text(proc.stdout + proc.stderr)
    if not (run_dir / "result.json").exists():
        sys.exit(f"kernelscope profile failed (exit {proc.returncode}): {proc.stderr[-2000:]}")


def pairs(a: argparse.Namespace, out: Path) -> None:
    for i in range(1, a.runs + 1):
        run_dir, hand = out / f"run-{i}", out / f"hand-{i}.json"
        if (run_dir / "result.json").exists() and hand.exists():
            continue
        hand.unlink(missing_ok=True)  # a pair is timed together or not at all
        if i % 2 == 0:  # ABBA: the hand timing first in even pairs
            hand_run(a, processes_of(a, out), hand)
        profile_run(a, run_dir)
        if i % 2 == 1:
            hand_run(a, processes_of(a, out), hand)
        print(f"pair {i} of {a.runs} done", flush=True)


def processes_of(a: argparse.Namespace, out: Path) -> int:
    """The hand timing's processes per mode: kernelscope's, as run 1 recorded them."""
    return a.processes or int(json.loads((out / "run-1" / "result.json").read_text())["settings"]["processes"])


def mode_latency(run_dir: Path, mode: str) -> dict:
    """A mode's latency_ms from result.json (median, low, high, per_process)."""
    modes = json.loads((run_dir / "result.json").read_text())["modes"]
    lat = next(m["latency_ms"] for m in modes if m["name"] == mode)
    if not lat:
        sys.exit(f"{run_dir}: {mode} has no latency")
    return dict(lat)


# ---------------------------------------------------------------------------------------------------- the figures
def ratio_interval(num: list[float], den: list[float], n: int = 4000) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of median(num) / median(den), each side's processes resampled."""
    rng = random.Random(0)
    boots = sorted(statistics.median(rng.choices(num, k=len(num))) / statistics.median(rng.choices(den, k=len(den)))
                   for _ in range(n))
    return boots[int(0.025 * n)], boots[int(0.975 * n) - 1]


def compare_changes(out: Path, runs: list[Path]) -> dict[str, list[str]]:
    """`kernelscope compare` of every pair of runs: per mode, each pair's change."""
    changes: dict[str, list[str]] = {}
    for x, y in itertools.combinations(runs, 2):
        dest = out / f"compare-{x.name}-{y.name}"
        if not (dest / "compare.json").exists():
            subprocess.run([sys.executable, "-m", "kernelscope", "compare", str(x), str(y), "--out", str(dest)],
                           capture_output=True, text=True)
        for m in json.loads((dest / "compare.json").read_text())["modes"]:
            changes.setdefault(m["mode"], []).append(m["change"])
    return changes


def report(a: argparse.Namespace, out: Path) -> None:
    runs = [out / f"run-{i}" for i in range(1, a.runs + 1)]
    hand_files = [json.loads((out / f"hand-{i}.json").read_text()) for i in range(1, a.runs + 1)]
    hands = [h["per_process_ms"] for h in hand_files]
    walls = [float((out / f"{r.name}.wall").read_text()) / h["wall_s"] for r, h in zip(runs, hand_files)]
    env = json.loads((runs[0] / "result.json").read_text())["environment"]
    print(f"\n{a.model} on {env.get('gpu') or env.get('cpu')}, torch {env.get('torch')}: {a.runs} pairs")
    print(f"wall: kernelscope profile / hand timing {statistics.median(walls):.2f}x "
          f"(per pair {', '.join(f'{w:.2f}' for w in walls)})")
    changes = compare_changes(out, runs)
    peer = "CUDA events" if a.device == "cuda" else "perf_counter"
    for mode in a.mode_list:
        lats = [mode_latency(r, mode) for r in runs]
        ks = [x for lat in lats for x in lat["per_process"]]
        hand = [x for h in hands for x in h[mode]]
        lo, hi = ratio_interval(ks, hand)
        per_pair = [statistics.median(lat["per_process"]) / statistics.median(h[mode]) for lat, h in zip(lats, hands)]
        inside = [[lat["low"] <= other["median"] <= lat["high"] for other in lats if other is not lat] for lat in lats]
        n_pairs = sum(len(x) for x in inside)
        print(f"{mode}: kernelscope / {peer} {statistics.median(ks) / statistics.median(hand):.3f} "
              f"(95% {lo:.3f}-{hi:.3f}; per pair {', '.join(f'{r:.3f}' for r in per_pair)})")
        print(f"  rerun: {sum(all(x) for x in inside)} of {len(lats)} runs hold every other run's median; "
              f"{sum(map(sum, inside))} of {n_pairs} pairs ({sum(map(sum, inside)) / max(n_pairs, 1):.0%})")
        got = changes.get(mode, [])
        print(f"  compare of identical runs: {got.count('none')} of {len(got)} pairs read none")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--modes", default="eager,default")
    ap.add_argument("--processes", type=int, default=None, help="kernelscope's --processes (default: its own)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--out", default="kernelscope-out/timing")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)  # one hand process, of this mode
    a = ap.parse_args()
    if a.worker:
        print("@@hand " + json.dumps(hand_worker(a.model, a.worker, a.device, a.set)), flush=True)
        return
    a.mode_list = [m.strip() for m in a.modes.split(",") if m.strip()]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    pairs(a, out)
    report(a, out)


if __name__ == "__main__":
    main()
