"""profile's cost at real model size: `kernelscope profile` against a hand script that does the same work in one
process. Runs on a CUDA GPU; needs transformers (tests/zoo/models/hf_llama.py).

    python benchmarks/profile_vs_hand.py                  # 1B Llama (16 layers, 512 tokens, bf16), 3 modes: ~9 min
    python benchmarks/profile_vs_hand.py --set layers=8   # the same model at 8 layers, when 16 do not fit a budget
    python benchmarks/profile_vs_hand.py --only hand      # one side per call: then --only profile, same --out
    python benchmarks/profile_vs_hand.py --device cpu --set size=tiny --set seq_len=16 --modes eager,default

The hand script has no kernelscope code. In one process it builds the model once (the model file after seeding 0,
--set applied, cast to --dtype) and computes the float64 reference once; then for each mode it compiles on a fresh
Inductor cache, makes the first call, warms up (at least 200 calls and 1 s), on CUDA moves to the fastest CPU,
takes 30 samples of ~5 ms between two CUDA events, checks one output against the reference and profiles one
iteration. `kernelscope profile` does that too, and times each mode in more than one fresh process (what its
interval is made of) and writes its reports.

Prints both walls and profile / hand, and the same ratio with the hand script's compile times in place of
profile's first processes' (max-autotune's compile of this model alone moved 95-199 s between identical runs).
Writes cost.json (both sides' walls and stage times) and profile.log, hand.log to --out.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing_vs_cuda_events import compiled, fastest_cpu, load_model_file, timers, warm  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODEL = "tests/zoo/models/hf_llama.py"
SETS = ["size=1b", "seq_len=512"]


# ---------------------------------------------------------------------------------------------------- the peer
def tensors(out) -> list:  # noqa: ANN001
    """Every tensor of a model output (tensors, lists, tuples, dicts, Hugging Face ModelOutputs)."""
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
    model, inputs = mod.get_model(), mod.get_inputs()
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
    """The model's outputs from a float64 copy (freed before anything is timed), on the CPU."""
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


def hand_mode(model, args: list, kwargs: dict, mode: str, device: str, ref: list, trace_dir: str) -> dict:  # noqa: ANN001
    """One mode: compile, first call, warm-up, CPU choice, 30 samples, numerics, one profiled iteration."""
    import torch

    cuda = device == "cuda"
    torch._dynamo.reset()  # each mode compiles from scratch, as in its own kernelscope process

    fn = compiled(model, mode, device)

    def call() -> object:
        return fn(*args, **kwargs)

    sync, timed = timers(call, device)
    stages: dict[str, float] = {}
    t = time.perf_counter()
    first, k = warm(call, mode, sync, timed)
    stages["compile (first call)"], stages["warm-up"] = first, time.perf_counter() - t - first
    with torch.no_grad():
        t = time.perf_counter()
        cpus = sorted(os.sched_getaffinity(0))
        if cuda and len(cpus) > 1:
            fastest_cpu(call, timed, k, cpus)
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
            "rmse_vs_float64": rmse}


