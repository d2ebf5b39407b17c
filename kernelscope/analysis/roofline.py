"""Roofline per GEMM: FLOPs and minimal bytes from M, N, K and the dtype, against the device's peaks. Pure.

Peaks come from two places: ``KNOWN_PEAKS``, datasheet figures by GPU name (each row names its source), and the
calibration file ``kernelscope calibrate`` writes (the device's own measured matmul and copy ceilings), read by
later runs. Datasheet peaks are what the vendor promises; a measured ceiling is what this machine reaches on a
large GEMM and a device-to-device copy, so "% of calibrated" says how close a kernel is to the attainable.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kernelscope import vocab
from kernelscope.errors import UsageError
from kernelscope.result import GemmEpilogue, Note, Roofline, to_json

CALIBRATION_SCHEMA = "kernelscope.calibration/1"
CALIBRATION_ENV = "KERNELSCOPE_CALIBRATION"

ITEMSIZE = {"float64": 8, "float32": 4, "tfloat32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3fn": 1,
            "float8_e5m2": 1, "int8": 1}
BIAS_OPS = vocab.BIAS_ROW_OPS  # a bias row of N elements read (the byte floor)
BATCHED_OPS = vocab.BATCHED_OPS  # m, n, k are per matrix: FLOPs and bytes need the batch count


@dataclass(frozen=True, slots=True)
class Peaks:
    """A device's ceilings: dense matmul TFLOP/s per dtype and memory bandwidth in GB/s."""

    device: str
    kind: str  # "datasheet" | "calibrated"
    matmul_tflops: dict[str, float]
    bandwidth_gbps: float | None
    source: str
    notes: tuple[Note, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"device": self.device, "kind": self.kind, "matmul_tflops": dict(self.matmul_tflops),
                "bandwidth_gbps": self.bandwidth_gbps, "source": self.source,
                "notes": [to_json(n) for n in self.notes]}


@dataclass(frozen=True, slots=True)
class _Known:
    pattern: re.Pattern[str]
    name: str
    matmul_tflops: dict[str, float]
    bandwidth_gbps: float
    source: str
    notes: tuple[Note, ...] = field(default=())


# Dense (no 2:4 sparsity) figures: NVIDIA's datasheets print tensor-core throughput "with sparsity", so the dense
# figure is half of it. float32 is the CUDA-core FP32 rate: PyTorch leaves TF32 off for matmuls by default.
# Patterns match torch.cuda.get_device_properties().name ("NVIDIA H200", "NVIDIA H100 80GB HBM3", ...).
KNOWN_PEAKS: tuple[_Known, ...] = (
    _Known(re.compile(r"H200 NVL", re.I), "NVIDIA H200 NVL",
           {"float16": 835.5, "bfloat16": 835.5, "tfloat32": 417.5, "float32": 60.0, "float64": 30.0,
            "float8_e4m3fn": 1671.0}, 4800.0,
           "NVIDIA H200 datasheet (nvidia.com/en-us/data-center/h200), H200 NVL column: BF16/FP16 1,671 TFLOPS "
           "with sparsity (835.5 dense), FP32 60 TFLOPS, HBM3e 4.8 TB/s"),
    _Known(re.compile(r"H200", re.I), "NVIDIA H200 SXM",
           {"float16": 989.5, "bfloat16": 989.5, "tfloat32": 494.5, "float32": 67.0, "float64": 34.0,
            "float8_e4m3fn": 1979.0}, 4800.0,
           "NVIDIA H200 datasheet (nvidia.com/en-us/data-center/h200), H200 SXM column: BF16/FP16 1,979 TFLOPS "
           "with sparsity (989.5 dense), FP32 67 TFLOPS, HBM3e 4.8 TB/s",
           (Note("measured-below-datasheet", {"gpu": "H200", "tflops": 788, "dtype": "bf16", "copy_tbps": 4.3}),)),
    _Known(re.compile(r"H100 NVL", re.I), "NVIDIA H100 NVL",
           {"float16": 835.5, "bfloat16": 835.5, "tfloat32": 417.5, "float32": 60.0, "float64": 30.0,
            "float8_e4m3fn": 1670.5}, 3900.0,
           "NVIDIA H100 datasheet (nvidia.com/en-us/data-center/h100), H100 NVL column: BF16/FP16 1,671 TFLOPS "
           "with sparsity (835.5 dense), FP32 60 TFLOPS, HBM3 3.9 TB/s"),
    _Known(re.compile(r"H100.*PCIe", re.I), "NVIDIA H100 PCIe",
           {"float16": 756.5, "bfloat16": 756.5, "tfloat32": 378.0, "float32": 51.0, "float64": 26.0,
            "float8_e4m3fn": 1513.0}, 2000.0,
           "NVIDIA H100 datasheet (nvidia.com/en-us/data-center/h100), H100 PCIe column: BF16/FP16 1,513 TFLOPS "
           "with sparsity (756.5 dense), FP32 51 TFLOPS, HBM2e 2 TB/s"),
    _Known(re.compile(r"H100", re.I), "NVIDIA H100 SXM",
           {"float16": 989.5, "bfloat16": 989.5, "tfloat32": 494.5, "float32": 67.0, "float64": 34.0,
            "float8_e4m3fn": 1979.0}, 3350.0,
           "NVIDIA H100 datasheet (nvidia.com/en-us/data-center/h100), H100 SXM column: BF16/FP16 1,979 TFLOPS "
           "with sparsity (989.5 dense), FP32 67 TFLOPS, HBM3 3.35 TB/s"),
    _Known(re.compile(r"A100.*80GB.*PCIe|A100 80GB PCIe", re.I), "NVIDIA A100 80GB PCIe",
           {"float16": 312.0, "bfloat16": 312.0, "tfloat32": 156.0, "float32": 19.5, "float64": 9.7}, 1935.0,
           "NVIDIA A100 datasheet (nvidia.com/en-us/data-center/a100): BF16/FP16 312 TFLOPS dense, FP32 19.5 "
           "TFLOPS, A100 80GB PCIe HBM2e 1,935 GB/s"),
    _Known(re.compile(r"A100.*80GB", re.I), "NVIDIA A100 80GB SXM",
           {"float16": 312.0, "bfloat16": 312.0, "tfloat32": 156.0, "float32": 19.5, "float64": 9.7}, 2039.0,
           "NVIDIA A100 datasheet (nvidia.com/en-us/data-center/a100): BF16/FP16 312 TFLOPS dense, FP32 19.5 "
           "TFLOPS, A100 80GB SXM HBM2e 2,039 GB/s"),
    _Known(re.compile(r"A100", re.I), "NVIDIA A100 40GB",
           {"float16": 312.0, "bfloat16": 312.0, "tfloat32": 156.0, "float32": 19.5, "float64": 9.7}, 1555.0,
           "NVIDIA A100 datasheet (nvidia.com/en-us/data-center/a100): BF16/FP16 312 TFLOPS dense, FP32 19.5 "
           "TFLOPS, A100 40GB HBM2 1,555 GB/s"),
    _Known(re.compile(r"\bL4\b", re.I), "NVIDIA L4",
           {"float16": 121.0, "bfloat16": 121.0, "tfloat32": 60.0, "float32": 30.3, "float8_e4m3fn": 242.5}, 300.0,
           "NVIDIA L4 datasheet (nvidia.com/en-us/data-center/l4): BF16/FP16 242 TFLOPS with sparsity (121 dense), "
           "FP32 30.3 TFLOPS, GDDR6 300 GB/s"),
)


