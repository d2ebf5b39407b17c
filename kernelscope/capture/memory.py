"""Peak memory of a mode: the GPU allocator's peaks, or on the CPU the resident set's high-water mark over a
window (Linux VmHWM, reset between the build, the compile, the warm-up and the timed calls).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kernelscope.capture.setup import _Setup


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


def _peak_rss() -> int:
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # Linux reports KiB


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
