"""A hand-written timing of the same compiled callables as `kernelscope profile`, in the same process layout, with
no kernelscope code in the timed processes (issue 13's independent CUDA-event timing, and the wall-time yardstick).

For each of N rounds, for each mode in order (eager, default, max-autotune, eager, ...): a fresh
``python benchmarks/hand_timing.py --worker`` process imports the model file itself, builds it (seed 0), compiles it
as kernelscope does (mode default / "max-autotune-no-cudagraphs", freezing off on CUDA), makes the first call,
warms up for at least 200 calls and 1 s, on CUDA moves to the CPU where the calls run fastest (unless
--no-pin), then takes 30 samples of k back-to-back calls between two CUDA events
(k chosen so a sample lasts ~5 ms, from back-to-back calls; perf_counter on the CPU). Round 1 of a mode starts
on an empty Inductor cache, later rounds reuse it, as kernelscope's later processes do. Prints one JSON line per
process and a summary: per mode the median of the processes' medians, and the total wall time.

    python benchmarks/hand_timing.py samples/linear_gelu.py [--modes eager,default,max-autotune] [--processes 5]
        [--device cuda] [--json OUT.json] [--set NAME=VALUE ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODES = {"eager": None, "default": "default", "max-autotune": "max-autotune-no-cudagraphs"}


def load_model_file(model_path: str, sets: list[str] | None = None):  # noqa: ANN201
    """The model file executed as a module after seeding (seed 0), its constants overridden as kernelscope's --set
    does (after the import, before get_model())."""
    import ast
    import importlib.util
    import random

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

    ic.freezing = device != "cuda"  # kernelscope's default: on for CPU, off for CUDA
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


def build(model_path: str, mode: str, device: str, sets: list[str] | None = None):  # noqa: ANN201
    """(fn, inputs, timed, sync): the model file's model built (seed 0) and compiled as kernelscope does it;
    ``timed(n)`` is ms per call over n back-to-back calls between two CUDA events (perf_counter on the CPU)."""
    import torch

    mod = load_model_file(model_path, sets)
    model = mod.get_model().to(device).eval()
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()]
    fn = compiled(model, mode, device)
    sync, timed = timers(lambda: fn(*inputs), device)
    return fn, inputs, timed, sync


def warm(fn, inputs: list, mode: str, sync, timed) -> tuple[float, int]:  # noqa: ANN001
    """The first call (the compile, timed) and the warm-up: at least 200 calls and 1 s; returns (first call s, k),
    k the calls in a ~5 ms sample."""
    import torch

    with torch.no_grad():
        t0 = time.perf_counter()
        fn(*inputs)
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
            fn(*inputs)
            calls += 1
        sync()
        per_call = statistics.median(timed(10) for _ in range(5))
        # ~5 ms a sample: each sample pays the synchronize's wake-up and the last kernel's tail once (22-48 µs on
        # the H200, benchmarks/sample_length.py), under 1% of 5 ms
        k = max(1, min(1000, int(5.0 / max(per_call, 1e-4))))
    return first, k


def fastest_cpu(fn, inputs: list, timed, k: int, cpus: list[int]) -> tuple[int, dict[int, float]]:  # noqa: ANN001
    """The same question kernelscope's --cpu-pinning asks, coded separately: which CPU runs the calls fastest right
    now (median of 3 samples of k calls there). Pins this process there; returns it and every CPU's time."""
    speed = {}
    for c in cpus:
        os.sched_setaffinity(0, {c})
        fn(*inputs)
        speed[c] = statistics.median(timed(k) for _ in range(3))
    cpu = min(speed, key=speed.__getitem__)
    os.sched_setaffinity(0, {cpu})
    return cpu, speed


def experiment(script: str, tag: str, processes: int, option: str, default: float, worker, report,  # noqa: ANN001
               show) -> None:  # noqa: ANN001
    """The command line of a ``run`` / ``report`` / ``worker`` experiment script (window_length.py,
    interleaved.py), and what each step does: ``report PATH`` calls ``report(PATH)``; ``worker MODEL`` prints
    ``@@TAG`` and ``worker(MODEL, mode, device, value, sets)`` as JSON; ``run MODEL`` runs the ``rounds`` of fresh
    worker processes. ``option`` is the script's own numeric option (``blocks``), of ``default``'s type."""
    ap = argparse.ArgumentParser()
    ap.add_argument("step", choices=["run", "report", "worker"])
    ap.add_argument("path", help="run/worker: the model file; report: the JSON lines file")
    ap.add_argument("--modes", default="eager,default")
    ap.add_argument("--mode", default="eager")
    ap.add_argument("--processes", type=int, default=processes)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--json", default=f"{tag}.jsonl")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument(f"--{option}", type=type(default), default=default)
    a = ap.parse_args()
    value = getattr(a, option)
    if a.step == "report":
        report(a.path)
    elif a.step == "worker":
        print(f"@@{tag} " + json.dumps(worker(a.path, a.mode, a.device, value, a.set)), flush=True)
    else:
        rounds(script, tag, a.path, a.modes, a.processes,
               ["--device", a.device, f"--{option}", str(value), *(f"--set={x}" for x in a.set)], a.json, show)


