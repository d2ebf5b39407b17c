"""Load a torch.profiler chrome trace (.json or .json.gz) into typed, frozen records.

This is the one versioned place where a trace's raw keys (``args["External id"]``, ``correlation``,
``kernel_backend``...) are mapped to fields. No torch import: analysis must run anywhere.

Only the events the analysis needs are kept (GPU kernels and memops, CUDA runtime/driver launches, CPU ops
and annotations); flow events, Python frames and metadata rows are skipped without building records.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelscope.errors import TraceError

try:  # orjson parses 3-5x faster than json and allocates less; json is the fallback.
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a declared dependency
    _orjson = None

# Trace categories, as torch.profiler/Kineto writes them.
GPU_KERNEL_CATS = frozenset({"kernel"})
GPU_MEMOP_CATS = frozenset({"gpu_memset", "gpu_memcpy"})
RUNTIME_CATS = frozenset({"cuda_runtime", "cuda_driver"})
CPU_CATS = frozenset({"cpu_op", "user_annotation", "cpu_instant_event"})
GPU_ANNOTATION_CATS = frozenset({"gpu_user_annotation"})

# Runtime calls that put work on the GPU; their correlation id names the GPU event they launched.
LAUNCH_NAMES = frozenset(
    {
        "cudaLaunchKernel",
        "cudaLaunchKernelExC",
        "cuLaunchKernel",
        "cuLaunchKernelEx",
        "cudaLaunchCooperativeKernel",
        "cudaGraphLaunch",
        "cudaMemcpyAsync",
        "cudaMemcpy",
        "cudaMemsetAsync",
        "cudaMemset",
        "cuMemcpyAsync",
        "cuMemsetD8Async",
        "cuMemsetD32Async",
        "cudaMemcpy2DAsync",
    }
)


@dataclass(frozen=True, slots=True)
class GpuEvent:
    """A GPU kernel, memset or memcpy."""

    name: str
    cat: str
    ts: float
    dur: float
    correlation: int | None
    external_id: int | None
    stream: int | None
    device: int | None

    @property
    def is_memop(self) -> bool:
        return self.cat in GPU_MEMOP_CATS


@dataclass(frozen=True, slots=True)
class RuntimeEvent:
    """A CUDA runtime/driver call on the CPU (cudaLaunchKernel, cuLaunchKernel, cudaMemcpyAsync...)."""

    name: str
    ts: float
    dur: float
    correlation: int | None
    external_id: int | None
    tid: int | str | None


@dataclass(frozen=True, slots=True)
class CpuEvent:
    """A CPU op or user annotation (record_function ranges, ``## Call CompiledFxGraph ##``, ProfilerStep#N)."""

    name: str
    cat: str
    ts: float
    dur: float
    pid: int | str | None
    tid: int | str | None
    external_id: int | None
    kernel_backend: str | None = None
    kernel_name: str | None = None
    input_dims: tuple[Any, ...] | None = None
    input_types: tuple[str, ...] | None = None

    @property
    def end(self) -> float:
        return self.ts + self.dur


@dataclass(frozen=True, slots=True)
class Trace:
    path: str
    device_properties: tuple[dict[str, Any], ...]
    gpu: tuple[GpuEvent, ...]
    runtime: tuple[RuntimeEvent, ...]
    cpu: tuple[CpuEvent, ...]
    gpu_annotations: tuple[CpuEvent, ...]
    meta: dict[str, Any] = field(default_factory=dict)
    skipped_events: int = 0
    total_events: int = 0

    @property
    def has_gpu(self) -> bool:
        return bool(self.gpu)

    @property
    def gpu_name(self) -> str | None:
        return self.device_properties[0].get("name") if self.device_properties else None


def _read_bytes(path: Path) -> bytes:
    try:
        with open(path, "rb") as f:
            head = f.read(2)
            f.seek(0)
            if head == b"\x1f\x8b":
                return gzip.decompress(f.read())
            return f.read()
    except FileNotFoundError:
        raise TraceError(f"trace file {path} does not exist", "pass the path of a torch.profiler .json or .json.gz trace")
    except IsADirectoryError:
        raise TraceError(f"trace path {path} is a directory", "pass one .json or .json.gz trace file")
    except PermissionError:
        raise TraceError(f"trace file {path} cannot be read (permission denied)", "check the file's permissions")
    except (OSError, EOFError, zlib.error) as exc:
        raise TraceError(
            f"trace file {path} is not a readable gzip file ({type(exc).__name__}: {exc})",
            "re-export the trace or pass the uncompressed .json",
        )


def _parse(raw: bytes, path: Path) -> Any:
    if not raw.strip():
        raise TraceError(f"trace file {path} is empty", "export the trace again with prof.export_chrome_trace(...)")
    try:
        if _orjson is not None:
            return _orjson.loads(raw)
        return json.loads(raw)
    except ValueError as exc:
        # Kernel names can carry bytes that are not UTF-8 (seen in traces copied between machines):
        # decode with replacement rather than refusing the whole trace.
        try:
            text = raw.decode("utf-8", errors="replace")
            return json.loads(text)
        except ValueError:
            pass
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TraceError(
            f"trace file {path} is not valid JSON ({msg}); it may be truncated",
            "re-export the trace, or pass a complete torch.profiler chrome trace",
        )


def _int(v: Any) -> int | None:
    if v is None:
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _num(v: Any) -> float | None:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def _text(v: Any) -> str:
    return v if isinstance(v, str) else str(v)


def load_trace(path: str | os.PathLike[str]) -> Trace:
    """Parse a chrome trace; raise TraceError with a fix when it is not one."""
    p = Path(path)
    data = _parse(_read_bytes(p), p)
    return trace_from_dict(data, str(p))


def trace_from_dict(data: Any, path: str = "<memory>") -> Trace:
    if isinstance(data, list):  # the bare-array form of the chrome trace format
        events, top = data, {}
    elif isinstance(data, dict) and isinstance(data.get("traceEvents"), list):
        events, top = data["traceEvents"], data
    else:
        raise TraceError(
            f"{path} is JSON but not a chrome trace (no 'traceEvents' list)",
            "pass a trace written by torch.profiler's export_chrome_trace or tensorboard_trace_handler",
        )
    gpu: list[GpuEvent] = []
    runtime: list[RuntimeEvent] = []
    cpu: list[CpuEvent] = []
    gpu_ann: list[CpuEvent] = []
    skipped = 0
    for ev in events:
        if not isinstance(ev, dict):
            skipped += 1
            continue
        cat = ev.get("cat")
        if cat is None or ev.get("ph") != "X":
            continue
        name = ev.get("name")
        ts = _num(ev.get("ts"))
        if name is None or ts is None:
            skipped += 1
            continue
        dur = _num(ev.get("dur")) or 0.0
        args = ev.get("args")
        if not isinstance(args, dict):
            args = {}
        name = _text(name)
        if cat in GPU_KERNEL_CATS or cat in GPU_MEMOP_CATS:
            gpu.append(
                GpuEvent(
                    name=name,
                    cat=cat,
                    ts=ts,
                    dur=dur,
                    correlation=_int(args.get("correlation")),
                    external_id=_int(args.get("External id")),
                    stream=_int(args.get("stream")),
                    device=_int(args.get("device")),
                )
            )
        elif cat in RUNTIME_CATS:
            runtime.append(
                RuntimeEvent(
                    name=name,
                    ts=ts,
                    dur=dur,
                    correlation=_int(args.get("correlation")),
                    external_id=_int(args.get("External id")),
                    tid=ev.get("tid"),
                )
            )
        elif cat in CPU_CATS:
            dims = args.get("Input Dims")
            types = args.get("Input type")
            cpu.append(
                CpuEvent(
                    name=name,
                    cat=cat,
                    ts=ts,
                    dur=dur,
                    pid=ev.get("pid"),
                    tid=ev.get("tid"),
                    external_id=_int(args.get("External id")),
                    kernel_backend=args.get("kernel_backend"),
                    kernel_name=args.get("kernel_name"),
                    input_dims=tuple(dims) if isinstance(dims, list) else None,
                    input_types=tuple(_text(t) for t in types) if isinstance(types, list) else None,
                )
            )
        elif cat in GPU_ANNOTATION_CATS:
            gpu_ann.append(
                CpuEvent(
                    name=name, cat=cat, ts=ts, dur=dur, pid=ev.get("pid"), tid=ev.get("tid"),
                    external_id=_int(args.get("External id")),
                )
            )
    props = top.get("deviceProperties") if isinstance(top, dict) else None
    meta = {
        k: top[k]
        for k in ("schemaVersion", "cuda_driver_version", "cuda_runtime_version", "record_shapes", "distributedInfo")
        if isinstance(top, dict) and k in top
    }
    gpu.sort(key=lambda e: e.ts)
    runtime.sort(key=lambda e: e.ts)
    cpu.sort(key=lambda e: (e.ts, -e.dur))
    return Trace(
        path=path,
        device_properties=tuple(p for p in props if isinstance(p, dict)) if isinstance(props, list) else (),
        gpu=tuple(gpu),
        runtime=tuple(runtime),
        cpu=tuple(cpu),
        gpu_annotations=tuple(gpu_ann),
        meta=meta,
        skipped_events=skipped,
        total_events=len(events),
    )
