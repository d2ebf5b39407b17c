"""The capture record: what one mode's worker writes (``capture.json``) and everything after capture reads.

Schema ``kernelscope.capture/1``. This module is the only one that turns a capture.json into Python and back:
the worker writes through ``write_capture``, the runner and the commands merge typed records, analysis reads
their attributes. Standard library only and no torch: capture/interpreter.py ships it with the worker to
another interpreter.

Three generations of files are in tests/data (before ``--processes``, before the float64 reference, today's);
a field an older worker did not write reads as its default. The parts the result copies (``memory``,
``numerics``, ``compile``, ``dynamo``, ``config``, ``environment``: kernelscope/result.py has a typed record of the
same fields for each) keep the difference between a field written as null and one not written at all: their
fields default to ``UNSET`` and ``to_json`` leaves those out, so re-writing a record (the runner merging the warm
process or the later processes) never invents a key.
"""

from __future__ import annotations

import dataclasses
import json
import os
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelscope.errors import CaptureFileError
from kernelscope.files import atomic_write_json

CAPTURE_SCHEMA = "kernelscope.capture/1"
CAPTURE_FILE = "capture.json"
# Beside each compiled graph's output code (code/graph_0.py -> code/graph_0.modules.json), the module that called
# each node of the graph Dynamo traced (capture/callers.py): ``{"frame": path | null, "nodes": {node name:
# [innermost module path, ..., frame path]}}``, paths as ``get_submodule`` on the user's model finds them ("" is
# the model), node names as the compile log's graph_code and Inductor's provenance spell them. ``frame``: the
# module whose forward the graph was traced from ("" the model, null not known).
CALLERS_SUFFIX = ".modules.json"


class Unset:
    """The type of ``UNSET``: a field the writer did not write (it is falsy, and never written)."""

    _instance: Unset | None = None

    def __new__(cls) -> Unset:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "UNSET"

    def __reduce__(self) -> str:
        return "UNSET"


UNSET: Any = Unset()


def _wire(name: str) -> dict[str, str]:
    """Field metadata for a JSON key that is not a Python name (``"pass"``)."""
    return {"json": name}


class _Record:
    """Shared by every part of the record: ``to_json`` (plain JSON types, UNSET fields left out)."""

    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = _encode(self)
        return data


# --------------------------------------------------------------------------------------------------- parts


@dataclass(frozen=True, slots=True)
class CapturePoint(_Record):
    """The shape point of a sweep this record measured (absent without a sweep)."""

    index: int = 0
    label: str = ""
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Latency(_Record):
    """One process's timed samples, in ms per call, and their quantiles (capture/timing.py ``_quantiles``)."""

    median: float
    q1: float
    q3: float
    iqr: float
    min: float
    mean: float
    samples: tuple[float, ...] = ()
    timer: str = ""  # "cuda_events" | "perf_counter"
    calls_per_sample: int | None = None
    windows: int | None = None  # written since the drift check (older files: None)
    drift: float | None = None
    # The CPU the launching thread was pinned to for the samples (CUDA, --cpu-pinning fastest), and each CPU's
    # probe (ms per call, the median of 3 samples) it was chosen from; absent: not pinned.
    cpu: int | Unset = UNSET
    cpu_probe: dict[str, float] | Unset = UNSET
    cpu_repins: int | Unset = UNSET  # windows that ran slower than their CPU's probe, then a new probe chose again
    # Other processes' CPU use over the warm-up and samples (capture/load.py; absent where /proc is not readable):
    # CPUs busy with other work on average, CPUs stolen by the hypervisor, CPUs online, the window's seconds, and
    # the CPUs the timed calls keep busy (OpenMP threads on the CPU device, 1 on a GPU).
    others_cpu: float | Unset = UNSET
    steal_cpu: float | Unset = UNSET
    cpu_count: float | Unset = UNSET
    load_window_s: float | Unset = UNSET
    threads: float | Unset = UNSET


@dataclass(frozen=True, slots=True)
class ProcessTiming(_Record):
    """One process of ``--processes`` (process 1 included), as capture/runner.py merge_processes records it."""

    process: int
    status: str
    error: str = ""
    first_call_s: float | None = None
    wall_s: float | None = None
    started_at: float | None = None
    latency_ms: Latency | None = None  # None: the process measured nothing
    drifted: bool = False
    log: str | None = None


