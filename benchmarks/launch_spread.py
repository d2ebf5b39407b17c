"""Where does a launch-bound model's process-to-process spread come from? (issue 13, on the H200)

On the H200 VM the seed sample's per-process medians moved 2x between fresh processes (default 66-140 µs) while
each process was stable within itself (5-9 % IQR), in kernelscope's workers and in an independent hand script
alike. This script tests the candidate causes, each with the same timing loop (k back-to-back calls between two
CUDA events, 15 samples, median):

``cores``    one process, eager and compiled (default): pin the main thread to each CPU in turn, twice
             (0..N-1, then back); if the CPUs differ in speed, the sweep shows it, and whether it holds over time;
``procs``    fresh processes in three arms, interleaved: unpinned, all pinned to one CPU, and unpinned with
             PYTHONHASHSEED=0; each says which CPU it ran on (sched_getcpu before and after timing).

    python benchmarks/launch_spread.py cores [--model samples/linear_gelu.py]
    python benchmarks/launch_spread.py procs --n 6 --cpu 2
Prints JSON lines; ``--json OUT`` keeps them all.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

_libc = ctypes.CDLL(None)


def cpu_now() -> int:
    return int(_libc.sched_getcpu())


def build(model_path: str):  # type: ignore[no-untyped-def]
    import importlib.util

    import torch

    torch.manual_seed(0)
    spec = importlib.util.spec_from_file_location("spread_model", model_path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    model = mod.get_model().cuda().eval()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()]
    return torch, model, inputs


def sampler(torch, fn, inputs):  # type: ignore[no-untyped-def]
    def timed(n: int) -> float:
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(n):
            fn(*inputs)
        b.record()
        b.synchronize()
        return a.elapsed_time(b) * 1000.0 / n  # µs per call

    def median_us(samples: int = 15) -> float:
        for _ in range(100):
            fn(*inputs)
        per = statistics.median(timed(5) for _ in range(5))
        k = max(1, min(1000, int(1000.0 / max(per, 0.1))))
        return statistics.median(timed(k) for _ in range(samples))

    return median_us


def compiled(torch, model):  # type: ignore[no-untyped-def]
    fn = torch.compile(model, mode="default")
    return fn


def stop_workers() -> None:
    try:
        from torch._inductor import async_compile

        async_compile.shutdown_compile_workers()
    except Exception:
        pass


def cores(a: argparse.Namespace) -> None:
    torch, model, inputs = build(a.model)
    cpus = sorted(os.sched_getaffinity(0))
    with torch.no_grad():
        fns = {"eager": model, "default": compiled(torch, model)}
        fns["default"](*inputs)
        torch.cuda.synchronize()
        stop_workers()
        med = {m: sampler(torch, f, inputs) for m, f in fns.items()}
        for sweep, order in enumerate((cpus, cpus[::-1])):
            for c in order:
                os.sched_setaffinity(0, {c})
                time.sleep(0.02)
                row = {"test": "cores", "sweep": sweep, "cpu": c, "on": cpu_now()}
                for m in fns:
                    row[m] = round(med[m](), 2)
                print(json.dumps(row), flush=True)
        os.sched_setaffinity(0, set(cpus))


def one_process(a: argparse.Namespace) -> None:
    if a.pin is not None:
        os.sched_setaffinity(0, {a.pin})
    t0 = time.perf_counter()
    torch, model, inputs = build(a.model)
    row: dict = {"test": "proc", "arm": a.arm, "cpu_start": cpu_now(), "hashseed": os.environ.get("PYTHONHASHSEED")}
    with torch.no_grad():
        fn = compiled(torch, model)
        fn(*inputs)
        torch.cuda.synchronize()
        stop_workers()
        for m, f in (("eager", model), ("default", fn)):
            row[m] = round(sampler(torch, f, inputs)(), 2)
            row[f"cpu_after_{m}"] = cpu_now()
    row["wall_s"] = round(time.perf_counter() - t0, 1)
    print("@@spread " + json.dumps(row), flush=True)


def procs(a: argparse.Namespace) -> None:
    cache = tempfile.mkdtemp(prefix="spread-cache-")
    env0 = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache, "TRITON_CACHE_DIR": os.path.join(cache, "triton")}
    arms = [("unpinned", None, {}), (f"pinned{a.cpu}", a.cpu, {}), ("hashseed0", None, {"PYTHONHASHSEED": "0"})]
    for i in range(a.n):
        for arm, pin, extra in arms:
            cmd = [sys.executable, __file__, "one", "--model", a.model, "--arm", arm]
            if pin is not None:
                cmd += ["--pin", str(pin)]
            p = subprocess.run(cmd, capture_output=True, text=True, env={**env0, **extra}, check=False)
            line = next((x for x in p.stdout.splitlines() if x.startswith("@@spread ")), None)
            row = json.loads(line[9:]) if line else {"arm": arm, "error": p.stderr[-500:]}
            row["round"] = i
            print(json.dumps(row), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("step", choices=["cores", "procs", "one"])
    ap.add_argument("--model", default="samples/linear_gelu.py")
    ap.add_argument("--n", type=int, default=6)
    ap.add_argument("--cpu", type=int, default=2)
    ap.add_argument("--pin", type=int, default=None)
    ap.add_argument("--arm", default="")
    a = ap.parse_args()
    {"cores": cores, "procs": procs, "one": one_process}[a.step](a)


if __name__ == "__main__":
    main()
