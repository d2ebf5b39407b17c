"""The worker's environment record (versions, GPU or CPU model, the GEMM backends' availability) and the checks
the mode's configuration makes with it (``backend_available``, ``cute_dsl_arch``).

No torch import here (the caller passes its torch): a timing-only process reads a cheaper record (``full=False``)
and must not import Inductor or triton to do it (the CUTLASS check reads Inductor's setting only when Inductor is
already loaded).
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path
from typing import Any


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
