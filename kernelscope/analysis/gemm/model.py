"""The records the GEMM paths share: one epilogue op, one GEMM found in one iteration, the mode configuration.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kernelscope import vocab
from kernelscope.result import Evidence, EvidenceRule, FusionBenchmark, GemmOp, Verdict, WhyNot

# The op vocabulary lives in kernelscope/vocab.py (one table for every path and module).
GEMM_OPS = vocab.GEMM_OPS


BIAS_OPS = vocab.BIAS_OPS


REDUCTION_OPS = vocab.BOUNDARY_OPS  # everything that ends an epilogue chain without being a GEMM


VIEW_OPS = vocab.VIEW_OPS


CAST_OPS = vocab.CAST_OPS


VENDOR_BACKENDS = vocab.VENDOR_BACKENDS


_FUSIBLE_BACKENDS = vocab.FUSIBLE_GEMM_BACKENDS


_CPP_GEMM_NAME = re.compile(r"gemm_m(\d+)n(\d+)k(\d+)")


_VERDICT_ORDER = (Verdict.FUSED, Verdict.PARTIAL, Verdict.UNFUSED, Verdict.NONE, Verdict.UNKNOWN)


@dataclass(frozen=True, slots=True)
class EpilogueOp:
    """One op of a GEMM's epilogue chain and where it ran."""

    label: str
    fused: bool
    kernel: str | None  # the kernel it ran in (trace name when matched, else the code name)
    evidence: Evidence
    # the kernel instances it ran in this iteration: ((name, ts), ...) and their GPU (CPU-kernel) time
    instances: tuple[tuple[str, float], ...] = ()
    time_us: float | None = None
    in_gemm: bool = False  # ran in another GEMM's template (SwiGLU's silu in up_proj's epilogue)


@dataclass(frozen=True, slots=True)
class _Config:
    mode: str
    compiled: bool
    max_autotune: bool | None  # None: not said (kernelscope analyze on a bare trace)
    gemm_backends: tuple[str, ...] | None
    device: str
    capability: tuple[int, int] | None
    freezing: bool

    @staticmethod
    def of(mode: str, cfg: Mapping[str, Any], device: str) -> _Config:
        backends = cfg.get("gemm_backends")
        if isinstance(backends, str):
            backends = [b for b in backends.split(",") if b.strip()]
        cap = cfg.get("capability")
        capability = None
        if isinstance(cap, str) and re.match(r"^\d+\.\d+$", cap.strip()):
            major, minor = cap.strip().split(".")
            capability = (int(major), int(minor))
        elif isinstance(cap, (tuple, list)) and len(cap) == 2:
            capability = (int(cap[0]), int(cap[1]))
        return _Config(
            mode=mode,
            compiled=bool(cfg.get("compiled", mode not in ("eager", ""))),
            max_autotune=bool(cfg["max_autotune"]) if cfg.get("max_autotune") is not None else None,
            gemm_backends=tuple(str(b).strip().upper() for b in backends) if backends else None,
            device=str(cfg.get("device") or device),
            capability=capability,
            freezing=bool(cfg.get("freezing", False)),
        )

    @property
    def sm(self) -> str | None:
        return f"sm{self.capability[0]}{self.capability[1]}" if self.capability else None


@dataclass(frozen=True, slots=True)
class _Found:
    key: tuple[Any, ...]  # identity across iterations
    op: str
    kernels: tuple[str, ...]
    backend: str
    m: int | None
    n: int | None
    k: int | None
    dtype: str | None
    time_us: float | None  # None: not seen in the trace
    ops: tuple[EpilogueOp, ...]
    prologue: tuple[str, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    why_not: tuple[WhyNot, ...] = ()
    confidence: str = "code"
    order: float = 0.0  # launch time, to sort GEMMs in the order they ran
    opaque: bool = False  # trace-only: the GEMM kernel's name cannot say what it fused
    kind: str = "gemm"
    batch: int | None = None
    source_nodes: tuple[str, ...] = ()  # Dynamo source nodes (compiled) for the module path
    module: str = ""  # module path (eager: the enclosing kernelscope.module range)
    source: str = ""
    graph: int = 0  # index of the compiled graph (output-code module) it belongs to
    debug_handle: str | None = None  # Inductor's provenance handle of its call site ("extern_kernels.addmm:3")
    op_kernels: tuple[tuple[str, tuple[str, ...]], ...] = ()  # unfused op -> kernels it ran in
    fusion_benchmarks: tuple[FusionBenchmark, ...] = ()  # Inductor's epilogue-fusion benchmarks for it (log)
    attributed: bool = True  # compiled: the call site's launch was found in the trace
    site: str = ""  # compiled: the call site ("extern_kernels.convolution") and where it is ("graph_0.py:1574")
    site_where: str = ""
    inside: str = ""  # compiled: the op of the code's call it ran inside (a custom op), as the profiler names it


@dataclass(frozen=True, slots=True)
class _Counted:
    """One GEMM-class op an iteration executed, for the coverage self-check: attributed to a kernel or not."""

    op: GemmOp  # what it is: its name, kind ("mm", "convolution"), module, shape, and why it was not attributed
    attributed: bool
    via_op: bool = False  # eager: its kernel's name alone did not say GEMM; the op that launched it did
    decomposed_from: str = ""  # the non-GEMM op it is part of (eager SDPA's math path runs two bmm's)


def split_k_evidence() -> Evidence:
    """cuBLASLt's split-K reduce kernel belongs to the GEMM launched before it."""
    return Evidence.of(EvidenceRule.SPLIT_K, kernel=f"cublasLt::{vocab.SPLIT_K_REDUCE}")


def _verdict_of(f: _Found) -> str:
    if f.opaque and not any(o.fused for o in f.ops):
        # Nothing after it and a name that lists no ops: it may or may not have fused something.
        return Verdict.UNKNOWN.value if not f.ops else _verdict(f.ops)
    return _verdict(f.ops)


def short_kernel_name(name: str, limit: int = 90) -> str:
    """A readable name for text: C++ kernel names run to thousands of characters of template arguments."""
    n = name.removeprefix("void ")
    if len(n) <= limit:
        return n
    depth = 0
    for i, ch in enumerate(n):  # drop the parameter list (the first "(" outside template brackets)
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            n = n[:i]
            break
    if len(n) <= limit:
        return n
    head, _, rest = n.partition("<")
    m = re.search(r"\w*(?:CUDAKernelImpl|Functor|launch_\w+)", rest) or re.search(r"[A-Za-z_]\w+", rest)
    inner = m.group(0) if m else ""
    if inner in (
        "int",
        "float",
        "double",
        "long",
        "bool",
        "char",
        "unsigned",
        "half",
        "__half",
        "__nv_bfloat16",
    ):
        inner = ""
    text = f"{head}<{inner}...>" if inner else f"{head}<...>"
    return text if len(text) <= limit + 20 else text[: limit + 17] + "..."


def _verdict(ops: Sequence[EpilogueOp]) -> str:
    if not ops:
        return Verdict.NONE.value
    fused = sum(1 for o in ops if o.fused)
    if fused == len(ops):
        return Verdict.FUSED.value
    return Verdict.PARTIAL.value if fused else Verdict.UNFUSED.value


def _int(v: object) -> int | None:
    return v if isinstance(v, int) else None


def _norm_op(op: str) -> str:
    return {"bias_addmm": "addmm"}.get(op, op)