def rounds(script: str, tag: str, model: str, modes: str, processes: int, args: list[str], out_path: str,
           show) -> None:  # noqa: ANN001
    """For each of ``processes`` rounds, for each mode (interleaved): a fresh ``python SCRIPT worker MODEL --mode M
    ARGS`` process on the mode's own Inductor cache (empty in round 1, reused later, as kernelscope's later
    processes do); its ``@@TAG {json}`` line, with the round and the time added, is appended to ``out_path`` and
    ``show(record)`` printed."""
    names = [m.strip() for m in modes.split(",") if m.strip()]
    caches = {m: tempfile.mkdtemp(prefix=f"{tag}-cache-{m}-") for m in names}
    with open(out_path, "a") as f:
        for rnd in range(1, processes + 1):
            for m in names:
                env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": caches[m],
                       "TRITON_CACHE_DIR": os.path.join(caches[m], "triton")}
                proc = subprocess.run([sys.executable, script, "worker", model, "--mode", m, *args],
                                      capture_output=True, text=True, env=env, check=False)
                line = next((ln for ln in proc.stdout.splitlines() if ln.startswith(f"@@{tag} ")), None)
                if line is None:
                    sys.exit(f"{tag} worker {m} round {rnd} failed: {proc.stderr[-2000:]}")
                rec = {**json.loads(line[len(f"@@{tag} "):]), "process": rnd, "time": time.time()}
                f.write(json.dumps(rec) + "\n")
                f.flush()
                print(rnd, m, show(rec), flush=True)


def samples_on_fastest_cpu(fn, inputs: list, timed, k: int, pin: bool) -> tuple[list[float], int | None, int]:  # noqa: ANN001
    """30 samples of k calls, on CUDA (``pin``) on the CPU where the calls ran fastest, asked again up to 3 times
    when the samples came out more than 15% slower than that CPU promised (it got busier meanwhile). Returns
    (samples, the CPU or None, tries)."""
    import torch

    with torch.no_grad():
        cpu, all_cpus, tries = None, sorted(os.sched_getaffinity(0)), 0
        samples: list[float] = []
        for tries in range(1, 4):  # noqa: B007 (the count is reported)
            if not (pin and len(all_cpus) > 1):
                samples = [timed(k) for _ in range(30)]
                break
            cpu, speed = fastest_cpu(fn, inputs, timed, k, all_cpus)
            samples = [timed(k) for _ in range(30)]
            if statistics.median(samples) <= 1.15 * speed[cpu]:
                break
    return samples, cpu, tries


def worker(model_path: str, mode: str, device: str, pin: bool = True, sets: list[str] | None = None) -> dict:
    fn, inputs, timed, sync = build(model_path, mode, device, sets)
    first, k = warm(fn, inputs, mode, sync, timed)
    samples, cpu, tries = samples_on_fastest_cpu(fn, inputs, timed, k, pin and device == "cuda")
    return {"mode": mode, "first_call_s": first, "median_ms": statistics.median(samples), "calls_per_sample": k,
            "samples": samples, "cpu": cpu, "tries": tries}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--modes", default="eager,default,max-autotune")
    ap.add_argument("--processes", type=int, default=5)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--json", default=None)
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--no-pin", action="store_true", help="CUDA: time where the scheduler puts the process "
                    "(default: on the CPU where the calls ran fastest, as kernelscope's --cpu-pinning fastest)")
    ap.add_argument("--mode", default=None)
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="override a module-level constant of the model file, as kernelscope's --set")
    a = ap.parse_args()
    if a.worker:
        print("@@hand " + json.dumps(worker(a.model, a.mode, a.device, not a.no_pin, a.set)), flush=True)
        return
    modes = [m.strip() for m in a.modes.split(",") if m.strip()]
    caches = {m: tempfile.mkdtemp(prefix=f"hand-cache-{m}-") for m in modes}
    per: dict[str, list[dict]] = {m: [] for m in modes}
    t0 = time.perf_counter()
    for rnd in range(1, a.processes + 1):
        for m in modes:
            env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": caches[m],
                   "TRITON_CACHE_DIR": os.path.join(caches[m], "triton")}
            p0 = time.perf_counter()
            proc = subprocess.run([sys.executable, __file__, a.model, "--worker", "--mode", m, "--device", a.device,
                                   *(["--no-pin"] if a.no_pin else []), *(f"--set={x}" for x in a.set)],
                                  capture_output=True, text=True, env=env, check=False)
            line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("@@hand ")), None)
            if line is None:
                sys.exit(f"hand worker {m} round {rnd} failed: {proc.stderr[-2000:]}")
            rec = json.loads(line[len("@@hand "):])
            rec.update(process=rnd, wall_s=time.perf_counter() - p0)
            per[m].append(rec)
            print(json.dumps({k: v for k, v in rec.items() if k != "samples"}), flush=True)
    wall = time.perf_counter() - t0
    summary = {"model": a.model, "device": a.device, "processes": a.processes, "wall_s": wall,
               "modes": {m: {"median_ms": statistics.median(r["median_ms"] for r in rs),
                             "per_process_ms": [r["median_ms"] for r in rs],
                             "first_call_s": rs[0]["first_call_s"]} for m, rs in per.items()}}
    print("SUMMARY " + json.dumps(summary))
    if a.json:
        Path(a.json).write_text(json.dumps({**summary, "runs": per}, indent=1))


if __name__ == "__main__":
    main()