@dataclass(frozen=True, slots=True)
class Comparison(_Record):
    """Errors of one set of outputs against another (capture/numerics.py ``_compare``; vs the reference also
    eager's)."""

    max_abs: float | None | Unset = UNSET
    max_rel: float | None | Unset = UNSET
    rmse: float | None | Unset = UNSET
    mismatch_fraction: float | None | Unset = UNSET
    differ_fraction: float | None | Unset = UNSET
    nonfinite: int | None | Unset = UNSET
    new_nonfinite: int | None | Unset = UNSET
    elements: int | None | Unset = UNSET
    allclose: bool | None | Unset = UNSET
    passed: bool | None | Unset = field(default=UNSET, metadata=_wire("pass"))
    note: str | Unset = UNSET  # the outputs differ in structure (count or shape)
    reason: str | Unset = UNSET  # why it failed, as the report says it
    eager_rmse: float | None | Unset = UNSET
    eager_max_abs: float | None | Unset = UNSET
    eager_nonfinite: int | None | Unset = UNSET
    bound_rmse: float | None | Unset = UNSET
    # torch's accuracy rule against the reference: its allclose(eager, mode, tol) shortcut, the
    # rmse multiplier it allowed (one output's; the mode's when it has one output), and rmse / the output's rms
    same_allclose: bool | Unset = UNSET
    multiplier: float | None | Unset = UNSET
    rel_rmse: float | None | Unset = UNSET


@dataclass(frozen=True, slots=True)
class NumericsTolerance(_Record):
    dtype: str | Unset = UNSET
    atol: float | Unset = UNSET
    rtol: float | Unset = UNSET
    vs_eager_rule: str | Unset = UNSET
    vs_reference_rule: str | Unset = UNSET
    # torch's accuracy rule as applied: its tol, equal_nan, the rule's name with the torch version it
    # restates (kernelscope/tolerance.py RULE_NAME), and whether the suite's 10x multiplier was forced
    same_tol: float | Unset = UNSET
    equal_nan: bool | Unset = UNSET
    rule: str | Unset = UNSET
    force_max_multiplier: bool | Unset = UNSET


@dataclass(frozen=True, slots=True)
class ReferenceRun(_Record):
    """How the high-precision reference ran (``dtype``: float64, else float32 with ``float64_error``), or why it
    did not (``skipped``); ``weights``: the dtype of the weights it was made from (the model file's, before
    --dtype; older workers: the run's)."""

    dtype: str | Unset = UNSET
    device: str | Unset = UNSET
    skipped: str | Unset = UNSET
    weights: str | Unset = UNSET
    # float64 could not run the model (an op without a float64 kernel: torch._grouped_mm): its error's first line;
    # the reference then ran in float32 (``dtype``), for a run in a lower precision
    float64_error: str | Unset = UNSET


@dataclass(frozen=True, slots=True)
class OutputNumerics(_Record):
    """One output tensor: its path in the output (``logits``, ``[0]``), its scale (rms and largest
    magnitude of the reference's, else eager's, finite elements) and its errors against eager and the reference."""

    name: str
    shape: tuple[int, ...] = ()
    dtype: str | Unset = UNSET
    elements: int | Unset = UNSET
    rms: float | None | Unset = UNSET
    max_abs_value: float | None | Unset = UNSET
    vs_eager: Comparison | Unset = UNSET
    vs_reference: Comparison | Unset = UNSET


@dataclass(frozen=True, slots=True)
class Numerics(_Record):
    vs_eager: Comparison | Unset = UNSET
    tolerance: NumericsTolerance | Unset = UNSET
    reference: ReferenceRun | Unset = UNSET
    vs_reference: Comparison | Unset = UNSET
    outputs: tuple[OutputNumerics, ...] | Unset = UNSET


@dataclass(frozen=True, slots=True)
class DispatchCount(_Record):
    """The ops one more call of the mode dispatched, seen by a TorchDispatchMode (capture/dispatch.py): the oracle
    of the GEMM count. ``gemm_ops``: GEMM-class ATen ops by overload packet (``{"mm": 11, "_grouped_mm": 4}``, as
    vocab.DISPATCH_GEMM_OPS names them); ``nested``: those dispatched inside another op, by that op
    (``{"transformers::grouped_mm_fallback": {"mm": 8}}``); ``ops``: every op the call dispatched, nested ones
    left out, by qualified packet (``"aten::addmm"``, ``"mkldnn::_linear_pointwise"``). In a compiled mode, what
    the compiled code still dispatches. ``skipped``: why nothing was counted (the rest is then empty)."""

    gemm_ops: dict[str, int] = field(default_factory=dict)
    nested: dict[str, dict[str, int]] = field(default_factory=dict)
    ops: dict[str, int] = field(default_factory=dict)
    skipped: str = ""


