"""The hand script of issue 27 part 2: what `kernelscope profile` does for one model, written out once, in ONE process,
with no kernelscope code: the yardstick for profile's wall time at real size (benchmarks/h200_cost.py runs both).

It builds the model once (the model file executed after seeding 0, its --set constants applied, get_model(),
get_inputs(), moved to the device and cast to --dtype), computes the float64 reference once (a float64 copy of the
cast model, freed after), then for each mode (eager, default, max-autotune as "max-autotune-no-cudagraphs";
freezing off on CUDA, on for the CPU, as kernelscope) compiles it on a fresh Inductor cache, makes the first call
and warms up as benchmarks/hand_timing.py does (at least 200 calls and 1 s), picks the fastest CPU on CUDA (as
--cpu-pinning fastest), takes 30 samples of ~5 ms between two CUDA events, compares one output with the reference,
and profiles one iteration (torch.profiler, trace exported gzipped). Prints one line
``@@hand_llama {json}``: the wall seconds of every stage and of the whole script.

    python benchmarks/hand_llama.py tests/zoo/models/hf_llama.py --set size=1b --set seq_len=512 \\
        --dtype bfloat16 [--modes eager,default,max-autotune] [--device cuda] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hand_timing import compiled, fastest_cpu, load_model_file, timers, warm  # noqa: E402


def tensors(out):  # noqa: ANN001, ANN201
    """Every tensor of a model output (tensors, lists, tuples, dicts and Hugging Face ModelOutputs)."""
    import torch

    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        return [t for v in out.values() for t in tensors(v)]
    if isinstance(out, (list, tuple)):
        return [t for v in out for t in tensors(v)]
    return []


def build(model_path: str, sets: list[str], device: str, dtype: str | None):  # noqa: ANN201
    """(model, args, kwargs) on the device, floating parameters and inputs cast to dtype."""
    import torch

    mod = load_model_file(model_path, sets)
    model = mod.get_model()
    inputs = mod.get_inputs()
    args, kwargs = ([], inputs) if isinstance(inputs, dict) else (
        (list(inputs[0]), dict(inputs[1])) if isinstance(inputs, tuple) and len(inputs) == 2
        and isinstance(inputs[1], dict) else (list(inputs), {}))
    dt = getattr(torch, dtype) if dtype else None
    model = model.to(device)
    if dt is not None:
        model = model.to(dt)
    model.eval()

    def cast(x):  # noqa: ANN001, ANN202
        if not isinstance(x, torch.Tensor):
            return x
        x = x.to(device)
        return x.to(dt) if dt is not None and x.is_floating_point() else x

    return model, [cast(x) for x in args], {k: cast(v) for k, v in kwargs.items()}


def reference(model, args: list, kwargs: dict, device: str) -> list:  # noqa: ANN001
    """The model's outputs in float64 (a float64 copy, freed before anything is timed), on the CPU."""
    import copy

    import torch

    m64 = copy.deepcopy(model).to(torch.float64)

    def up(x):  # noqa: ANN001, ANN202
        return x.to(torch.float64) if isinstance(x, torch.Tensor) and x.is_floating_point() else x

    with torch.no_grad():
        out = [t.double().cpu() for t in tensors(m64(*[up(x) for x in args], **{k: up(v) for k, v in kwargs.items()}))]
    del m64
    if device == "cuda":
        torch.cuda.empty_cache()
    return out


def run_mode(model, args: list, kwargs: dict, mode: str, device: str, ref: list, trace_dir: str) -> dict:  # noqa: ANN001
    """One mode: compile, first call, warm-up, CPU choice, 30 samples, numerics, one profiled iteration."""
    import torch

    cuda = device == "cuda"
    torch._dynamo.reset()  # each mode compiles from scratch, as in its own kernelscope worker
    fn = compiled(model, mode, device)

    def call(*_):  # noqa: ANN002, ANN202
        return fn(*args, **kwargs)

    sync, timed = timers(call, device)
    stages: dict[str, float] = {}
    t = time.perf_counter()
    first, k = warm(call, [], mode, sync, timed)
    stages["compile (first call)"] = first
    stages["warm-up"] = time.perf_counter() - t - first
    with torch.no_grad():
        t = time.perf_counter()
        cpus = sorted(os.sched_getaffinity(0))
        cpu = fastest_cpu(call, [], timed, k, cpus)[0] if cuda and len(cpus) > 1 else None
        stages["cpu choice"] = time.perf_counter() - t
        t = time.perf_counter()
        samples = [timed(k) for _ in range(30)]
        stages["timing"] = time.perf_counter() - t
        t = time.perf_counter()
        got = [x.double().cpu() for x in tensors(call())]
        rmse = max(float(((g - r) ** 2).mean().sqrt()) for g, r in zip(got, ref)) if ref else None
        stages["numerics"] = time.perf_counter() - t
        t = time.perf_counter()
        acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
        with torch.profiler.profile(activities=acts) as prof:
            call()
            sync()
        prof.export_chrome_trace(os.path.join(trace_dir, f"{mode}.pt.trace.json.gz"))
        stages["profile"] = time.perf_counter() - t
    if cuda:
        os.sched_setaffinity(0, cpus)  # the next mode chooses among every CPU again
    return {"stages_s": {k: round(v, 3) for k, v in stages.items()}, "median_ms": statistics.median(samples),
            "calls_per_sample": k, "cpu": cpu, "rmse_vs_float64": rmse}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--modes", default="eager,default,max-autotune")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default=None, choices=["float32", "float16", "bfloat16"])
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    t0 = time.perf_counter()
    # a fresh Inductor (and Triton) cache, so every compile is cold, as in kernelscope's first processes
    cache = tempfile.mkdtemp(prefix="hand-llama-cache-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    os.environ["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
    stages: dict[str, float] = {}
    import torch

    stages["import torch"] = time.perf_counter() - t0
    t = time.perf_counter()
    model, args, kwargs = build(a.model, a.set, a.device, a.dtype)
    if a.device == "cuda":
        torch.cuda.synchronize()
    stages["build"] = time.perf_counter() - t
    t = time.perf_counter()
    ref = reference(model, args, kwargs, a.device)
    stages["reference"] = time.perf_counter() - t
    modes = {}
    for m in (x.strip() for x in a.modes.split(",") if x.strip()):
        t = time.perf_counter()
        modes[m] = run_mode(model, args, kwargs, m, a.device, ref, cache)
        modes[m]["wall_s"] = round(time.perf_counter() - t, 3)
    out = {"model": a.model, "sets": a.set, "dtype": a.dtype, "device": a.device, "torch": torch.__version__,
           "stages_s": {k: round(v, 3) for k, v in stages.items()}, "modes": modes,
           "wall_s": round(time.perf_counter() - t0, 3)}
    print("@@hand_llama " + json.dumps(out), flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
