"""The lines a run prints on stderr as its modes finish: one per mode (status, first call, median, kernels,
GEMMs), and with --processes > 1 one after each mode's first process."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.text import Text

from kernelscope.capture_record import CaptureRecord
from kernelscope.result import ModeResult

STATUS_STYLE = {"ok": "green", "failed": "red", "timeout": "red", "unavailable": "yellow", "interrupted": "yellow"}


def print_first_process_line(console: Any, label: str, rec: CaptureRecord) -> None:
    """After a mode's first process (with --processes > 1 the result is built once every process ran)."""
    style = STATUS_STYLE.get(rec.status, "white")
    parts = [f"[{style}]{rec.status}[/] (process 1)"]
    if rec.first_call_s is not None:
        parts.append(f"first call {rec.first_call_s:.2f} s")
    if rec.latency_ms is not None:
        parts.append(f"median {rec.latency_ms.median:.3f} ms")
    if rec.error:
        parts.append(escape(rec.error[:200]))
    _print_parts(console, escape(label), parts)


def _print_parts(console: Any, label: str, parts: list[str]) -> None:
    """``label: part · part · ...`` (parts in rich markup), broken between parts where the line would be wider
    than the console, the rest indented: a CI log then never shows a word such as a count alone on a line."""
    width = console.width
    lines = [f"{label}: {parts[0]}"]
    used = Text.from_markup(lines[0]).cell_len
    for part in parts[1:]:
        n = Text.from_markup(part).cell_len
        if used + 3 + n > width:
            lines.append(f"    {part}")
            used = 4 + n
        else:
            lines[-1] += f" · {part}"
            used += 3 + n
    for line in lines:
        console.print(line)


def print_mode_line(console: Any, label: str, m: ModeResult) -> None:
    """One line per finished mode (status, first call, median, kernels, GEMMs); errors wait for the summary."""
    style = STATUS_STYLE.get(m.status, "white")
    parts = [f"[{style}]{m.status}[/]"]
    if m.compile is not None and m.compile.reused:
        parts.append(f"no recompile (first call {m.first_call_s:.2f} s)")
    elif m.first_call_s is not None:
        parts.append(f"first call {m.first_call_s:.2f} s")
    if m.latency_ms is not None:
        lat = m.latency_ms
        across = f" over {lat.processes} processes" if (lat.processes or 1) > 1 else ""
        # 4 significant digits, as the notes: two processes whose medians differ 200x (a contended host) give an
        # interval up to ~1e30 ms, which fixed decimals printed as 31 digits
        iv = f" ({lat.low:.4g}-{lat.high:.4g})" if lat.low is not None and lat.high is not None and across else ""
        parts.append(f"median {lat.median:.3f} ms{across}{iv}")
    if m.kernels_per_iter is not None:
        parts.append(f"{m.kernels_per_iter:g} kernels/iter")
    if m.gemm_summary:
        parts.append(m.gemm_summary)
    if m.error and m.status != "ok":
        # The error itself is printed once, in the summary at the end.
        parts.append(f"{m.error_kind or 'error'}, details at the end" if m.error_kind != "skipped"
                     else "not run")
    _print_parts(console, escape(label), [p if p.startswith("[") else escape(p) for p in parts])
