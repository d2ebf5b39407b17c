"""TensorBoard scalars per mode (steady latency, first-call time, kernels per iteration, peak memory).

One run per mode, ``<tb_dir>/<mode>/``: the folder that already holds that mode's profiler trace, so the Scalars
tab and the PyTorch Profiler tab list the same runs. Written with tensorboard's own event writer and protos, which
need neither torch nor TensorFlow (torch.utils.tensorboard would import torch into the reporting layer).
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import shutil
import tempfile
import time
from pathlib import Path, PurePosixPath

from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from kernelscope.errors import ResultError
from kernelscope.result import ModeResult, RunResult

# Our event files end with this, so a re-render replaces them and leaves other writers' files alone.
SUFFIX = ".kernelscope"
PREFIX = "kernelscope/"  # one Scalars section holding every kernelscope chart, modes overlaid as runs


def mode_scalars(mode: ModeResult) -> dict[str, float]:
    """The scalars written for one mode (only those the mode measured)."""
    out: dict[str, float] = {}
    if mode.latency_ms is not None:
        out[PREFIX + "steady_latency_median_ms"] = mode.latency_ms.median
        out[PREFIX + "steady_latency_iqr_ms"] = mode.latency_ms.iqr
    if mode.first_call_s is not None:
        out[PREFIX + "first_call_s"] = mode.first_call_s
    if mode.kernels_per_iter is not None:
        out[PREFIX + "kernels_per_iter"] = mode.kernels_per_iter
    if mode.peak_memory_bytes is not None:
        out[PREFIX + "peak_memory_MiB"] = mode.peak_memory_bytes / 2**20
    return out


def _wall_time(created: str) -> float:
    # The run's own date, so the scalars sit at the time of the run, not of a later re-render.
    try:
        return _dt.datetime.fromisoformat(created).timestamp()
    except (TypeError, ValueError):
        return time.time()


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def run_folder(tb_dir: Path, mode: ModeResult) -> Path:
    """The mode's run folder: the one holding its trace (``tb/<run>/<file>``, where the capture may have made
    the mode name folder-safe, e.g. ``max-autotune:CPP`` -> ``max-autotune_CPP``), else the mode name made
    folder-safe the same way. Either way it is exactly one folder inside tb_dir."""
    name = mode.name
    if mode.trace:
        parts = PurePosixPath(mode.trace.replace("\\", "/")).parts
        if len(parts) >= 3 and parts[-3] == tb_dir.name:
            name = parts[-2]
    name = _UNSAFE.sub("_", name)
    if name.strip(".") == "":
        raise ResultError(f"mode name {mode.name!r} cannot be a TensorBoard run folder", "use a plain mode name")
    return tb_dir / name


def _runs(result: RunResult, tb_dir: Path) -> list[tuple[ModeResult, Path]]:
    """(mode, run folder) pairs: one per mode, or with a sweep one per point and mode, beside its trace in
    ``<tb_dir>/<point>/<mode>/`` (so the Scalars tab compares shapes too)."""
    if not result.points:
        return [(m, run_folder(tb_dir, m)) for m in result.modes]
    out = []
    for point in result.points:
        for m in point.modes:
            parts = PurePosixPath((m.trace or "").replace("\\", "/")).parts
            if (len(parts) == 4 and parts[0] == tb_dir.name
                    and all(_UNSAFE.sub("_", x) == x and x.strip(".") for x in parts[1:3])):
                out.append((m, tb_dir / parts[1] / parts[2]))
    return out


def write_scalars(result: RunResult, tb_dir: Path) -> None:
    """Write (or replace) each mode's scalars as one event file in ``<tb_dir>/<mode>/`` (with a sweep,
    ``<tb_dir>/<point>/<mode>/``)."""
    tb_dir = Path(tb_dir)
    wall = _wall_time(result.created)
    for mode, run in _runs(result, tb_dir):
        scalars = mode_scalars(mode)
        if not scalars:
            continue
        run.mkdir(parents=True, exist_ok=True)
        # Write in a private folder beside the target, then rename into place: TensorBoard (possibly running)
        # never reads a half-written file, and a crash leaves the previous scalars intact.
        staging = Path(tempfile.mkdtemp(prefix=".kernelscope-scalars-", dir=run))
        try:
            writer = EventFileWriter(str(staging), filename_suffix=SUFFIX)
            summary = summary_pb2.Summary(
                value=[summary_pb2.Summary.Value(tag=tag, simple_value=v) for tag, v in scalars.items()]
            )
            writer.add_event(event_pb2.Event(wall_time=wall, step=0, summary=summary))
            writer.close()
            (new,) = staging.iterdir()
            for old in run.glob(f"events.out.tfevents.*{SUFFIX}"):
                old.unlink()
            # TensorBoard names event files events.out.tfevents.<time>.<hostname>.<pid>...; reports and their
            # folders get attached to public PRs, so the hostname is replaced (TensorBoard reads any *tfevents*).
            os.replace(new, run / f"events.out.tfevents.{int(wall):010d}.kernelscope{SUFFIX}")
        finally:
            shutil.rmtree(staging, ignore_errors=True)
