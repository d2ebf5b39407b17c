"""The profile of a mode: a few iterations under torch.profiler into a TensorBoard trace named after the worker
(never the hostname), with the hostname Kineto writes into the trace's metadata scrubbed.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

from kernelscope.capture.eager_ranges import _EagerRanges, _module_ranges
from kernelscope.capture.timing import _Timer
from kernelscope.files import atomic_write_bytes

WORKER_NAME = "kernelscope"  # trace file prefix; never the hostname (reports get attached to public PRs)


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
