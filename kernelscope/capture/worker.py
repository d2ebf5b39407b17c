"""One mode in its own process: build the model, compile, time, profile, save the trace and Inductor code.

Run as ``python -m kernelscope.capture.worker SPEC.json``. Writes ``capture.json`` (schema kernelscope.capture/1)
into the mode's folder whatever happens: a failure is a result too. Progress lines go to stdout as
``@@progress <text>``; everything else (Inductor's fusion/autotune logs, warnings) goes to stderr, which the
runner saves as the mode's log.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from kernelscope.capture.modes import ModeDef
from kernelscope.errors import KernelscopeError, ModelFileError, UsageError

CAPTURE_SCHEMA = "kernelscope.capture/1"
WORKER_NAME = "kernelscope"  # trace file prefix; never the hostname (reports get attached to public PRs)


class Unavailable(Exception):
    """This mode cannot run on this machine (not a failure of the model)."""


def progress(text: str) -> None:
    print(f"@@progress {text}", flush=True)


def atomic_write_json(path: Path, data: Any) -> None:
    from kernelscope.report.io import atomic_write_text

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(_finite(data), indent=1, allow_nan=False, default=str))


def _finite(x: Any) -> Any:
    # NaN/Inf (a model with NaN outputs) are not JSON: write them as null.
    if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


# --------------------------------------------------------------------------------------------------- environment


def environment(torch: Any, device: str) -> dict[str, Any]:
    """What a reviewer needs to reproduce: versions, GPU, backends. No hostnames, no environment variables."""
    env: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": device,
    }
    try:
        import triton

        env["triton"] = triton.__version__
    except Exception:
        env["triton"] = None
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        env["gpu"] = props.name
        env["capability"] = f"{props.major}.{props.minor}"
        env["gpu_memory_bytes"] = int(props.total_memory)
        env["sm_count"] = int(props.multi_processor_count)
        try:
            import subprocess

            out = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True, text=True, timeout=10,
            ).stdout.strip()
            env["driver"] = out.splitlines()[0] if out else None
        except Exception:
            env["driver"] = None
    else:
        env["cpu"] = _cpu_model()
        env["cpu_count"] = os.cpu_count()
    env["gemm_backends"] = {name: dict(zip(("available", "reason"), backend_available(torch, name, device)))
                            for name in ("ATEN", "TRITON", "CPP", "CUTLASS", "NVGEMM")}
    return env


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _torch_version_tuple(torch: Any) -> tuple[int, int]:
    parts = torch.__version__.split("+")[0].split(".")
    return int(parts[0]), int(parts[1])


def backend_available(torch: Any, name: str, device: str) -> tuple[bool, str]:
    """Whether Inductor can use this max-autotune GEMM backend here, and why not."""
    import importlib.util

    if name == "ATEN":
        return True, ""
    if name == "CPP":
        return (device == "cpu", "" if device == "cpu" else "CPP templates are for CPU tensors")
    if device != "cuda":
        return False, f"{name} is a GPU backend and this run is on the CPU"
    if name == "TRITON":
        ok = importlib.util.find_spec("triton") is not None
        return ok, "" if ok else "triton is not installed"
    if name == "NVGEMM":
        if _torch_version_tuple(torch) < (2, 14):
            return False, f"NVGEMM needs torch>=2.14 (this is {torch.__version__})"
        try:
            ok = importlib.util.find_spec("cutlass.operators") is not None
        except (ImportError, ValueError):
            ok = False
        return ok, "" if ok else "cutlass.operators is not importable (pip install nvidia-cutlass-dsl>=4.6)"
    if name == "CUTLASS":
        import torch._inductor.config as ic

        cutlass_dir = getattr(getattr(ic, "cuda", None), "cutlass_dir", None) or os.environ.get("TORCHINDUCTOR_CUTLASS_DIR")
        if not cutlass_dir or not Path(cutlass_dir, "include", "cutlass").is_dir():
            return False, "Inductor's CUTLASS backend needs CUTLASS source headers (set TORCHINDUCTOR_CUTLASS_DIR)"
        return True, ""
    if name == "CUTEDSL":
        ok = importlib.util.find_spec("cutlass") is not None
        return ok, "" if ok else "CuTeDSL (nvidia-cutlass-dsl) is not installed"
    return False, "unknown backend"


# --------------------------------------------------------------------------------------------------- helpers


def _flatten(torch: Any, out: Any) -> list[Any]:
    from torch.utils._pytree import tree_leaves

    return [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]


def _snapshot(torch: Any, out: Any) -> list[Any]:
    # CUDA-graph outputs are overwritten by the next replay: keep a copy.
    return [t.detach().clone() for t in _flatten(torch, out)]


def _errors(torch: Any, got: list[Any], ref: list[Any]) -> dict[str, Any]:
    """max |got-ref|, max |got-ref| / max |ref| (norm-wise: element-wise relative error explodes at zeros)."""
    if len(got) != len(ref):
        return {"max_abs": None, "max_rel": None, "note": f"{len(got)} outputs vs {len(ref)} in eager"}
    max_abs, ref_max, nonfinite = 0.0, 0.0, 0
    mismatch, total = 0, 0
    for g, r in zip(got, ref):
        if g.shape != r.shape:
            return {"max_abs": None, "max_rel": None, "note": f"shape {tuple(g.shape)} vs {tuple(r.shape)} in eager"}
        if not (g.is_floating_point() or g.is_complex()):
            g, r = g.double(), r.double()
        g64, r64 = g.detach().double().cpu(), r.detach().double().cpu()
        nonfinite += int((~torch.isfinite(g64)).sum().item())
        if g64.numel():
            d = (g64 - r64).abs()
            d = torch.where(torch.isfinite(d), d, torch.zeros_like(d))
            max_abs = max(max_abs, float(d.max().item()))
            finite_ref = r64[torch.isfinite(r64)]
            if finite_ref.numel():
                ref_max = max(ref_max, float(finite_ref.abs().max().item()))
            mismatch += int((d > 0).sum().item())
            total += g64.numel()
    max_rel = max_abs / ref_max if ref_max > 0 else (0.0 if max_abs == 0 else None)
    return {"max_abs": max_abs, "max_rel": max_rel, "nonfinite": nonfinite,
            "mismatch_fraction": (mismatch / total) if total else 0.0}


class _Timer:
    def __init__(self, torch: Any, device: str):
        self.torch, self.cuda = torch, device == "cuda"

    def sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize()

    def time(self, call: Any, n: int) -> float:
        """Seconds per call over n back-to-back calls (CUDA events on GPU, perf_counter on CPU)."""
        if self.cuda:
            start = self.torch.cuda.Event(enable_timing=True)
            end = self.torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(n):
                call()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1000.0 / n
        t0 = time.perf_counter()
        for _ in range(n):
            call()
        return (time.perf_counter() - t0) / n


def _quantiles(xs: list[float]) -> dict[str, Any]:
    s = sorted(xs)

    def q(p: float) -> float:
        if len(s) == 1:
            return s[0]
        k = p * (len(s) - 1)
        lo = int(k)
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (k - lo)

    return {"median": q(0.5), "q1": q(0.25), "q3": q(0.75), "iqr": q(0.75) - q(0.25), "min": s[0],
            "mean": sum(s) / len(s)}


# --------------------------------------------------------------------------------------------------- the run


def run(spec: dict[str, Any], rec: dict[str, Any]) -> None:
    mode = ModeDef(**{**spec["mode"], "gemm_backends": tuple(spec["mode"]["gemm_backends"])
                      if spec["mode"]["gemm_backends"] else None})
    mode_dir = Path(spec["mode_dir"])
    progress("importing torch")
    import torch

    from kernelscope import modelfile

    want = spec["device"]
    if want == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    elif want == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda but torch sees no CUDA device", "run on a GPU machine or pass --device cpu")
    else:
        device = want
    rec["device"] = device
    rec["environment"] = environment(torch, device)
    if mode.needs_cuda and device != "cuda":
        raise Unavailable(f"{mode.name} uses CUDA graphs, which need a GPU (this run is on the CPU)")
    dtype = spec.get("dtype")  # None: the model file's own dtypes
    if device == "cuda" and dtype == "bfloat16" and not torch.cuda.is_bf16_supported():
        raise UsageError(f"bfloat16 is not supported on {torch.cuda.get_device_name(0)}", "pass --dtype float16 or float32")

    config: dict[str, Any] = {"compiled": mode.compiled, "compile_mode": mode.compile_mode,
                              "max_autotune": mode.max_autotune, "cudagraphs": mode.cudagraphs, "device": device,
                              "capability": rec["environment"].get("capability"), "dtype": dtype}
    notes: list[str] = rec.setdefault("notes", [])
    inductor_patch: dict[str, Any] = {}
    if mode.compiled:
        import torch._inductor.config as ic

        if device == "cpu":
            inductor_patch["cpp.enable_kernel_profile"] = True  # C++ kernels appear in the trace
        freezing = spec.get("freezing")
        if freezing is None:
            freezing = device == "cpu"  # Inductor's advice for CPU inference; CPP GEMM templates need it
        inductor_patch["freezing"] = bool(freezing)
        config["freezing"] = bool(freezing)
        if mode.max_autotune:
            requested = list(mode.gemm_backends or [b.strip() for b in ic.max_autotune_gemm_backends.split(",")])
            usable, dropped = [], []
            for b in requested:
                ok, why = backend_available(torch, b, device)
                (usable if ok else dropped).append(b if ok else f"{b} ({why})")
            if dropped and mode.gemm_backends:  # Inductor's default list names GPU and CPU backends alike
                notes.append("GEMM backends unavailable here: " + "; ".join(dropped))
            if not usable:
                raise Unavailable("no requested GEMM backend can run here: " + "; ".join(dropped))
            inductor_patch["max_autotune_gemm_backends"] = ",".join(usable)
            config["gemm_backends"] = usable
            config["gemm_backends_requested"] = requested
            if "NVGEMM" in usable and device == "cuda" and not os.environ.get("CUTE_DSL_ARCH"):
                # torch 2.14.1's autotune workers otherwise compile every NVGEMM choice for sm_100a and all fail
                # on sm90 ("expects arch to be sm_90a, but got sm_100a"; fixture nvgemm-arch-failure).
                major, minor = torch.cuda.get_device_capability(0)
                arch = f"sm_{major}{minor}a" if major >= 9 else f"sm_{major}{minor}"
                os.environ["CUTE_DSL_ARCH"] = arch
                notes.append(f"set CUTE_DSL_ARCH={arch} from the device's compute capability (unset by the user)")
                config["cute_dsl_arch"] = arch
        config["inductor_config"] = dict(inductor_patch)
    else:
        config["gemm_backends"] = None
    rec["config"] = config

    progress("building the model")
    spec_m = modelfile.inspect_model_file(spec["model"])
    modelfile.seed_everything(spec.get("seed", 0))
    module = modelfile.load_module(spec_m, spec.get("sets") or {})
    model, inputs = modelfile.build(module, spec_m)
    model, inputs = modelfile.prepare(model, inputs, dtype=dtype, device=device)
    rec["dtype"] = config["dtype"] = modelfile.floating_dtype(inputs)

    timer = _Timer(torch, device)
    with torch.no_grad():
        try:
            ref = _snapshot(torch, model(*inputs))
        except Exception as exc:
            if mode.compiled:
                raise
            raise modelfile._fail_in_user_code("the model's forward (eager)", spec_m.path, exc) from exc
        timer.sync()
        if device == "cuda":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()

        codes: list[str] = []
        if mode.compiled:
            import torch._inductor.config as ic
            from torch._inductor.graph import GraphLowering

            kwargs: dict[str, Any] = {"backend": "inductor"}
            if mode.compile_mode:
                kwargs["mode"] = mode.compile_mode
            patcher = ic.patch(inductor_patch)
            patcher.__enter__()
            fn = torch.compile(model, **kwargs)
            orig = GraphLowering.save_output_code

            def save_output_code(code: str) -> None:
                if code not in codes:
                    codes.append(code)
                if orig is not None:
                    orig(code)

            GraphLowering.save_output_code = save_output_code  # same hook as torch._inductor.utils.run_and_get_code
        else:
            fn = model

        def call() -> Any:
            if mode.cudagraphs:
                torch.compiler.cudagraph_mark_step_begin()
            return fn(*inputs)

        progress("compiling (first call)" if mode.compiled else "first call")
        t0 = time.perf_counter()
        out = call()
        timer.sync()
        rec["first_call_s"] = time.perf_counter() - t0
        memory: dict[str, Any] = {}
        if device == "cuda":
            memory["first_call_peak_allocated_bytes"] = int(torch.cuda.max_memory_allocated())
            memory["first_call_peak_reserved_bytes"] = int(torch.cuda.max_memory_reserved())
        else:
            memory["first_call_peak_rss_bytes"] = _peak_rss()
        del out
        if mode.compiled:
            GraphLowering.save_output_code = orig
        code_paths = []
        for i, code in enumerate(codes):
            p = mode_dir / "code" / f"graph_{i}.py"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(code, encoding="utf-8")
            code_paths.append(str(p.relative_to(spec["out_dir"])))
        rec["inductor_code"] = code_paths

        progress("warming up")
        per_call = _warm_up(timer, call, min_calls=spec.get("warmup", 10), max_seconds=spec.get("warmup_seconds", 10))
        rec["warmup_calls"] = per_call["calls"]
        if device == "cuda":
            torch.cuda.reset_peak_memory_stats()
        # Several calls per sample so one sample lasts >= ~1 ms: shorter ones time the timer, not the model.
        inner = max(1, min(1000, int(1e-3 / max(per_call["estimate_s"], 1e-7))))
        progress(f"timing {spec.get('repeats', 30)} samples x {inner} calls")
        samples = [timer.time(call, inner) * 1000.0 for _ in range(spec.get("repeats", 30))]
        rec["latency_ms"] = {**_quantiles(samples), "samples": samples, "timer": "cuda_events" if device == "cuda"
                             else "perf_counter", "calls_per_sample": inner}
        got = _snapshot(torch, call())
        timer.sync()
        err = _errors(torch, got, ref)
        rec["numerics"] = {"vs_eager": err}
        rec["max_abs_error"] = err.get("max_abs")
        rec["max_rel_error"] = err.get("max_rel")
        if err.get("nonfinite"):
            notes.append(f"{err['nonfinite']} output elements are NaN or Inf")
        if device == "cuda":
            memory["peak_allocated_bytes"] = int(torch.cuda.max_memory_allocated())
            memory["peak_reserved_bytes"] = int(torch.cuda.max_memory_reserved())
            rec["peak_memory_bytes"] = memory["peak_allocated_bytes"]
        else:
            memory["peak_rss_bytes"] = _peak_rss()
            rec["peak_memory_bytes"] = memory["peak_rss_bytes"]
        rec["memory"] = memory

        progress("profiling")
        rec["trace"] = _profile(torch, call, timer, device, spec)
    rec["status"] = "ok"


def _peak_rss() -> int:
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # Linux reports KiB


def _warm_up(timer: _Timer, call: Any, *, min_calls: int, max_seconds: float) -> dict[str, Any]:
    """Run until per-call time is stable (last 5 within 10% of their median) or the time budget is spent."""
    times: list[float] = []
    t_start = time.perf_counter()
    while True:
        times.append(timer.time(call, 1))
        if len(times) >= max(min_calls, 5):
            last = sorted(times[-5:])
            med = last[2]
            if med > 0 and (last[-1] - last[0]) / med < 0.10:
                break
        if time.perf_counter() - t_start > max_seconds and len(times) >= 3:
            break
    return {"calls": len(times), "estimate_s": sorted(times[-5:])[len(times[-5:]) // 2]}


def _profile(torch: Any, call: Any, timer: _Timer, device: str, spec: dict[str, Any]) -> str:
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    tb_dir = Path(spec["tb_dir"])
    tb_dir.mkdir(parents=True, exist_ok=True)
    steps = spec.get("profile_steps", 3)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    handler = tensorboard_trace_handler(str(tb_dir), worker_name=WORKER_NAME, use_gzip=True)
    # repeat=1: with the default repeat=0 the schedule starts a new cycle and the last, partial one is what
    # gets written.
    with profile(activities=activities, record_shapes=True, schedule=schedule(wait=1, warmup=1, active=steps, repeat=1),
                 on_trace_ready=handler) as prof:
        for _ in range(steps + 2):
            call()
            timer.sync()  # one iteration's kernels stay inside its ProfilerStep window
            prof.step()
    files = sorted(tb_dir.glob(f"{WORKER_NAME}.*.pt.trace.json.gz"))
    if not files:
        raise RuntimeError("torch.profiler wrote no trace file")
    return str(files[-1].relative_to(spec["out_dir"]))


def _root_cause(exc: BaseException) -> BaseException:
    # Dynamo wraps the user's error ("RuntimeError when making fake tensor call"); the innermost one says why.
    seen = {id(exc)}
    while True:
        nxt = exc.__cause__ or exc.__context__
        if nxt is None or id(nxt) in seen:
            return exc
        seen.add(id(nxt))
        exc = nxt


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    spec = json.loads(Path(argv[0]).read_text())
    mode_dir = Path(spec["mode_dir"])
    rec: dict[str, Any] = {"schema": CAPTURE_SCHEMA, "mode": spec["mode"]["name"], "status": "failed", "error": "",
                           "error_kind": "", "notes": []}
    t0 = time.perf_counter()
    try:
        run(spec, rec)
    except Unavailable as exc:
        rec["status"], rec["error"], rec["error_kind"] = "unavailable", str(exc), "unavailable"
    except ModelFileError as exc:
        # "forward": the model ran and raised (a run failure); "model": the file breaks the protocol (usage).
        forward = getattr(exc, "stage", "").startswith("the model's forward")
        rec["error"], rec["error_kind"] = exc.message, "forward" if forward else "model"
        detail = getattr(exc, "detail", "") or traceback.format_exc()
        print(detail, file=sys.stderr)
    except KernelscopeError as exc:
        rec["error"], rec["error_kind"] = exc.message, "usage" if exc.exit_code == 2 else "run"
        print(traceback.format_exc(), file=sys.stderr)
    except BaseException as exc:  # noqa: BLE001 - a failure of the mode is its result
        kind = type(exc).__name__
        text = str(exc)
        oom_words = ("out of memory", "not enough memory", "can't allocate memory", "Cannot allocate memory")
        if "OutOfMemory" in kind or isinstance(exc, MemoryError) or any(w in text for w in oom_words):
            rec["error_kind"] = "oom"
        elif "InductorError" in kind or "BackendCompilerFailed" in kind or "torch._dynamo" in type(exc).__module__:
            rec["error_kind"] = "compile"
        else:
            rec["error_kind"] = "run"
        first = str(exc).strip().splitlines()
        hint = {
            "oom": "out of memory in this mode: lower the input sizes (--set batch_size=...) or drop the mode",
            "compile": "torch.compile failed in this mode: keep eager (or a mode that works) for this model; "
                       "the mode's log.txt has Inductor's error",
        }.get(rec["error_kind"], "the mode's log.txt has the traceback")
        summary = f"{kind}: {first[0] if first else ''}"[:1000].strip()
        root = _root_cause(exc)
        if root is not exc:
            root_first = (str(root).strip().splitlines() or [""])[0]
            summary += f"; caused by {type(root).__name__}: {root_first}"[:600]
        rec["error"] = f"{summary} ({hint})"
        print(traceback.format_exc(), file=sys.stderr)
        if isinstance(exc, KeyboardInterrupt):
            rec["status"] = "interrupted"
    rec["wall_s"] = time.perf_counter() - t0
    atomic_write_json(mode_dir / "capture.json", rec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
