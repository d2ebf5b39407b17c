"""One mode in its own process: build the model, compile, time, profile, save the trace and Inductor code.

Run as ``python -m kernelscope.capture.worker SPEC.json``. Writes ``capture.json`` (kernelscope/capture_record.py's
CaptureRecord, schema kernelscope.capture/1) into the mode's folder whatever happens: a failure is a result too.
Progress lines go to stdout as
``@@progress <text>``; everything else (Inductor's fusion/autotune logs, warnings) goes to stderr, which the
runner saves as the mode's log. A spec with ``timing_only`` (a later process of ``--processes``) builds, compiles
on the first process's Inductor cache, warms up and times, then stops: no reference, numerics or profile.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kernelscope.capture.load import others_between, read_times
from kernelscope.capture.modes import ModeDef
from kernelscope.capture_record import CAPTURE_FILE, CAPTURE_SCHEMA, write_capture
from kernelscope.errors import KernelscopeError, ModelFileError, UsageError
from kernelscope.files import atomic_write_bytes
from kernelscope.provenance import (  # no torch import: the ranges' names, read back there
    FLOW_RANGE_PREFIX,
    MODULE_RANGE_PREFIX,
    PROVENANCE_SUFFIX,
    SOURCE_RANGE_PREFIX,
)

WORKER_NAME = "kernelscope"  # trace file prefix; never the hostname (reports get attached to public PRs)


class Unavailable(Exception):
    """This mode cannot run on this machine (not a failure of the model)."""


_QUIET = False  # a torchrun rank other than 0: only rank 0 reports progress


def progress(text: str) -> None:
    if not _QUIET:
        print(f"@@progress {text}", flush=True)


# --------------------------------------------------------------------------------------------------- environment


def environment(torch: Any, device: str, full: bool = True) -> dict[str, Any]:
    """What a reviewer needs to reproduce: versions, GPU, backends. No hostnames, no environment variables.
    ``full=False`` (a timing-only later process of --processes, whose environment the report never reads: the
    first process's stands for the run) leaves out what costs a subprocess or imports: the driver version from
    nvidia-smi, triton's version and the GEMM backends' availability."""
    env: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": device,
    }
    if full:
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
        if full:
            env["driver"] = _driver_version()
    else:
        env["cpu"] = _cpu_model()
        env["cpu_count"] = os.cpu_count()
    if full:
        env["gemm_backends"] = {name: dict(zip(("available", "reason"), backend_available(torch, name, device)))
                                for name in ("ATEN", "TRITON", "CPP", "CUTLASS", "NVGEMM")}
    return env


def _driver_version() -> str | None:
    try:
        import subprocess

        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        return out.splitlines()[0] if out else None
    except Exception:
        return None


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
        # Inductor's setting when Inductor is loaded; else its default, worked out as torch/_inductor/config.py
        # does (cuda.cutlass_dir): importing Inductor only to read it cost an eager process seconds on the H200.
        ic = sys.modules.get("torch._inductor.config")
        cutlass_dir = (getattr(getattr(ic, "cuda", None), "cutlass_dir", None) if ic is not None else
                       os.path.realpath(os.environ.get("TORCHINDUCTOR_CUTLASS_DIR", os.path.join(
                           os.path.dirname(torch.__file__), "../third_party/cutlass/"))))
        if not cutlass_dir or not Path(cutlass_dir, "include", "cutlass").is_dir():
            return False, "Inductor's CUTLASS backend needs CUTLASS source headers (set TORCHINDUCTOR_CUTLASS_DIR)"
        return True, ""
    if name == "CUTEDSL":
        ok = importlib.util.find_spec("cutlass") is not None
        return ok, "" if ok else "CuTeDSL (nvidia-cutlass-dsl) is not installed"
    return False, "unknown backend"


def cute_dsl_arch(major: int, minor: int) -> str:
    """CUTE_DSL_ARCH for a compute capability: sm90 and later need the arch-specific "a" variant (sm_90a)."""
    return f"sm_{major}{minor}a" if major >= 9 else f"sm_{major}{minor}"


# --------------------------------------------------------------------------------------------------- helpers


def _flatten(torch: Any, out: Any) -> list[Any]:
    from kernelscope.modelfile import output_tensors  # dataclass / ModelOutput outputs too, not only pytrees

    return output_tensors(out)


def _snapshot(torch: Any, out: Any) -> list[Any]:
    # CUDA-graph outputs are overwritten by the next replay: keep a copy.
    return [t.detach().clone() for t in _flatten(torch, out)]


def _compare(torch: Any, got: list[Any], ref: list[Any], tol: Any) -> dict[str, Any]:
    """Errors of ``got`` against ``ref``, in float64 on the CPU.

    max_abs; max_rel norm-wise (max |got-ref| / max |ref|: element-wise relative error explodes at zeros); rmse;
    mismatch_fraction: elements outside ``tol`` as torch.allclose counts them (|got-ref| > atol + rtol*|ref|, a
    NaN/Inf on one side only, or a different NaN/Inf); differ_fraction: elements not bit-equal; nonfinite: NaN/Inf
    in ``got``; new_nonfinite: of those, where ``ref`` is finite.
    """
    if len(got) != len(ref):
        return {"max_abs": None, "max_rel": None, "note": f"{len(got)} outputs vs {len(ref)} in the reference",
                "pass": False, "allclose": False}
    max_abs, ref_max, sq, n_finite = 0.0, 0.0, 0.0, 0
    nonfinite = new_nonfinite = mismatch = differ = total = 0
    for g, r in zip(got, ref):
        if g.shape != r.shape:
            return {"max_abs": None, "max_rel": None, "note": f"shape {tuple(g.shape)} vs {tuple(r.shape)}",
                    "pass": False, "allclose": False}
        g64, r64 = g.detach().cpu().double(), r.detach().cpu().double()
        if not g64.numel():
            continue
        gf, rf = torch.isfinite(g64), torch.isfinite(r64)
        both = gf & rf
        nonfinite += int((~gf).sum().item())
        new_nonfinite += int((~gf & rf).sum().item())
        d = torch.where(both, (g64 - r64).abs(), torch.zeros_like(g64))
        max_abs = max(max_abs, float(d.max().item()))
        if rf.any():
            ref_max = max(ref_max, float(r64[rf].abs().max().item()))
        sq += float((d * d).sum().item())
        n_finite += int(both.sum().item())
        outside = d > (tol.atol + tol.rtol * torch.where(both, r64.abs(), torch.zeros_like(r64)))
        # NaN/Inf on one side only, or different non-finite values (inf vs nan, +inf vs -inf), are mismatches.
        same_nonfinite = (~gf & ~rf) & ((g64 == r64) | (torch.isnan(g64) & torch.isnan(r64)))
        one_side = ~both & ~same_nonfinite
        mismatch += int((outside | one_side).sum().item())
        differ += int(((d > 0) | one_side).sum().item())
        total += g64.numel()
    max_rel = max_abs / ref_max if ref_max > 0 else (0.0 if max_abs == 0 else None)
    out = {"max_abs": max_abs, "max_rel": max_rel, "rmse": (sq / n_finite) ** 0.5 if n_finite else 0.0,
           "mismatch_fraction": (mismatch / total) if total else 0.0,
           "differ_fraction": (differ / total) if total else 0.0,
           "nonfinite": nonfinite, "new_nonfinite": new_nonfinite, "elements": total}
    out["allclose"] = mismatch == 0
    return out


def _reference_output(torch: Any, model: Any, inputs: list[Any], device: str,
                      run_dtype: str) -> tuple[list[Any] | None, dict]:
    """The same model and inputs in float64, on the run's device. Returns (outputs, how).

    float64 everywhere, not a float32 copy with TF32 switched off on CUDA: changing the process-wide TF32 flags
    and putting them back broke the next Dynamo recompile on the H200 (torch 2.11: "cuDNN conv and cuDNN RNN
    have different TF32 flags", dynamic mode at the second sweep point), and those flags are part of Inductor's
    FX-graph cache key. float64 needs no global state; its cost (a second copy of the weights, slower GEMMs)
    is paid once per mode, and a model that cannot afford it is reported as skipped, not failed."""
    import copy

    ref_dtype = torch.float64
    how: dict[str, Any] = {"dtype": "float64", "device": device}
    try:
        m = copy.deepcopy(model)
        if isinstance(m, torch.nn.Module):
            m = m.to(dtype=ref_dtype)
        xs = [x.to(ref_dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
    except Exception as exc:  # a model that cannot be copied or cast (custom objects, quantized weights)
        how["skipped"] = f"the model could not be copied to float64: {type(exc).__name__}: {exc}"[:300]
        return None, how
    try:
        with torch.no_grad():
            out = [t.detach().double().cpu() for t in _flatten(torch, m(*xs))]
    except Exception as exc:  # e.g. an op without a float64 kernel, or no memory for a second copy
        first = str(exc).splitlines()[0] if str(exc) else ""
        how["skipped"] = f"the float64 reference failed: {type(exc).__name__}: {first}"[:300]
        out = None
    finally:
        del m, xs
        if device == "cuda":
            torch.cuda.empty_cache()
    return out, how


def _numerics(torch: Any, got: list[Any], eager: list[Any], reference: list[Any] | None, how: dict[str, Any],
              dtype: str) -> dict[str, Any]:
    """The mode's numerics record: vs eager, vs the high-precision reference, the tolerance and rules used."""
    from kernelscope.tolerance import REFERENCE_MULTIPLIER, reference_bound, reference_pass, tolerance_for

    tol = tolerance_for(dtype)
    vs_eager = _compare(torch, got, eager, tol)
    vs_eager.setdefault("pass", bool(vs_eager.get("allclose")) and not vs_eager.get("new_nonfinite"))
    out: dict[str, Any] = {
        "vs_eager": vs_eager,
        "tolerance": {"dtype": tol.dtype, "atol": tol.atol, "rtol": tol.rtol,
                      "vs_eager_rule": "every element within atol + rtol*|eager| (torch.allclose), no new NaN/Inf",
                      "vs_reference_rule": f"within atol + rtol*|reference| everywhere, or rmse <= "
                                           f"{REFERENCE_MULTIPLIER:g} * eager's rmse + atol/10; no new NaN/Inf"},
        "reference": how,
    }
    if reference is not None:
        vr = _compare(torch, got, reference, tol)
        ve = _compare(torch, eager, reference, tol)
        vr["eager_rmse"] = ve.get("rmse")
        vr["eager_max_abs"] = ve.get("max_abs")
        vr["eager_nonfinite"] = ve.get("new_nonfinite")
        vr["bound_rmse"] = reference_bound(ve.get("rmse"), tol)
        if "pass" not in vr:
            vr["pass"] = reference_pass(vr.get("rmse"), ve.get("rmse"), vr.get("mismatch_fraction"),
                                        int(vr.get("new_nonfinite") or 0), tol)
        if vr.get("new_nonfinite"):
            vr["reason"] = f"{vr['new_nonfinite']} NaN/Inf where the {how['dtype']} reference is finite"
        elif vr["pass"] is False:
            vr["reason"] = (f"rmse {vr['rmse']:.3g} vs the {how['dtype']} reference exceeds "
                            f"{REFERENCE_MULTIPLIER:g} x eager's {ve.get('rmse', 0):.3g} + atol/10")
        out["vs_reference"] = vr
    if not vs_eager["pass"]:
        vs_eager["reason"] = (f"{vs_eager.get('mismatch_fraction', 0):.3%} of elements outside atol {tol.atol:g} + "
                              f"rtol {tol.rtol:g} of eager" if vs_eager.get("max_abs") is not None
                              else vs_eager.get("note", "outputs differ in structure"))
    return out


# Dynamo and Inductor counters, read before and after each shape point so each point reports its own recompiles.
_CACHE_GROUPS = ("inductor", "aot_autograd", "dynamo_cache")


def _counters(torch: Any) -> dict[str, Any]:
    from torch._dynamo.utils import counters, guard_failures

    snap = {group: dict(counters.get(group, {})) for group in ("frames", "stats", "graph_break", *_CACHE_GROUPS)}
    snap["guard_failures"] = [str(r) for reasons in guard_failures.values() for r in reasons]
    return snap


def _counter_delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    def d(group: str, key: str) -> int:
        return int(after.get(group, {}).get(key, 0)) - int(before.get(group, {}).get(key, 0))

    failures = after["guard_failures"][len(before["guard_failures"]):]
    graph_breaks = sum(after.get("graph_break", {}).values()) - sum(before.get("graph_break", {}).values())
    cache = {}
    for group in _CACHE_GROUPS:
        for key in after.get(group, {}):
            if "cache" in key or key == "select_algorithm_autotune":
                cache[key] = d(group, key)
    return {
        "dynamo": {"frames_compiled": d("frames", "total"), "graphs": d("stats", "unique_graphs"),
                   "recompiles": len(failures), "guard_failures": failures[:20], "graph_breaks": graph_breaks,
                   "graph_break_reasons": [k for k, v in after.get("graph_break", {}).items()
                                           if v > before.get("graph_break", {}).get(k, 0)][:10]},
        "cache": cache,
    }


def _rss_hwm() -> int | None:
    """Peak resident set size since the last _reset_hwm (Linux VmHWM), in bytes."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _rss_now() -> int | None:
    try:
        return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _reset_hwm() -> bool:
    # Writing 5 to clear_refs resets VmHWM (Linux >= 4.0): the peak of a window, not of the process's life.
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _param_names(torch: Any, model: Any) -> list[str]:
    """The model's parameter and buffer names (tied ones under each name): kernelscope.provenance maps Dynamo's
    flattened attribute names (``l__self___layers_0_mlp_gate_proj_weight``, printed when freezing installs the
    parameters as graph attributes) back to module paths through them; the flattening alone is ambiguous."""
    if not isinstance(model, torch.nn.Module):
        return []
    return ([n for n, _ in model.named_parameters(remove_duplicate=False)]
            + [n for n, _ in model.named_buffers(remove_duplicate=False)])


def _param_signature(torch: Any, model: Any) -> tuple | None:
    if not isinstance(model, torch.nn.Module):
        return None
    return tuple((n, tuple(t.shape), str(t.dtype)) for n, t in (*model.named_parameters(), *model.named_buffers()))


def _describe_inputs(torch: Any, inputs: Any) -> str:
    parts = []
    for x in inputs:
        if isinstance(x, torch.Tensor):
            parts.append("x".join(str(s) for s in x.shape) or "scalar")
        else:
            parts.append(repr(x)[:20])
    return ", ".join(parts)


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


def spec_points(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The shape points this worker measures (one for a static mode; every point for the dynamic mode)."""
    if spec.get("points"):
        return list(spec["points"])
    return [{"index": 0, "label": "", "params": {}, "sets": {}, "input_index": None,
             "mode_dir": spec["mode_dir"], "tb_dir": spec["tb_dir"]}]


def _mode_def(spec: dict[str, Any]) -> ModeDef:
    return ModeDef(**{**spec["mode"], "gemm_backends": tuple(spec["mode"]["gemm_backends"])
                      if spec["mode"]["gemm_backends"] else None})


def _pick_device(torch: Any, want: str) -> str:
    """--device: auto is cuda when torch sees a GPU; cuda without one is a usage error."""
    if want == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if want == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda but torch sees no CUDA device", "run on a GPU machine or pass --device cpu")
    return want


def _check_dtype(torch: Any, device: str, dtype: str | None) -> str | None:
    if device == "cuda" and dtype == "bfloat16" and not torch.cuda.is_bf16_supported():
        raise UsageError(f"bfloat16 is not supported on {torch.cuda.get_device_name(0)}",
                         "pass --dtype float16 or float32")
    return dtype


class _Setup:
    """What every point of one worker shares: torch, the device, the mode's Inductor configuration.

    The configuration (Inductor's config patch, CUTE_DSL_ARCH) holds for the worker's life and comes off in
    ``close()``, which main() calls in ``finally``."""

    def __init__(self, spec: dict[str, Any], rec: dict[str, Any]):
        self.patches = contextlib.ExitStack()
        try:
            self._configure(spec, rec)
        except BaseException:
            self.patches.close()
            raise

    def _configure(self, spec: dict[str, Any], rec: dict[str, Any]) -> None:
        self.mode = mode = _mode_def(spec)
        progress("importing torch")
        import torch

        self.torch = torch
        self.device = device = _pick_device(torch, spec["device"])
        rec["device"] = device
        if spec.get("distributed") and device == "cuda":
            # A torchrun rank's GPU, before anything touches CUDA (else every rank opens a context on GPU 0).
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")) % max(1, torch.cuda.device_count()))
        progress("reading the environment")  # its own stage in the log: nvidia-smi and imports, seconds on the H200
        rec["environment"] = environment(torch, device, full=not spec.get("timing_only"))
        if mode.needs_cuda and device != "cuda":
            raise Unavailable(f"{mode.name} uses CUDA graphs, which need a GPU (this run is on the CPU)")
        self.group: Any = self._start_group(spec, rec)
        self.dtype = _check_dtype(torch, device, spec.get("dtype"))  # None: the model file's own dtypes
        progress("configuring the mode")  # a compiled mode imports Inductor's configuration here
        config = self._mode_config(spec, rec)
        rec["config"] = config
        self.config = config
        self.timer = _Timer(torch, device)
        # Carried across points (the dynamic mode compiles once and meets every shape in this process).
        self.fn: Any = None
        self.model: Any = None
        self.signature: tuple | None = None
        self.codes_seen: list[str] = []
        # output code -> its Inductor provenance (kernel <-> FX nodes <-> stack traces), from the compile
        self.provenance: dict[str, dict[str, Any]] = {}
        self.last_code_paths: list[str] = []

    def _start_group(self, spec: dict[str, Any], rec: dict[str, Any]) -> Any:
        """A torchrun worker's process group, up before the model is built: the model file may shard itself with
        torch.distributed (issue 17). None outside torchrun."""
        if not spec.get("distributed"):
            return None
        from kernelscope.capture.dist import Group

        progress("initialising the process group")
        group = Group(self.torch, self.device, float(spec.get("timeout_s") or 900.0))
        self.patches.callback(group.close)
        rec["distributed"] = group.describe()
        return group

    def _mode_config(self, spec: dict[str, Any], rec: dict[str, Any]) -> dict[str, Any]:
        """The mode's configuration as the record states it; for a compiled mode, Inductor's configuration patched
        in for the worker's life (every point, and every recompile, sees it)."""
        mode, device = self.mode, self.device
        config: dict[str, Any] = {"compiled": mode.compiled, "compile_mode": mode.compile_mode,
                                  "max_autotune": mode.max_autotune, "cudagraphs": mode.cudagraphs,
                                  "dynamic": mode.dynamic, "device": device,
                                  "capability": rec["environment"].get("capability"), "dtype": self.dtype}
        notes: list[str] = rec.setdefault("notes", [])
        if not mode.compiled:
            config["gemm_backends"] = None
            return config
        import torch._inductor.config as ic

        inductor_patch: dict[str, Any] = {}
        if device == "cpu":
            inductor_patch["cpp.enable_kernel_profile"] = True  # C++ kernels appear in the trace
        if hasattr(ic.trace, "provenance_tracking_level"):
            # Inductor's provenance (kernel <-> FX nodes <-> source lines, and a "[Provenance debug handles]"
            # comment at each call site): comments and bookkeeping only, the kernels are the same
            inductor_patch["trace.provenance_tracking_level"] = 1
        freezing = spec.get("freezing")
        if freezing is None:
            freezing = device == "cpu"  # Inductor's advice for CPU inference; CPP GEMM templates need it
        inductor_patch["freezing"] = bool(freezing)
        config["freezing"] = bool(freezing)
        if mode.max_autotune:
            self._gemm_backends(ic, inductor_patch, config, notes)
        config["inductor_config"] = dict(inductor_patch)
        # Entered for the worker's life: every point (and every recompile) sees the mode's configuration.
        self.patches.enter_context(ic.patch(inductor_patch))
        return config

    def _gemm_backends(self, ic: Any, inductor_patch: dict[str, Any], config: dict[str, Any],
                       notes: list[str]) -> None:
        """max-autotune's GEMM backends: the requested ones that can run here (an unavailable mode when none
        can), and CUTE_DSL_ARCH for NVGEMM when the user left it unset."""
        mode, device, torch = self.mode, self.device, self.torch
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
            # torch 2.14.1's autotune workers otherwise compile every NVGEMM choice for sm_100a and all
            # fail on sm90 ("expects arch to be sm_90a, but got sm_100a"; fixture nvgemm-arch-failure).
            arch = cute_dsl_arch(*torch.cuda.get_device_capability(0))
            self.patches.callback(_restore_env, "CUTE_DSL_ARCH", os.environ.get("CUTE_DSL_ARCH"))
            os.environ["CUTE_DSL_ARCH"] = arch
            notes.append(f"set CUTE_DSL_ARCH={arch} from the device's compute capability (unset by the user)")
            config["cute_dsl_arch"] = arch

    def close(self) -> None:
        """Take the mode's configuration off (Inductor's config, the environment): the process is as it was."""
        self.patches.close()


def _build_point(setup: _Setup, spec: dict[str, Any], point: dict[str, Any],
                 rec: dict[str, Any]) -> tuple[Any, list[Any]]:
    from kernelscope import modelfile

    torch = setup.torch
    spec_m = modelfile.inspect_model_file(spec["model"])
    modelfile.seed_everything(spec.get("seed", 0))
    module = modelfile.load_module(spec_m, {**(spec.get("sets") or {}), **(point.get("sets") or {})})
    model, inputs = modelfile.build(module, spec_m)
    if point.get("input_index") is not None:
        entries = _input_sweep(module, spec_m)
        entry = entries[point["input_index"]]
        inputs = [entry] if isinstance(entry, torch.Tensor) else list(entry)
        modelfile.check_arity(model, inputs)
    model, inputs = modelfile.prepare(model, inputs, dtype=setup.dtype, device=setup.device)
    rec["dtype"] = setup.config["dtype"] = modelfile.floating_dtype(inputs)
    rec["inputs"] = _describe_inputs(torch, inputs)
    return model, inputs


def _input_sweep(module: Any, spec_m: Any) -> list[Any]:
    from kernelscope import modelfile

    try:
        entries = module.get_input_sweep()
    except Exception as exc:
        raise modelfile.fail_in_user_code("get_input_sweep()", spec_m.path, exc) from exc
    if not isinstance(entries, (list, tuple)) or not entries:
        raise ModelFileError(f"get_input_sweep() returned {type(entries).__name__ if entries is not None else 'None'}",
                             "return a non-empty list: dicts of constants ({'batch_size': 16}) or input lists")
    return list(entries)


def list_points(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """What get_input_sweep() returns, described for the parent (which never runs the model file itself)."""
    import torch

    from kernelscope import modelfile

    spec_m = modelfile.inspect_model_file(spec["model"])
    modelfile.seed_everything(spec.get("seed", 0))
    module = modelfile.load_module(spec_m, spec.get("sets") or {})
    out = []
    for i, entry in enumerate(_input_sweep(module, spec_m)):
        if isinstance(entry, dict):
            bad = [k for k in entry if k not in spec_m.constants]
            if bad:
                raise ModelFileError(f"get_input_sweep() entry {i} names {bad[0]!r}, which is not a module-level "
                                     f"constant of {Path(spec_m.path).name}", "use the file's constants as keys")
            out.append({"kind": "sets", "detail": {k: v if isinstance(v, (int, float, str, bool)) or v is None
                                                   else repr(v) for k, v in entry.items()}})
        elif isinstance(entry, (list, tuple, torch.Tensor)):
            items = [entry] if isinstance(entry, torch.Tensor) else list(entry)
            if not any(isinstance(x, torch.Tensor) for x in items):
                raise ModelFileError(f"get_input_sweep() entry {i} holds no tensor",
                                     "each entry is a dict of constants or a list of the model's inputs")
            out.append({"kind": "inputs", "detail": _describe_inputs(torch, items)})
        else:
            raise ModelFileError(f"get_input_sweep() entry {i} is a {type(entry).__name__}",
                                 "each entry is a dict of constants or a list of the model's inputs")
    return out


def run_point(setup: _Setup, spec: dict[str, Any], point: dict[str, Any], rec: dict[str, Any]) -> None:
    """Measure one shape point: first call (compile), warm-up, timed samples, numerics, memory, profile."""
    torch, mode, device, timer = setup.torch, setup.mode, setup.device, setup.timer
    mode_dir = Path(point["mode_dir"])
    notes: list[str] = rec.setdefault("notes", [])
    progress(f"building the model{' at ' + point['label'] if point.get('label') else ''}")
    # CPU memory is reported as growth over this RSS: what the mode allocated, not the interpreter and torch.
    rss_before = _rss_now() if device == "cpu" else None
    model, inputs = _build_point(setup, spec, point, rec)
    rec["param_names"] = _param_names(torch, model)
    signature = _param_signature(torch, model)
    reuse = setup.fn is not None and signature is not None and signature == setup.signature
    if reuse:
        # Same weights' shapes (the seed is fixed, so same weights): keep the compiled model, feed new inputs.
        model = setup.model
    elif setup.fn is not None:
        notes.append("the model's parameters change at this point: it is compiled again as a new model")
    rec["memory"] = memory = {}
    if device == "cpu":
        memory["rss_before_bytes"] = rss_before

    with torch.no_grad():
        ref, reference, how, hwm_ok = _eager_outputs(setup, spec, rec, model, inputs)
        codes: list[str] = []
        hooks = contextlib.ExitStack()
        fn = _compiled_fn(setup, model, signature, reuse, codes, hooks)

        def call() -> Any:
            if mode.cudagraphs:
                torch.compiler.cudagraph_mark_step_begin()  # each call is a new step: replay, not record
            return fn(*inputs)

        before = _counters(torch) if mode.compiled else None
        _first_call(setup, spec, rec, call, hooks, reuse, before, hwm_ok)
        _save_code(setup, spec, mode_dir, codes, rec)
        if spec.get("compile_only"):
            rec["status"] = "ok"
            return

        timed = _time_calls(setup, spec, rec, call, hwm_ok)
        if timed is None:  # a later process of --processes: its timings are the measurement
            return
        warmup_peak, hwm_ok = timed
        _check_numerics(setup, rec, call, ref, reference, how)
        _record_peak_memory(setup, rec, hwm_ok, warmup_peak, rss_before)

        progress("profiling")
        rec["trace"] = _profile(torch, call, timer, device, {**spec, "tb_dir": point["tb_dir"]},
                                modules=None if mode.compiled else model,
                                worker_name=_trace_name(setup.group))
        if mode.compiled:
            # Recompiles after the first call (a guard that fails on the second call) count at this point too.
            rec["dynamo"] = _counter_delta(before, _counters(torch))["dynamo"]  # type: ignore[arg-type]
    rec["status"] = "ok"


def _eager_outputs(setup: _Setup, spec: dict[str, Any], rec: dict[str, Any], model: Any,
                   inputs: list[Any]) -> tuple[Any, Any, dict[str, Any], bool]:
    """The eager output every mode's numerics compare with, the high-precision reference's (unless --no-reference,
    or a compile-only / timing-only process), then the memory peak reset for the mode's own measurement. Returns
    (eager output, reference output, how the reference was made, whether the RSS high-water mark was reset)."""
    from kernelscope import modelfile

    torch, device = setup.torch, setup.device
    try:
        ref = _snapshot(torch, model(*inputs))
    except Exception as exc:
        if setup.mode.compiled:
            raise
        raise modelfile.fail_in_user_code("the model's forward (eager)", spec["model"], exc) from exc
    setup.timer.sync()
    reference, how = (None, {"skipped": "--no-reference"})
    if spec.get("reference", True) and not spec.get("compile_only") and not spec.get("timing_only"):
        progress("reference forward (high precision)")
        reference, how = _reference_output(torch, model, inputs, device, rec["dtype"])
    hwm_ok = False
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    else:
        rec["memory"]["build_peak_rss_bytes"] = _rss_hwm()  # model, inputs and references built
        hwm_ok = _reset_hwm()
    return ref, reference, how, hwm_ok


def _compiled_fn(setup: _Setup, model: Any, signature: Any, reuse: bool, codes: list[str],
                 hooks: contextlib.ExitStack) -> Any:
    """What each call runs: the model, or (compiled modes) its torch.compile'd function, compiled once per
    parameter signature; the compile's hooks (output code, provenance, autotune announcements) go on ``hooks``."""
    torch, mode = setup.torch, setup.mode
    if mode.compiled:
        from torch._inductor.graph import GraphLowering

        if not reuse:
            kwargs: dict[str, Any] = {"backend": "inductor"}
            if mode.compile_mode:
                kwargs["mode"] = mode.compile_mode
            if mode.dynamic:
                kwargs["dynamic"] = True
            setup.fn, setup.model, setup.signature = torch.compile(model, **kwargs), model, signature
        fn = setup.fn
        orig = GraphLowering.save_output_code

        def save_output_code(code: str) -> None:
            if code not in codes:
                codes.append(code)
            if orig is not None:
                orig(code)

        # The compile's hooks, each undone by ``hooks`` in the finally around the first call (also when one
        # of them fails to go on).
        hooks.callback(setattr, GraphLowering, "save_output_code", orig)
        GraphLowering.save_output_code = save_output_code  # same hook as torch._inductor.utils.run_and_get_code
        hooks.callback(_record_provenance(torch, codes, setup.provenance))
        hooks.callback(_announce_autotune())
    else:
        fn = model
    return fn


def _first_call(setup: _Setup, spec: dict[str, Any], rec: dict[str, Any], call: Any, hooks: contextlib.ExitStack,
                reuse: bool, before: Any, hwm_ok: bool) -> None:
    """The first call (the compile, in compiled modes): its time, its peak memory, the compile's counters."""
    torch, mode, device, timer = setup.torch, setup.mode, setup.device, setup.timer
    memory = rec["memory"]
    progress("compiling (first call)" if mode.compiled and not reuse else "first call")
    t0 = time.perf_counter()
    try:
        out = call()
        timer.sync()
    finally:  # the compile's hooks come off whether or not it compiled
        hooks.close()
    rec["first_call_s"] = time.perf_counter() - t0
    if device == "cuda":
        memory["first_call_peak_allocated_bytes"] = int(torch.cuda.max_memory_allocated())
        memory["first_call_peak_reserved_bytes"] = int(torch.cuda.max_memory_reserved())
    else:
        # Compile-time peak RSS: from the reset above (after the model and the references were built).
        memory["first_call_peak_rss_bytes"] = (_rss_hwm() if hwm_ok else None) or _peak_rss()
    del out
    if mode.compiled:
        delta = _counter_delta(before, _counters(torch))  # type: ignore[arg-type]
        # Reused: the graph compiled at an earlier point covers this shape, so nothing compiled here and the
        # first call is no compile time.
        reused = reuse and not delta["dynamo"].get("frames_compiled")
        rec["compile"] = {"cold_s": None if reused else rec["first_call_s"], "cache": {"cold": delta["cache"]},
                          "cache_dir_fresh": not spec.get("user_cache_dir")}
        if reused:
            rec["compile"].update(reused=True, first_call_s=rec["first_call_s"])
        rec["dynamo"] = delta["dynamo"]


def _save_code(setup: _Setup, spec: dict[str, Any], mode_dir: Path, codes: list[str], rec: dict[str, Any]) -> None:
    """Write the Inductor output code compiled at this point (and its provenance beside it)."""
    mode = setup.mode
    code_paths = []
    for code in codes:
        if code in setup.codes_seen:
            continue
        setup.codes_seen.append(code)
        p = mode_dir / "code" / f"graph_{len(code_paths)}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(code, encoding="utf-8")
        code_paths.append(str(p.relative_to(spec["out_dir"])))
        prov = setup.provenance.get(code)
        if prov is not None:  # read back beside the code (analysis/mode.py load_codes)
            p.with_name(p.stem + PROVENANCE_SUFFIX).write_text(json.dumps(prov), encoding="utf-8")
    if code_paths:
        setup.last_code_paths = code_paths
    # No new code at this point (a dynamic graph that already covers this shape): the running code is the
    # last one compiled.
    rec["inductor_code"] = code_paths or list(setup.last_code_paths)
    if mode.compiled and not code_paths and setup.last_code_paths:
        rec["code_reused"] = True


def _time_calls(setup: _Setup, spec: dict[str, Any], rec: dict[str, Any], call: Any,
                hwm_ok: bool) -> tuple[int | None, bool] | None:
    """Warm up, then the timed samples. (the warm-up's peak RSS, whether VmHWM was reset after it); None when
    the timings are all this process measures (``timing_only``)."""
    torch, mode, device, timer = setup.torch, setup.mode, setup.device, setup.timer
    notes: list[str] = rec["notes"]
    warmup_peak = None
    if mode.compiled and _shutdown_compile_workers(torch):
        # Inductor's compile-worker pool (up to one process per core) idles or warms up in the background
        # after the compile; timing a launch-bound model next to it measured the pool, not the model.
        rec["compile_workers_stopped"] = True
    progress("warming up")
    load_start = read_times()  # other processes' CPU use over the warm-up and the samples (capture/load.py)
    per_call = _warm_up(timer, call, min_calls=spec.get("warmup", 10), max_seconds=WARMUP_BUDGET_S,
                        min_seconds=WARMUP_MIN_S, agree=setup.group)
    rec["warmup_calls"] = per_call["calls"]
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    else:
        warmup_peak = _rss_hwm() if hwm_ok else None
        hwm_ok = _reset_hwm()
    # Several calls per sample so one sample lasts ~SAMPLE_S: shorter ones time the timer, not the model.
    inner = calls_per_sample(_batched_estimate(timer, call, per_call["estimate_s"], agree=setup.group))
    repeats = spec.get("repeats", 30)
    # CUDA: the launching thread moves to the fastest CPU (a torchrun group's ranks keep theirs: two ranks could
    # pick one CPU); on the CPU device Inductor's OpenMP threads are the measurement, so nothing moves there
    pin = device == "cuda" and setup.group is None and spec.get("cpu_pinning", "fastest") == "fastest"
    progress(f"timing {repeats} samples x {inner} calls")
    samples, windows, drift, pinned = _pinned_samples(timer, call, inner, repeats, pin=pin, agree=setup.group)
    rec["warmup_calls"] += (windows - 1) * repeats * inner  # the drifting windows were warm-up after all
    load = others_between(load_start, read_times())
    if load is not None:
        # the CPUs the timed calls keep busy: OpenMP's threads on the CPU device, the launching thread on a GPU
        load["threads"] = float(torch.get_num_threads() if device == "cpu" else 1)
    rec["latency_ms"] = {**_quantiles(samples), "samples": samples, "timer": "cuda_events" if device == "cuda"
                         else "perf_counter", "calls_per_sample": inner, "windows": windows,
                         "drift": drift, **(pinned or {}), **(load or {})}
    if spec.get("timing_only"):
        # A later process of --processes: its timings are the measurement; numerics, memory and the
        # profile come from the first process.
        rec["status"] = "ok"
        if drift > DRIFT_LIMIT:
            rec["drifted"] = True
        return None
    if drift > DRIFT_LIMIT:
        notes.append(f"latency still drifted by {drift:.0%} between the first and second half of the timed "
                     f"samples after {windows} windows: something changed under the measurement (another "
                     f"process on the {'GPU or ' if device == 'cuda' else ''}CPU, clocks, a launch-bound model's "
                     "CPU-side state); treat this mode's latency with care or raise --repeats")
    return warmup_peak, hwm_ok


def _check_numerics(setup: _Setup, rec: dict[str, Any], call: Any, ref: Any, reference: Any,
                    how: dict[str, Any]) -> None:
    """One more call, compared with eager's output and the high-precision reference."""
    torch, timer = setup.torch, setup.timer
    notes: list[str] = rec["notes"]
    got = _snapshot(torch, call())
    timer.sync()
    num = _numerics(torch, got, ref, reference, how, rec["dtype"])
    rec["numerics"] = num
    err = num["vs_eager"]
    rec["max_abs_error"] = err.get("max_abs")
    rec["max_rel_error"] = err.get("max_rel")
    if err.get("nonfinite"):
        notes.append(f"{err['nonfinite']} output elements are NaN or Inf")


def _record_peak_memory(setup: _Setup, rec: dict[str, Any], hwm_ok: bool, warmup_peak: int | None,
                        rss_before: int | None) -> None:
    """The steady-state peak memory (GPU allocator, or RSS over the timed window on the CPU)."""
    torch, device = setup.torch, setup.device
    memory = rec["memory"]
    if device == "cuda":
        memory["peak_allocated_bytes"] = int(torch.cuda.max_memory_allocated())
        memory["peak_reserved_bytes"] = int(torch.cuda.max_memory_reserved())
        rec["peak_memory_bytes"] = memory["peak_allocated_bytes"]
    else:
        # Steady-state peak RSS: the window of the timed calls (VmHWM reset after warm-up); the process's
        # lifetime peak (compile included) is kept apart.
        steady = _rss_hwm() if hwm_ok else None
        # Resetting VmHWM resets getrusage's ru_maxrss too (the same counter): the lifetime peak is the
        # largest of the windows read before each reset.
        windows = [memory.get("build_peak_rss_bytes"), memory.get("first_call_peak_rss_bytes"), warmup_peak,
                   steady]
        memory["process_peak_rss_bytes"] = max((w for w in windows if w), default=None) or _peak_rss()
        memory["peak_rss_bytes"] = steady or memory["process_peak_rss_bytes"]
        memory["rss_after_bytes"] = _rss_now()
        rec["peak_memory_bytes"] = memory["peak_rss_bytes"]
        if rss_before:
            for key in ("first_call", "peak"):
                peak = memory.get(f"{key}_peak_rss_bytes" if key == "first_call" else "peak_rss_bytes")
                memory[f"{key}_rss_growth_bytes"] = max(0, peak - rss_before) if peak else None
            rec["peak_memory_bytes"] = memory["peak_rss_growth_bytes"]


def _peak_rss() -> int:
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # Linux reports KiB


# Seconds the warm-up may take before timing starts anyway, and the timed windows' budget. A constant: no option
# sets it (the spec's "warmup" is the minimum number of warm-up calls).
WARMUP_BUDGET_S = 10.0
# ... and the least it takes, however stable the first calls look: a GPU idles at its lowest clocks (the H200's SM
# clock read 345 MHz idle, 1980 MHz max) and a launch-bound model's sparse kernels raise them over time; the CPU's
# caches and Python's adaptive interpreter warm up too. On the H200 the seed sample's eager calls read 79-89 µs
# for the first 1.0 s after the first call and 66-74 µs from 1.1 s on (benchmarks/sample_length.py, ramp). The
# probe of --cpu-pinning and the samples come after.
WARMUP_MIN_S = 1.0
DRIFT_LIMIT = 0.10  # first-half vs second-half median of a timed window, relative to the window's median
MAX_WINDOWS = 3


def _drift(samples: list[float]) -> float:
    """How far the second half of a window moved from the first: |median(2nd) - median(1st)| / median(all)."""
    h = len(samples) // 2
    if h < 2:
        return 0.0
    mid = _quantiles(samples)["median"]
    return abs(_quantiles(samples[h:])["median"] - _quantiles(samples[:h])["median"]) / mid if mid > 0 else 0.0


def _steady_samples(timer: _Timer, call: Any, inner: int, repeats: int, *, budget_s: float, agree: Any = None,
                    contended: Callable[[list[float]], bool] | None = None,
                    before_retry: Callable[[], None] | None = None) -> tuple[list[float], int, float]:
    """Timed samples (ms per call) from a window whose halves agree: a window that still drifts (medians of its
    halves more than DRIFT_LIMIT apart, e.g. a per-call time still falling after the warm-up's single-call check
    passed) counts as warm-up and is timed again, up to MAX_WINDOWS windows while the windows fit in budget_s.
    ``contended(samples)``: True for a window that ran slower than its CPU promised (see _pinned_samples); such a
    window is timed again too, after ``before_retry()``. Returns (samples of the last window, windows timed, that
    window's drift)."""
    t0 = time.perf_counter()
    windows = 0
    while True:
        windows += 1
        samples = [timer.time(call, inner) * 1000.0 for _ in range(repeats)]
        drift = _drift(samples)
        slow = contended is not None and contended(samples)
        spent = time.perf_counter() - t0
        done = (drift <= DRIFT_LIMIT and not slow) or windows >= MAX_WINDOWS or \
            spent * (windows + 1) / windows > budget_s
        if agree is not None:  # torchrun ranks time the same windows (their collectives pair up)
            done = agree.agree_all(done)
        if done:
            return samples, windows, drift
        if slow and before_retry is not None:
            before_retry()


CONTENDED = 1.15  # a window's median this far above its CPU's probe: the CPU got busier after it was chosen


def _pinned_samples(timer: _Timer, call: Any, inner: int, repeats: int, *, pin: bool,
                    agree: Any = None) -> tuple[list[float], int, float, dict[str, Any] | None]:
    """_steady_samples, on the fastest CPU when ``pin``: the probe chooses a CPU; a window whose median came out
    more than CONTENDED x that CPU's probe (on the H200 VM a vCPU's contention changes within a second) is timed
    again after a new probe, within the same MAX_WINDOWS. Returns _steady_samples' triple and the pinning record
    (the CPU, its probe, how many times it was chosen again) or None when nothing was pinned."""
    if not pin:
        return (*_steady_samples(timer, call, inner, repeats, budget_s=WARMUP_BUDGET_S, agree=agree), None)
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    state: dict[str, Any] = {"pinned": _pin_fastest_cpu(timer, call, inner, allowed), "repins": 0}

    def contended(samples: list[float]) -> bool:
        p = state["pinned"]
        if p is None:
            return False
        promised = p["cpu_probe"][str(p["cpu"])]
        return bool(promised > 0 and _quantiles(samples)["median"] > CONTENDED * promised)

    def again() -> None:
        state["repins"] += 1
        state["pinned"] = _pin_fastest_cpu(timer, call, inner, allowed) or state["pinned"]

    samples, windows, drift = _steady_samples(timer, call, inner, repeats, budget_s=WARMUP_BUDGET_S, agree=agree,
                                              contended=contended, before_retry=again)
    pinned = state["pinned"]
    if pinned is not None and state["repins"]:
        pinned = {**pinned, "cpu_repins": state["repins"]}
    return samples, windows, drift, pinned


def _pin_fastest_cpu(timer: _Timer, call: Any, inner: int,
                     cpus: list[int] | None = None) -> dict[str, Any] | None:
    """Pin this (the launching) thread to the CPU where the model's calls ran fastest, and say so.

    Why: on a shared VM (the H200 machine here: 16 vCPUs) the vCPUs differ in speed by up to 2x at any moment,
    from contention on the host, and a process stays on the vCPU it started on; a launch-bound model's median
    then depends on where the scheduler happened to put the process (benchmarks/launch_spread.py measured it:
    one process, the same model, 31-62 us eager across its 16 CPUs). Every process timing on the least-contended
    CPU measures the code, not the neighbours. Only the calling thread moves (threads started later inherit
    it); a GPU-bound model reads the same on every CPU. None when there is no choice to make."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        cpus = cpus or sorted(os.sched_getaffinity(0))  # a new probe passes the CPUs the process started with
    except OSError:
        return None
    if len(cpus) < 2:
        return None
    probe: dict[int, float] = {}
    try:
        for cpu in cpus:
            os.sched_setaffinity(0, {cpu})
            call()  # the first call after a move runs on cold caches
            # median of 3: one lucky sample (a whole sample inside one time slice of a shared CPU) decides nothing
            probe[cpu] = sorted(timer.time(call, inner) for _ in range(3))[1] * 1000.0
        best = min(probe, key=lambda c: probe[c])
        os.sched_setaffinity(0, {best})
    except OSError:  # a CPU went offline or the cgroup changed: time where the scheduler puts us
        os.sched_setaffinity(0, set(cpus))
        return None
    return {"cpu": best, "cpu_probe": {str(c): round(t, 6) for c, t in probe.items()}}


def _shutdown_compile_workers(torch: Any) -> bool:
    """Stop Inductor's compile-worker processes (they restart on the next compile). False when this torch has no
    such call or it fails: measuring goes on either way."""
    try:
        from torch._inductor import async_compile

        stop = getattr(async_compile, "shutdown_compile_workers", None)
        if stop is None:
            return False
        stop()
        return True
    except Exception:
        return False


# A timed sample lasts about this long. Each sample of k back-to-back calls between two CUDA events pays a fixed
# cost c once (the synchronize's wake-up, the first launch after it, the last kernel's tail), so it reads
# t + c/k per call. On the H200 (benchmarks/sample_length.py, one process, k interleaved) the seed sample read
# default mode at 173/145/131/126/125 µs per call for k = 1/3/10/30/100 (c ~ 48 µs) and eager at
# 79/63/59/58/57 µs (c ~ 22 µs): a 1 ms sample reads 2-5% high, a 5 ms one under 1%.
SAMPLE_S = 5e-3


def calls_per_sample(per_call_s: float) -> int:
    """Back-to-back calls in one timed sample, so that it lasts about SAMPLE_S (1 to 1000)."""
    return max(1, min(1000, int(SAMPLE_S / max(per_call_s, 1e-7))))


def _batched_estimate(timer: _Timer, call: Any, single_s: float, agree: Any = None) -> float:
    """Seconds per call when calls run back to back, as the timed samples run them.

    The warm-up times single calls, each ending in a synchronize: on a GPU that adds c (see SAMPLE_S) to every
    call, and a launch-bound model read 1.2-3x its back-to-back time that way on the H200 (default mode: 83-333 µs
    single against 64-122 µs per call in the samples), so samples counted from it came out 0.3-0.9 of their
    intended length, each carrying c over fewer calls. Here samples of the estimated length are timed (median of
    3) and the count recomputed until it stops growing (at most 3 rounds, ~50 ms). A call of 2 x SAMPLE_S or more
    needs no batch: one call per sample either way.
    ``agree``: a torchrun group; its ranks make the same calls (their collectives pair up), so each round's count
    and the decision to stop are agreed, on the slowest rank's time."""

    def agreed(x: float) -> float:
        return x if agree is None else float(agree.agree_max(x))

    estimate = agreed(single_s)
    if estimate >= 2 * SAMPLE_S:
        return estimate
    for _ in range(3):
        n = calls_per_sample(estimate)
        estimate = agreed(sorted(timer.time(call, n) for _ in range(3))[1])
        if calls_per_sample(estimate) <= n * 1.25:  # the same on every rank: the estimate is agreed
            break
    return estimate


def _warm_up(timer: _Timer, call: Any, *, min_calls: int, max_seconds: float, min_seconds: float = 0.0,
             agree: Any = None) -> dict[str, Any]:
    """Run for at least min_seconds and min_calls, until per-call time is stable (last 5 within 10% of their
    median), or until the time budget is spent.
    ``agree``: a torchrun group, whose ranks stop together (every rank stable, or one out of time)."""
    times: list[float] = []
    t_start = time.perf_counter()
    while True:
        times.append(timer.time(call, 1))
        stable = False
        if len(times) >= max(min_calls, 5) and time.perf_counter() - t_start >= min_seconds:
            last = sorted(times[-5:])
            med = last[2]
            stable = med > 0 and (last[-1] - last[0]) / med < 0.10
        over = time.perf_counter() - t_start > max_seconds and len(times) >= 3
        if agree is not None:
            if agree.agree_stop(stable, over):
                break
        elif stable or over:
            break
    return {"calls": len(times), "estimate_s": sorted(times[-5:])[len(times[-5:]) // 2]}


def _module_ranges(torch: Any, model: Any) -> list[Any]:
    """Wrap every submodule's forward in a profiler range ``kernelscope.module: <path>`` (eager mode's module
    provenance: the ops a Linear runs lie inside its range). Returns the hook handles; the caller removes them.
    The root module gets no range (its path is empty: every op lies inside it)."""
    from torch.autograd.profiler import record_function

    if not isinstance(model, torch.nn.Module) or isinstance(model, torch.jit.ScriptModule):
        return []  # a ScriptModule refuses forward hooks: no module provenance, the profile itself still runs
    handles: list[Any] = []
    for path, module in model.named_modules():
        if not path or isinstance(module, torch.jit.ScriptModule):
            continue
        open_ranges: list[Any] = []  # a stack: a module called inside its own forward nests

        def pre(_mod: Any, _args: Any, *, name: str = MODULE_RANGE_PREFIX + path,
                stack: list[Any] = open_ranges) -> None:
            rf = record_function(name)
            rf.__enter__()
            stack.append(rf)

        def post(_mod: Any, _args: Any, _out: Any, *, stack: list[Any] = open_ranges) -> None:
            if stack:
                stack.pop().__exit__(None, None, None)

        handles.append(module.register_forward_pre_hook(pre))
        # always_call: a forward that raises still closes its range
        handles.append(module.register_forward_hook(post, always_call=True))
    return handles


def _record_provenance(torch: Any, codes: list[str], out: dict[str, dict[str, Any]]) -> Any:
    """Keep Inductor's provenance of each graph it compiles: torch calls ``dump_inductor_provenance_info()``
    once per graph, after saving the graph's output code (torch/_inductor/compile_fx.py), when
    ``trace.provenance_tracking_level`` is on. What it returns (kernel:handle <-> post-grad nodes <-> pre-grad
    nodes) and the kernels' stack traces are stored under the code just saved. Returns the function that
    restores torch's own (call it in ``finally``); a torch without provenance gets a no-op."""
    try:
        import torch._inductor.debug as dbg
    except ImportError:
        return lambda: None
    orig = getattr(dbg, "dump_inductor_provenance_info", None)
    if orig is None:
        return lambda: None

    def dump() -> dict[str, Any]:
        mapping = orig()
        if codes and isinstance(mapping, dict):
            stacks = getattr(dbg, "_inductor_kernel_stack_trace", None)
            try:  # plain JSON, or nothing: provenance is evidence, never a reason to fail a compile
                out[codes[-1]] = json.loads(json.dumps({"mapping": mapping, "stack_traces": dict(stacks or {})}))
            except (TypeError, ValueError):
                pass
        return mapping

    dbg.dump_inductor_provenance_info = dump

    def restore() -> None:
        dbg.dump_inductor_provenance_info = orig

    return restore


class _EagerRanges:
    """Eager mode's source lines and dataflow, while the profiler runs (a TorchFunctionMode: no model code
    changes; profiling only, timing ran before without it):

    * every GEMM-class torch function (``F.linear``, ``torch.matmul``, ``@``, ``F.conv2d``, ...) runs inside a
      range ``kernelscope.source: <file>:<line>`` naming the first frame outside torch and kernelscope (the
      user's line that called it: ``self.gate_proj(x)`` or ``q @ k.transpose(-2, -1)``);
    * every torch function that is GEMM-class or reads a tensor such a call made, directly or through later
      calls, runs inside ``kernelscope.flow: #<serial> in=<serials>``: its own serial and those of the calls that
      made its tensor inputs. Its outputs carry the serial (an attribute on the tensor, gone with it: no
      address or id() that a later tensor could reuse), so the eager path follows a GEMM's output to the ops
      that read it (``silu(gate(x)) * up(x)``: the mul reads both GEMMs' chains) instead of guessing from call
      order. Tensor metadata calls (``size``, ``dim``, ...) run no kernel and get no range."""

    ATTR = "_kernelscope_flow"
    _META = frozenset({"size", "dim", "stride", "numel", "__get__", "__len__", "is_contiguous", "element_size",
                       "data_ptr", "storage_offset", "__format__", "__repr__", "__bool__", "is_floating_point",
                       "__hash__", "__eq__"})

    @staticmethod
    def make(torch: Any) -> Any:
        from torch.autograd.profiler import record_function
        from torch.overrides import TorchFunctionMode

        funcs = _EagerRanges._gemm_functions(torch)
        caller = _EagerRanges._user_line(torch)
        Tensor = torch.Tensor
        meta = _EagerRanges._META
        counter = [0]

        class Mode(TorchFunctionMode):
            def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
                kwargs = kwargs or {}
                gemm = func in funcs
                if not gemm and getattr(func, "__name__", "") in meta:
                    return func(*args, **kwargs)
                ins: set[int] = set()
                _flow_serials(Tensor, args, ins)
                if kwargs:
                    _flow_serials(Tensor, kwargs, ins)
                if not gemm and not ins:
                    return func(*args, **kwargs)
                counter[0] += 1
                serial = counter[0]
                flow = f"{FLOW_RANGE_PREFIX}#{serial} in={','.join(map(str, sorted(ins)))}"
                where = caller() if gemm else None
                with record_function(flow):
                    if where is None:
                        out = func(*args, **kwargs)
                    else:
                        with record_function(SOURCE_RANGE_PREFIX + where):
                            out = func(*args, **kwargs)
                _tag_flow(Tensor, out, serial)
                return out

        return Mode()

    @staticmethod
    def _gemm_functions(torch: Any) -> set[Any]:
        """The GEMM-class torch functions (and Tensor methods) this torch has."""
        import torch.nn.functional as F

        names = {(torch, "matmul"), (torch, "mm"), (torch, "bmm"), (torch, "addmm"), (torch, "baddbmm"),
                 (torch, "addbmm"), (torch, "einsum"), (torch, "tensordot"), (torch.Tensor, "matmul"),
                 (torch.Tensor, "__matmul__"), (torch.Tensor, "__rmatmul__"), (torch.Tensor, "mm"),
                 (torch.Tensor, "bmm"), (torch.Tensor, "addmm"), (torch.Tensor, "baddbmm"), (F, "linear"),
                 (F, "bilinear"), (F, "conv1d"), (F, "conv2d"), (F, "conv3d"), (F, "conv_transpose1d"),
                 (F, "conv_transpose2d"), (F, "conv_transpose3d")}
        return {getattr(owner, n) for owner, n in names if hasattr(owner, n)}

    @staticmethod
    def _user_line(torch: Any) -> Callable[[], str | None]:
        """A function that, called from ``__torch_function__``, names the first frame outside torch and
        kernelscope (``<file>:<line>``): the user's line that made the call."""
        skip = tuple(str(Path(m.__file__).resolve().parent) for m in (torch, sys.modules["kernelscope"]))
        theirs: dict[str, bool] = {}  # file -> inside torch or kernelscope (realpath once per file)

        def caller() -> str | None:
            f = sys._getframe(2)
            while f is not None:
                path = f.f_code.co_filename
                inside = theirs.get(path)
                if inside is None:
                    inside = theirs[path] = path.startswith("<") or os.path.realpath(path).startswith(skip)
                if not inside:
                    return f"{path}:{f.f_lineno}"
                f = f.f_back
            return None

        return caller


def _flow_serials(tensor: type, obj: Any, out: set[int], depth: int = 0) -> None:
    """The flow serials the tensors in ``obj`` (a call's args, in lists, tuples and dicts two deep) carry."""
    if isinstance(obj, tensor):
        s = getattr(obj, _EagerRanges.ATTR, None)
        if s is not None:
            out.add(s)
    elif depth < 2 and isinstance(obj, (list, tuple)):
        for o in obj:
            _flow_serials(tensor, o, out, depth + 1)
    elif depth < 2 and isinstance(obj, dict):
        for o in obj.values():
            _flow_serials(tensor, o, out, depth + 1)


def _tag_flow(tensor: type, obj: Any, serial: int, depth: int = 0) -> None:
    """Mark the tensors a call returned with its serial (an attribute: gone with the tensor)."""
    if isinstance(obj, tensor):
        try:
            setattr(obj, _EagerRanges.ATTR, serial)
        except (AttributeError, RuntimeError, TypeError):  # a tensor subclass that takes no attributes
            pass
    elif depth < 2 and isinstance(obj, (list, tuple)):
        for o in obj:
            _tag_flow(tensor, o, serial, depth + 1)


def _announce_autotune() -> Callable[[], None]:
    """Report each max-autotune benchmark as a progress stage ("autotuning mm (24 choices)"): it can be most
    of a compile's minutes. Returns the function that restores torch's own (call it in ``finally``); a torch
    without the hook gets a no-op and just shows "compile"."""
    try:
        from torch._inductor.select_algorithm import AlgorithmSelectorCache
    except ImportError:
        return lambda: None
    call = AlgorithmSelectorCache.__call__
    if getattr(call, "_kernelscope", False):
        return lambda: None  # already announcing (an enclosing compile put it on and takes it off)

    def announced(self: Any, name: Any, choices: Any, *args: Any, **kwargs: Any) -> Any:
        n = len(choices) if hasattr(choices, "__len__") else "?"
        progress(f"autotuning {name} ({n} choices)")
        try:
            return call(self, name, choices, *args, **kwargs)
        finally:
            progress("compiling (first call)")

    announced._kernelscope = True  # type: ignore[attr-defined]
    AlgorithmSelectorCache.__call__ = announced  # type: ignore[method-assign]

    def restore() -> None:
        AlgorithmSelectorCache.__call__ = call  # type: ignore[method-assign]

    return restore


def _restore_env(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def _trace_name(group: Any) -> str:
    if group is None:
        return WORKER_NAME
    from kernelscope.capture.dist import trace_worker_name

    return trace_worker_name(group.rank)


def _profile(torch: Any, call: Any, timer: _Timer, device: str, spec: dict[str, Any], *,
             modules: Any = None, worker_name: str = WORKER_NAME) -> str:
    """Profile ``steps`` iterations into a TensorBoard trace; ``modules``: the eager model, whose submodules get
    ``kernelscope.module:`` ranges while the profiler runs (timing ran before, without them)."""
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    tb_dir = Path(spec["tb_dir"])
    tb_dir.mkdir(parents=True, exist_ok=True)
    steps = spec.get("profile_steps", 3)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    handler = tensorboard_trace_handler(str(tb_dir), worker_name=worker_name, use_gzip=True)
    # repeat=1: with the default repeat=0 the schedule starts a new cycle and the last, partial one is what
    # gets written.
    hooks = _module_ranges(torch, modules) if modules is not None else []
    sources = _EagerRanges.make(torch) if modules is not None else None
    try:
        with (sources if sources is not None else contextlib.nullcontext()), profile(
                activities=activities, record_shapes=True,
                schedule=schedule(wait=1, warmup=1, active=steps, repeat=1), on_trace_ready=handler) as prof:
            for i in range(steps + 2):
                if i == 2:  # the first active step: metadata added before the profiler starts is dropped
                    # Kineto records no torch version; `kernelscope analyze` of this trace alone shows it.
                    prof.add_metadata("pytorch_version", torch.__version__)
                call()
                timer.sync()  # one iteration's kernels stay inside its ProfilerStep window
                prof.step()
    finally:
        for h in hooks:
            h.remove()
    files = sorted(tb_dir.glob(f"{worker_name}.*.pt.trace.json.gz"))
    if not files:
        raise RuntimeError("torch.profiler wrote no trace file")
    _scrub_host_name(files[-1])
    return str(files[-1].relative_to(spec["out_dir"]))


_HOST_NAME = re.compile(rb'"(host_name|hostname)"(\s*):(\s*)"[^"]*"')


def _scrub_host_name(path: Path) -> None:
    """Kineto writes the machine's hostname into the trace's metadata ("host_name"); traces get attached to
    public PRs, so it is replaced by the worker name, the same policy as the file names."""
    import gzip

    raw = gzip.decompress(path.read_bytes())
    clean = _HOST_NAME.sub(lambda m: b'"host_name"' + m.group(2) + b":" + m.group(3) + b'"' + WORKER_NAME.encode()
                           + b'"', raw)
    if clean != raw:
        atomic_write_bytes(path, gzip.compress(clean))


def _root_cause(exc: BaseException) -> BaseException:
    # Dynamo wraps the user's error ("RuntimeError when making fake tensor call"); the innermost one says why.
    seen = {id(exc)}
    while True:
        nxt = exc.__cause__ or exc.__context__
        if nxt is None or id(nxt) in seen:
            return exc
        seen.add(id(nxt))
        exc = nxt


def _classify(exc: BaseException, rec: dict[str, Any]) -> None:
    """Record a failure in the point's capture record: status, error kind, one-line error with advice."""
    if isinstance(exc, Unavailable):
        rec["status"], rec["error"], rec["error_kind"] = "unavailable", str(exc), "unavailable"
        return
    rec["status"] = "failed"
    if isinstance(exc, ModelFileError):
        # "forward": the model ran and raised (a run failure); "model": the file breaks the protocol (usage).
        forward = getattr(exc, "stage", "").startswith("the model's forward")
        rec["error"], rec["error_kind"] = exc.message, "forward" if forward else "model"
        detail = getattr(exc, "detail", "") or traceback.format_exc()
        print(detail, file=sys.stderr)
        return
    if isinstance(exc, KernelscopeError):
        rec["error"], rec["error_kind"] = exc.message, "usage" if exc.exit_code == 2 else "run"
        print(traceback.format_exc(), file=sys.stderr)
        return
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


def _new_record(spec: dict[str, Any], point: dict[str, Any]) -> dict[str, Any]:
    rec: dict[str, Any] = {"schema": CAPTURE_SCHEMA, "mode": spec["mode"]["name"], "status": "failed", "error": "",
                           "error_kind": "", "notes": []}
    if spec.get("points"):
        rec["point"] = {"index": point.get("index", 0), "label": point.get("label", ""),
                        "params": point.get("params", {})}
    return rec


def _die_with_parent() -> None:
    """Linux: get SIGKILL when the kernelscope process dies (even by SIGKILL), so no worker outlives the run.

    The worker runs in its own session (so a timeout can kill its whole group), which also means a terminal's
    Ctrl-C or a killed parent would otherwise leave it running, compiling, holding GPU memory."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() == 1:  # the parent died before prctl took effect
            os._exit(1)
    except (OSError, AttributeError):
        pass


def _run_points(setup: _Setup, spec: dict[str, Any], points: list[dict[str, Any]],
                recs: list[dict[str, Any]]) -> None:
    stop = None
    for point, rec in zip(points, recs):
        if stop is not None:
            rec.update(stop)
            continue
        p0 = time.perf_counter()
        try:
            run_point(setup, spec, point, rec)
        except BaseException as exc:  # noqa: BLE001 - one point's failure (an OOM at the largest shape)
            _classify(exc, rec)
            rec["failed_at"] = time.time()  # torchrun ranks: the first to fail is the cause, the others followed
            if isinstance(exc, KeyboardInterrupt):
                stop = {"status": "interrupted", "error": "interrupted before this point ran",
                        "error_kind": "interrupted"}
            elif rec.get("error_kind") in ("model", "usage"):
                stop = {"status": "failed", "error": f"not run: {rec['error']}", "error_kind": "skipped"}
        rec["wall_s"] = time.perf_counter() - p0
        # Written as each point finishes: a timeout later on keeps the points already measured.
        write_capture(Path(point["mode_dir"]) / CAPTURE_FILE, rec)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    _die_with_parent()
    if argv and argv[0] == "--list-points":
        # The parent asks what get_input_sweep() returns: JSON on the last stdout line, errors as JSON too.
        spec = json.loads(Path(argv[1]).read_text())
        try:
            print("@@points " + json.dumps({"points": list_points(spec)}), flush=True)
        except KernelscopeError as exc:
            print("@@points " + json.dumps({"error": exc.message, "exit_code": exc.exit_code}), flush=True)
        return 0
    spec = json.loads(Path(argv[0]).read_text())
    points = spec_points(spec)
    rank = None
    if spec.get("distributed"):
        # A torchrun rank: its own folders and log, before torch is imported (issue 17).
        global _QUIET
        from kernelscope.capture.dist import prepare_rank

        rank = prepare_rank(spec, points)
        _QUIET = rank != 0
    recs = [_new_record(spec, p) for p in points]
    if rank is not None:
        for rec in recs:
            rec.update(rank=rank, log=spec["rank_log"])
    t0 = time.perf_counter()
    setup: _Setup | None = None
    try:
        setup = _Setup(spec, recs[0])
    except BaseException as exc:  # noqa: BLE001 - a failure of the mode is its result, at every point
        _classify(exc, recs[0])
        for rec in recs[1:]:
            rec.update({k: recs[0][k] for k in ("status", "error", "error_kind") if k in recs[0]})
    if setup is not None:
        for rec in recs[1:]:
            rec.update({k: recs[0][k] for k in ("device", "environment", "config", "distributed") if k in recs[0]})
            rec["notes"] = list(recs[0]["notes"])
        try:
            _run_points(setup, spec, points, recs)
        finally:
            setup.close()
    for point, rec in zip(points, recs):
        rec.setdefault("wall_s", time.perf_counter() - t0)
        write_capture(Path(point["mode_dir"]) / CAPTURE_FILE, rec)
    if rank is not None and any(r.get("status") != "ok" for r in recs):
        return 1  # torchrun stops the other ranks, which would wait in a collective for this one
    return 0


if __name__ == "__main__":
    sys.exit(main())