def hand_script(a: argparse.Namespace) -> None:
    """The hand script itself (run in its own process by --only hand or by the pair): prints ``@@hand {json}``."""
    t0 = time.perf_counter()
    cache = tempfile.mkdtemp(prefix="hand-cache-")  # every compile cold, as in kernelscope's first processes
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    os.environ["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
    import torch

    stages = {"import torch": time.perf_counter() - t0}
    t = time.perf_counter()
    model, args, kwargs = build(a.model, a.sets, a.device, a.dtype)
    if a.device == "cuda":
        torch.cuda.synchronize()
    stages["build"] = time.perf_counter() - t
    t = time.perf_counter()
    ref = reference(model, args, kwargs, a.device)
    stages["reference"] = time.perf_counter() - t
    modes = {m: hand_mode(model, args, kwargs, m, a.device, ref, cache) for m in a.mode_list}
    print("@@hand " + json.dumps({"torch": torch.__version__, "stages_s": {k: round(v, 3) for k, v in stages.items()},
                                  "modes": modes}), flush=True)


# ---------------------------------------------------------------------------------------------------- the pair
def run(cmd: list[str], log: Path, deadline: float) -> tuple[float, int | None]:
    """cmd from the checkout's root, its output into log: (wall seconds, exit code, or None when it was stopped at
    the deadline with its whole process group)."""
    t0 = time.perf_counter()
    with open(log, "w") as f:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT, start_new_session=True,
                                env={**os.environ, "COLUMNS": "160"})
        try:
            code: int | None = proc.wait(timeout=max(1.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = None
    return time.perf_counter() - t0, code


def equal_compiles(hand: dict, prof: dict) -> dict | None:
    """profile's wall with the hand script's compiles in place of its first processes': the seconds profile adds
    (its wall - the hand wall - each compiled mode's first-call difference) and (hand + added) / hand; None where a
    compiled mode lacks a first call on either side."""
    diffs = {}
    for name, first_call_s in prof["first_call_s"].items():
        if name == "eager":
            continue
        h = (hand["modes"].get(name) or {}).get("stages_s", {}).get("compile (first call)")
        if first_call_s is None or h is None:
            return None
        diffs[name] = first_call_s - h
    added = prof["wall_s"] - hand["wall_s"] - sum(diffs.values())
    return {"first_call_differences_s": {k: round(v, 1) for k, v in diffs.items()}, "added_s": round(added, 1),
            "ratio": round((hand["wall_s"] + added) / hand["wall_s"], 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=MODEL)
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help=f"model constants for both sides, after {' '.join(SETS)}")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--modes", default="eager,default,max-autotune", help="both sides (profile's default modes)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--deadline", type=float, default=580.0, help="seconds for both sides together")
    ap.add_argument("--only", choices=["hand", "profile"], default=None)
    ap.add_argument("--out", default="kernelscope-out/profile-vs-hand")
    ap.add_argument("--hand-script", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    a.sets, a.mode_list = [*SETS, *a.set], [m.strip() for m in a.modes.split(",") if m.strip()]
    if a.hand_script:
        hand_script(a)
        return
    deadline = time.time() + a.deadline
    out = Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    cost_path = out / "cost.json"
    cost = json.loads(cost_path.read_text()) if a.only and cost_path.exists() else {}
    cost.update(model=a.model, sets=a.sets, dtype=a.dtype, device=a.device)
    common = [*(f"--set={s}" for s in a.set), "--dtype", a.dtype, "--device", a.device, "--modes", a.modes]
    if a.only != "profile":
        wall, code = run([sys.executable, __file__, "--hand-script", "--model", a.model, *common],
                         out / "hand.log", deadline)
        line = next((ln for ln in (out / "hand.log").read_text().splitlines() if ln.startswith("@@hand ")), None)
        cost["hand"] = {**(json.loads(line[len("@@hand "):]) if line else {}), "wall_s": round(wall, 1),
                        "finished": code == 0}
        print(f"hand script: {wall:.1f} s (exit {code})", flush=True)
    if a.only != "hand":
        ks_out = out / "profile"
        wall, code = run([sys.executable, "-m", "kernelscope", "profile", a.model, *(f"--set={s}" for s in a.sets),
                          "--dtype", a.dtype, "--device", a.device, "--modes", a.modes, "--out", str(ks_out),
                          "--force"], out / "profile.log", deadline)
        done = code is not None and (ks_out / "result.json").exists()
        modes = json.loads((ks_out / "result.json").read_text())["modes"] if done else []
        cost["profile"] = {"wall_s": round(wall, 1), "finished": done,
                           "first_call_s": {m["name"]: m.get("first_call_s") for m in modes}}
        print(f"kernelscope profile: {wall:.1f} s (exit {code})", flush=True)
    hand, prof = cost.get("hand") or {}, cost.get("profile") or {}
    if hand.get("finished") and prof.get("finished"):
        cost["ratio"] = round(prof["wall_s"] / hand["wall_s"], 3)
        eq = cost["equal_compiles"] = equal_compiles(hand, prof)
        print(f"profile / hand script: {cost['ratio']:.2f}x", flush=True)
        if eq:
            diffs = ", ".join(f"{k} {v:+.1f} s" for k, v in eq["first_call_differences_s"].items())
            print(f"with the hand script's compiles: {eq['ratio']:.2f}x ({eq['added_s']:.1f} s added; first-call "
                  f"differences {diffs or 'none'})", flush=True)
    cost_path.write_text(json.dumps(cost, indent=1))


if __name__ == "__main__":
    main()