@dataclass(frozen=True, slots=True)
class DynamoCounters(_Record):
    """Dynamo's counters over one point (capture/compiling.py ``_counter_delta``)."""

    frames_compiled: int | Unset = UNSET
    graphs: int | Unset = UNSET
    recompiles: int | Unset = UNSET
    guard_failures: tuple[str, ...] | Unset = UNSET
    graph_breaks: int | Unset = UNSET
    graph_break_reasons: tuple[str, ...] | Unset = UNSET


@dataclass(frozen=True, slots=True)
class CompileRecord(_Record):
    """The first call's compile: cold time and Inductor cache counters; the warm process's (``--warm-compile``,
    merged by capture/runner.py merge_warm) beside them. ``cache``: {"cold": {counter: n}, "warm": {...}}, each
    without what a cache hit replayed (the cached compile's counts, which Inductor adds again on a hit); those are
    under "replayed" and "warm_replayed" where there were any (capture/compiling.py ``_REPLAYED``)."""

    cold_s: float | None | Unset = UNSET  # None: nothing compiled at this point (``reused``)
    cache: dict[str, dict[str, int]] | Unset = UNSET
    cache_dir_fresh: bool | Unset = UNSET
    reused: bool | Unset = UNSET  # a dynamic graph compiled at an earlier shape point covers this one
    first_call_s: float | None | Unset = UNSET  # with ``reused``: the first call, which compiled nothing
    warm_s: float | None | Unset = UNSET  # there once a warm process was merged in (None: it measured nothing)
    warm_dynamo: DynamoCounters | Unset = UNSET
    warm_error: str | Unset = UNSET
    warm_log: str | None | Unset = UNSET
    # Inductor's compile_threads in this process: 1 in a later process of --processes whose first process's graphs
    # went through the cache: it compiles from there and needs no compile-worker pool (capture/compiling.py
    # _no_pool_for_a_cached_compile)
    compile_threads: int | None | Unset = UNSET
    # A later process of --processes: the Triton kernels whose cached coordinate-descent configuration it kept, which
    # torch 2.9-2.11 would have tuned again at their first run (capture/compiling.py _keep_cached_coordesc)
    coordesc_kept: int | Unset = UNSET
    # Dynamo's and Inductor's own timers over the first call (torch._dynamo.utils.compilation_time_metrics, those of
    # 10 ms or more): where a compile's time went, e.g. a later process's load from the cache against a lowering
    phases_s: dict[str, float] | Unset = UNSET


@dataclass(frozen=True, slots=True)
class MemoryRecord(_Record):
    """Peak memory, in bytes: the CUDA allocator's on a GPU, the process's RSS (and its growth) on the CPU."""

    first_call_peak_allocated_bytes: int | None | Unset = UNSET
    first_call_peak_reserved_bytes: int | None | Unset = UNSET
    peak_allocated_bytes: int | None | Unset = UNSET
    peak_reserved_bytes: int | None | Unset = UNSET
    rss_before_bytes: int | None | Unset = UNSET
    build_peak_rss_bytes: int | None | Unset = UNSET
    first_call_peak_rss_bytes: int | None | Unset = UNSET
    process_peak_rss_bytes: int | None | Unset = UNSET
    peak_rss_bytes: int | None | Unset = UNSET
    rss_after_bytes: int | None | Unset = UNSET
    first_call_rss_growth_bytes: int | None | Unset = UNSET
    peak_rss_growth_bytes: int | None | Unset = UNSET


@dataclass(frozen=True, slots=True)
class CaptureConfig(_Record):
    """How the mode ran: what ``--modes`` asked for and what the worker set (Inductor's config patch)."""

    compiled: bool | Unset = UNSET
    compile_mode: str | None | Unset = UNSET
    max_autotune: bool | Unset = UNSET
    cudagraphs: bool | Unset = UNSET
    dynamic: bool | Unset = UNSET
    device: str | Unset = UNSET
    capability: str | None | Unset = UNSET
    dtype: str | None | Unset = UNSET
    freezing: bool | Unset = UNSET
    gemm_backends: tuple[str, ...] | None | Unset = UNSET  # the usable ones, in Inductor's order
    gemm_backends_requested: tuple[str, ...] | Unset = UNSET
    cute_dsl_arch: str | Unset = UNSET
    inductor_config: dict[str, Any] | Unset = UNSET