def known_peaks(gpu_name: str | None) -> Peaks | None:
    """Datasheet peaks for a GPU name, or None (a CPU, or a GPU not in the table)."""
    if not gpu_name:
        return None
    for row in KNOWN_PEAKS:
        if row.pattern.search(gpu_name):
            return Peaks(gpu_name, "datasheet", dict(row.matmul_tflops), row.bandwidth_gbps,
                         f"{row.name}: {row.source}", row.notes)
    return None


# ------------------------------------------------------------------------------------------------ calibration file


def device_key(env: dict[str, Any]) -> str | None:
    """The calibration file's key for a run's environment: the GPU name, or the CPU model and core count (a
    CPU's GEMM ceiling scales with its threads)."""
    if env.get("device") == "cuda" and env.get("gpu"):
        return str(env["gpu"])
    if env.get("cpu"):
        return f"cpu: {env['cpu']} ({env.get('cpu_count') or '?'} cpus)"
    return None


def default_calibration_path() -> Path:
    """$KERNELSCOPE_CALIBRATION, else $XDG_CACHE_HOME/kernelscope/calibration.json (~/.cache by default)."""
    if os.environ.get(CALIBRATION_ENV):
        return Path(os.environ[CALIBRATION_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kernelscope" / "calibration.json"


def read_calibration(path: Path, *, required: bool = False) -> dict[str, Any]:
    """The calibration file's dict ({"schema", "devices": {key: entry}}); empty when absent and not required."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        if required:
            raise UsageError(f"calibration file {path} does not exist",
                             "run `kernelscope calibrate` first, or drop --calibration") from None
        return {}
    except (OSError, ValueError) as exc:
        raise UsageError(f"calibration file {path} cannot be read: {exc}",
                         "run `kernelscope calibrate` again to rewrite it") from exc
    if not isinstance(data, dict) or data.get("schema") != CALIBRATION_SCHEMA:
        raise UsageError(f"{path} is not a kernelscope calibration file (schema {CALIBRATION_SCHEMA})",
                         "run `kernelscope calibrate` to write one")
    return data


def merge_calibration(existing: dict[str, Any], key: str, entry: dict[str, Any]) -> dict[str, Any]:
    """One file holds several machines' ceilings; a new calibration of a device replaces its entry only."""
    devices = dict(existing.get("devices") or {})
    devices[key] = entry
    return {"schema": CALIBRATION_SCHEMA, "devices": devices}


def calibrated_peaks(calibration: dict[str, Any], env: dict[str, Any], path: str = "") -> Peaks | None:
    key = device_key(env)
    entry = (calibration.get("devices") or {}).get(key) if key else None
    if not isinstance(entry, dict):
        return None
    mm = {str(k): float(v) for k, v in (entry.get("matmul_tflops") or {}).items() if isinstance(v, (int, float))}
    bw = entry.get("copy_gbps")
    when = entry.get("created", "")
    return Peaks(str(key), "calibrated", mm, float(bw) if isinstance(bw, (int, float)) else None,
                 f"measured by kernelscope calibrate{f' on {when}' if when else ''}{f' ({path})' if path else ''}")


def peaks_for(env: dict[str, Any], calibration: dict[str, Any] | None, path: str = "") -> dict[str, Any]:
    """What result.json records under "peaks": the datasheet row and the calibrated ceilings, either may be None."""
    ds = known_peaks(env.get("gpu")) if env.get("device") == "cuda" else None
    cal = calibrated_peaks(calibration or {}, env, path)
    return {"datasheet": ds.to_json() if ds else None, "calibrated": cal.to_json() if cal else None}


def _peaks_from_json(d: dict[str, Any] | None) -> Peaks | None:
    if not isinstance(d, dict):
        return None
    return Peaks(d.get("device", ""), d.get("kind", ""), dict(d.get("matmul_tflops") or {}), d.get("bandwidth_gbps"),
                 d.get("source", ""))  # (the math reads the ceilings; the notes are the reports')


# ------------------------------------------------------------------------------------------------ the math


def _dtype(name: str | None) -> str | None:
    if not name:
        return None
    n = name.removeprefix("torch.").lower()
    return {"half": "float16", "fp16": "float16", "bf16": "bfloat16", "float": "float32", "fp32": "float32",
            "double": "float64"}.get(n, n)


def gemm_flops(m: int, n: int, k: int) -> int:
    return 2 * m * n * k  # one multiply and one add per (m, n, k)


def gemm_min_bytes(m: int, n: int, k: int, itemsize: int, *, bias: bool) -> int:
    """Each operand read once and the output written once: no GEMM can move less (the roofline's floor)."""
    return (m * k + k * n + m * n + (n if bias else 0)) * itemsize


def roofline(m: int | None, n: int | None, k: int | None, dtype: str | None, time_us: float, *, op: str = "",
             peaks: Peaks | None = None, calibrated: Peaks | None = None, batch: int | None = None) -> Roofline | None:
    """Achieved TFLOP/s and GB/s of one GEMM, and the share of each peak. None when M, N, K or the dtype are
    unknown, a batched op's batch count is unknown, or no time was measured."""
    dt = _dtype(dtype)
    if m is None or n is None or k is None or dt not in ITEMSIZE or time_us <= 0 or (op in BATCHED_OPS
                                                                                     and not batch):
        return None
    b = batch if op in BATCHED_OPS and batch else 1
    flops = gemm_flops(m, n, k) * b
    nbytes = gemm_min_bytes(m, n, k, ITEMSIZE[dt], bias=op in BIAS_OPS) * b
    seconds = time_us * 1e-6
    tflops = flops / seconds / 1e12
    gbps = nbytes / seconds / 1e9
    intensity = flops / nbytes

    def shares(p: Peaks | None) -> tuple[float | None, float | None, float | None, float | None]:
        if p is None:
            return None, None, None, None
        pf = p.matmul_tflops.get(dt)
        pb = p.bandwidth_gbps
        return pf, pb, (100.0 * tflops / pf if pf else None), (100.0 * gbps / pb if pb else None)

    main = peaks or calibrated
    pf, pb, pct_f, pct_b = shares(main)
    _, _, cal_f, cal_b = shares(calibrated if peaks is not None else None)
    bound = attainable = None
    if pf and pb:
        # The roofline: a kernel of this intensity can reach at most min(peak, intensity x bandwidth).
        ridge = pf * 1e12 / (pb * 1e9)
        bound = "compute" if intensity >= ridge else "memory"
        attainable = min(pf, intensity * pb * 1e9 / 1e12)
    return Roofline(
        flops=flops, bytes=nbytes, intensity=intensity, time_us=time_us, tflops=tflops, gbps=gbps,
        dtype=dt, peak_tflops=pf, peak_gbps=pb, pct_peak_flops=pct_f, pct_peak_bw=pct_b,
        peak_source=main.kind if main else "", bound=bound, attainable_tflops=attainable,
        pct_attainable=(100.0 * tflops / attainable if attainable else None),
        pct_calibrated_flops=cal_f, pct_calibrated_bw=cal_b,
    )


def with_roofline(gemms: Sequence[GemmEpilogue], peaks: dict[str, Any] | None) -> tuple[GemmEpilogue, ...]:
    """The GEMM verdicts with their roofline filled in (peaks: result.json's "peaks" dict)."""
    ds = _peaks_from_json((peaks or {}).get("datasheet"))
    cal = _peaks_from_json((peaks or {}).get("calibrated"))
    return tuple(replace(g, roofline=roofline(g.m, g.n, g.k, g.dtype, g.time_us_per_iter, op=g.op, batch=g.batch,
                                              peaks=ds, calibrated=cal)) for g in gemms)
