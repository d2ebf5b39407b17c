"""The result: one JSON-ready object that every renderer reads (html, md, json, check, compare).

Schema ``kernelscope.result/1``. Renderers never re-derive facts: whatever a report shows is in here.
Dataclasses are frozen with slots; ``to_json`` / ``from_json`` round-trip them through plain dicts.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import typing
from dataclasses import dataclass, field
from typing import Any

SCHEMA = "kernelscope.result/1"


class Status(str, enum.Enum):
    OK = "ok"
    FAILED = "failed"
    TIMEOUT = "timeout"
    UNAVAILABLE = "unavailable"
    INTERRUPTED = "interrupted"


class Category(str, enum.Enum):
    GEMM = "gemm"
    POINTWISE = "pointwise"
    REDUCTION = "reduction"
    ATTENTION = "attention"
    MEMCPY = "memcpy"
    MEMSET = "memset"
    COMMUNICATION = "communication"
    OTHER = "other"


class Verdict(str, enum.Enum):
    FUSED = "fused"
    PARTIAL = "partial"
    UNFUSED = "unfused"
    NONE = "none"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class KernelStat:
    """One distinct kernel (or CPU kernel / memop) of a mode, aggregated per iteration."""

    name: str
    category: str
    backend: str
    calls_per_iter: float
    time_us_per_iter: float
    is_memop: bool = False


@dataclass(frozen=True, slots=True)
class LatencyStats:
    median: float
    iqr: float
    q1: float
    q3: float
    min: float
    mean: float
    samples: tuple[float, ...] = ()
    timer: str = ""  # "cuda_events" or "perf_counter"


@dataclass(frozen=True, slots=True)
class Iterations:
    """How the trace was cut into iterations, and whether every iteration launched the same kernels."""

    count: int
    method: str  # "profiler_steps" | "compiled_graph_calls" | "top_level_ops" | "given" | "whole_trace"
    consistent: bool
    kernels_per_step: tuple[int, ...] = ()
    note: str = ""


@dataclass(frozen=True, slots=True)
class GemmEpilogue:
    """Per-GEMM epilogue-fusion verdict. Every verdict carries its evidence."""

    id: str
    kernels: tuple[str, ...]
    backend: str
    m: int | None
    n: int | None
    k: int | None
    dtype: str | None
    time_us_per_iter: float
    op: str = ""  # aten op: mm, addmm, bmm, ...
    epilogue: tuple[str, ...] = ()
    fused: tuple[str, ...] = ()
    unfused: tuple[str, ...] = ()
    unfused_kernels: tuple[str, ...] = ()
    prologue: tuple[str, ...] = ()
    verdict: str = Verdict.UNKNOWN.value
    why_not: str = ""
    evidence: tuple[str, ...] = ()
    confidence: str = "code"  # "code" (from Inductor output code + trace) or "trace-only" (weaker)


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One kernel of one iteration, for the report's timeline strip; times relative to the iteration start."""

    name: str
    category: str
    start_us: float
    dur_us: float


@dataclass(frozen=True, slots=True)
class ModeResult:
    name: str
    status: str
    error: str = ""
    error_kind: str = ""
    device: str = ""
    first_call_s: float | None = None
    latency_ms: LatencyStats | None = None
    peak_memory_bytes: int | None = None
    memory: dict[str, Any] = field(default_factory=dict)
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    numerics: dict[str, Any] = field(default_factory=dict)
    kernels_per_iter: float | None = None
    memops_per_iter: float | None = None
    kernels_by_category: dict[str, float] = field(default_factory=dict)
    kernels_by_backend: dict[str, float] = field(default_factory=dict)
    gpu_time_us_per_iter: float | None = None
    kernels: tuple[KernelStat, ...] = ()
    gemms: tuple[GemmEpilogue, ...] = ()
    gemm_summary: str = ""
    iterations: Iterations | None = None
    trace: str | None = None
    inductor_code: tuple[str, ...] = ()
    log: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    timeline: tuple[TimelineEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class RunResult:
    schema: str
    tool_version: str
    created: str
    command: str
    model: str
    device: str
    dtype: str
    environment: dict[str, Any]
    modes: tuple[ModeResult, ...]
    settings: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def mode(self, name: str) -> ModeResult | None:
        return next((m for m in self.modes if m.name == name), None)


def to_json(obj: Any) -> Any:
    """Dataclasses/enums/tuples -> plain JSON types (dicts keep their order)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_json(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, (list, tuple)):
        return [to_json(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_json(v) for k, v in obj.items()}
    if isinstance(obj, float) and (math.isnan(obj) or math.isinf(obj)):  # not JSON
        return None
    return obj


def _from(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(tp)
    if origin is typing.Union or (origin is not None and str(origin) == "types.UnionType") or _is_union(tp):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _from(args[0], value) if len(args) == 1 else value
    if origin is tuple:
        (inner, *_rest) = typing.get_args(tp) or (Any,)
        return tuple(_from(inner, v) for v in value)
    if dataclasses.is_dataclass(tp):
        return _dataclass_from(tp, value)
    return value


def _is_union(tp: Any) -> bool:
    import types

    return isinstance(tp, types.UnionType)


_HINTS: dict[type, dict[str, Any]] = {}


def _dataclass_from(cls: type, data: dict[str, Any]) -> Any:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name in data:
            kwargs[f.name] = _from(hints[f.name], data[f.name])
    return cls(**kwargs)


def run_from_json(data: dict[str, Any]) -> RunResult:
    """Rebuild a RunResult from result.json's dict (unknown keys are ignored, for forward compatibility)."""
    return _dataclass_from(RunResult, data)