@dataclass(frozen=True, slots=True)
class BackendAvailability(_Record):
    available: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Environment(_Record):
    """What a reviewer needs to reproduce (capture/environment.py ``environment``): no hostnames, no environment
    variables."""

    python: str | Unset = UNSET
    platform: str | Unset = UNSET
    torch: str | Unset = UNSET
    cuda: str | None | Unset = UNSET
    device: str | Unset = UNSET
    triton: str | None | Unset = UNSET
    gpu: str | Unset = UNSET
    capability: str | Unset = UNSET
    gpu_memory_bytes: int | Unset = UNSET
    sm_count: int | Unset = UNSET
    driver: str | None | Unset = UNSET
    cpu: str | Unset = UNSET
    cpu_count: int | None | Unset = UNSET
    gemm_backends: dict[str, BackendAvailability] | Unset = UNSET


@dataclass(frozen=True, slots=True)
class DistributedInfo(_Record):
    """The torchrun rank a record was measured on (``--nproc``; capture/dist.py ``describe``)."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    backend: str = ""


@dataclass(frozen=True, slots=True)
class CaptureRecord(_Record):
    """One mode at one shape point (one process): what it measured, or why it did not run.

    ``status``: ok / failed / timeout / unavailable / interrupted; ``error_kind``: model, usage, forward, oom,
    compile, toolchain, run, crash, timeout, interrupted, skipped, unavailable. Paths are relative to the run
    directory."""

    schema: str = CAPTURE_SCHEMA
    mode: str = ""
    status: str = "failed"
    error: str = ""
    error_kind: str = ""
    notes: tuple[str, ...] = ()
    point: CapturePoint | None = None
    device: str = ""
    environment: Environment | None = None
    config: CaptureConfig | None = None
    dtype: str | None = None  # the dtype the model computes in (--dtype, else its parameters'; older: the inputs')
    inputs: str | None = None  # the inputs' shapes, "16x4096, 4096"
    param_names: tuple[str, ...] = ()
    # What the module paths of this capture (param_names, eager module ranges, Dynamo's parameter names) carry
    # before the user's model's own: "" (current workers name them on the model get_model() returned);
    # None: not said (an older worker ran a model called with keyword inputs inside kernelscope's wrapper, whose
    # paths began "model."; analysis/mode.py module_prefix reads it)
    module_prefix: str | None = None
    memory: MemoryRecord | None = None
    first_call_s: float | None = None
    compile: CompileRecord | None = None
    dynamo: DynamoCounters | None = None
    inductor_code: tuple[str, ...] = ()
    code_reused: bool = False  # nothing compiled at this point: the code is the last point's
    compile_workers_stopped: bool = False
    dispatch: DispatchCount | None = None  # None: not counted (older workers, a timing-only process)
    warmup_calls: int | None = None
    latency_ms: Latency | None = None
    drifted: bool = False  # a timing-only process whose samples still drifted
    numerics: Numerics | None = None
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    peak_memory_bytes: int | None = None
    trace: str | None = None
    wall_s: float | None = None
    log: str | None = None
    started_at: float | None = None  # wall clock (time.time()) when the worker started
    processes: tuple[ProcessTiming, ...] = ()  # --processes: every process's timings, in run order
    # --nproc (torchrun): a rank's own record says which rank it was and when it failed (the first failure is the
    # cause, ranks torchrun stopped after it follow); the group's record (the mode folder's) lists every rank's
    distributed: DistributedInfo | None = None
    rank: int | None = None  # the global rank a rank's own record was measured on
    failed_at: float | None = None  # wall clock of a rank's failure
    rank_records: tuple[str, ...] = ()  # the group's rank records, in rank order (paths from the run directory)
    world_size: int | None = None


# --------------------------------------------------------------------------------------------------- JSON


def capture_from_json(data: Mapping[str, Any], *, strict: bool = False, where: str = CAPTURE_FILE) -> CaptureRecord:
    """A CaptureRecord from capture.json's object. Missing fields take their defaults (older workers);
    ``strict``: a key the record does not know is an error (the worker's own writes), else it is ignored.
    Raises CaptureFileError naming the field when a value has the wrong type or the schema is not ours."""
    if not isinstance(data, Mapping):
        raise CaptureFileError(f"{where} holds a JSON {type(data).__name__}, not a capture record",
                               "re-run `kernelscope profile` to capture it again")
    schema = data.get("schema", CAPTURE_SCHEMA)
    if schema != CAPTURE_SCHEMA:
        raise CaptureFileError(f"{where} has schema {schema!r}; this kernelscope reads {CAPTURE_SCHEMA!r}",
                               "re-run `kernelscope profile` with this kernelscope to capture it again")
    try:
        record: CaptureRecord = _decode(CaptureRecord, data, "", strict)
    except _FieldError as exc:
        raise CaptureFileError(f"{where}: {exc}", "re-run `kernelscope profile` to capture it again") from None
    return record


def read_capture(path: str | os.PathLike[str]) -> CaptureRecord | None:
    """The record at ``path``, or None when there is none to read (missing, cut off, not ours, malformed):
    the runner then reports the worker as having died without a result."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("schema") != CAPTURE_SCHEMA:
        return None
    try:
        return capture_from_json(data, where=str(path))
    except CaptureFileError:
        return None


def load_capture(path: str | os.PathLike[str]) -> CaptureRecord:
    """Like ``read_capture``, for a file that must be there: CaptureFileError with the path and the cause."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CaptureFileError(f"{path} does not exist",
                               "pass a mode folder written by `kernelscope profile`") from None
    except (OSError, ValueError) as exc:
        raise CaptureFileError(f"cannot read {path}: {exc}",
                               "re-run `kernelscope profile` to capture it again") from None
    return capture_from_json(data, where=str(path))


def write_capture(path: str | os.PathLike[str], record: CaptureRecord | Mapping[str, Any]) -> CaptureRecord:
    """Write ``record`` to ``path`` atomically (the worker builds a dict as it measures: it is checked against
    the record strictly first, so a key the record does not know fails here, not silently downstream)."""
    if not isinstance(record, CaptureRecord):
        record = capture_from_json(record, strict=True, where=str(path))
    atomic_write_json(Path(path), record.to_json())
    return record


# --------------------------------------------------------------------------------------------------- machinery


class _FieldError(ValueError):
    pass


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    return hints


def _key(f: dataclasses.Field[Any]) -> str:
    key: str = f.metadata.get("json", f.name)
    return key


def _decode(cls: type, data: Any, where: str, strict: bool) -> Any:
    if not isinstance(data, Mapping):
        raise _FieldError(f"{where or 'the record'} should be an object, not {type(data).__name__}")
    hints = _hints(cls)
    fields = dataclasses.fields(cls)
    if strict:
        known = {_key(f) for f in fields}
        extra = [k for k in data if k not in known]
        if extra:
            raise _FieldError(f"{where + '.' if where else ''}{extra[0]} is not a field of {cls.__name__} "
                              "(add it to kernelscope/capture_record.py)")
    kwargs = {}
    for f in fields:
        key = _key(f)
        if key in data:
            kwargs[f.name] = _convert(hints[f.name], data[key], f"{where}.{key}" if where else key, strict)
    try:
        return cls(**kwargs)
    except TypeError as exc:  # a required field is missing
        raise _FieldError(f"{where or 'the record'}: {exc}") from None


def _convert(tp: Any, value: Any, where: str, strict: bool) -> Any:
    if tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin is typing.Union or isinstance(tp, types.UnionType):
        every = [a for a in typing.get_args(tp) if a is not Unset]  # UNSET is never in a file
        args = [a for a in every if a is not type(None)]
        if value is None:
            if len(args) == len(every):
                raise _FieldError(f"{where} is null")
            return None
        errors = []
        for a in args:
            try:
                return _convert(a, value, where, strict)
            except _FieldError as exc:
                errors.append(exc)
        raise errors[0]
    if dataclasses.is_dataclass(tp):
        return _decode(tp, value, where, strict)  # type: ignore[arg-type]
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise _FieldError(f"{where} should be a list, not {type(value).__name__}")
        inner = typing.get_args(tp)[0]
        return tuple(_convert(inner, v, f"{where}[{i}]", strict) for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, Mapping):
            raise _FieldError(f"{where} should be an object, not {type(value).__name__}")
        inner = typing.get_args(tp)[1]
        return {str(k): _convert(inner, v, f"{where}.{k}", strict) for k, v in value.items()}
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp in (str, bool):
        if isinstance(value, tp):
            return value
    else:  # pragma: no cover - every field's type is one of the above
        raise _FieldError(f"{where}: no reader for {tp!r}")
    raise _FieldError(f"{where} should be {tp.__name__}, not {type(value).__name__} {value!r:.40}")


def _encode(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {_key(f): _encode(v) for f in dataclasses.fields(obj)
                if (v := getattr(obj, f.name)) is not UNSET}
    if isinstance(obj, (list, tuple)):
        return [_encode(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): _encode(v) for k, v in obj.items()}
    return obj
