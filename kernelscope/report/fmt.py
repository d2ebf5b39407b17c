"""Number formatting shared by every renderer, so html, md and the terminal print the same figures."""

from __future__ import annotations

import math

DASH = "—"


def _sig(x: float, digits: int = 3) -> str:
    if x == 0:
        return "0"
    if not math.isfinite(x):
        return str(x)
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    return f"{x:.{decimals}f}"


def ms(x: float | None) -> str:
    """Milliseconds; below 1 ms in microseconds, the unit GPU latencies of small models read in (one unit for
    the whole sub-millisecond range, so a column of them compares at a glance)."""
    if x is None:
        return DASH
    return f"{_sig(x * 1000)} µs" if abs(x) < 1 else f"{_sig(x)} ms"


def seconds(x: float | None) -> str:
    if x is None:
        return DASH
    return f"{_sig(x * 1000)} ms" if x < 0.1 else f"{_sig(x)} s"


def us(x: float | None) -> str:
    if x is None:
        return DASH
    return f"{_sig(x / 1000)} ms" if abs(x) >= 1000 else f"{_sig(x)} µs"


def count(x: float | None) -> str:
    # Kernels per iteration are whole numbers when every iteration launched the same kernels.
    if x is None:
        return DASH
    return str(int(x)) if float(x).is_integer() else f"{x:.2f}"


def nbytes(x: float | None) -> str:
    if x is None:
        return DASH
    value = float(x)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{_sig(value)} {unit}"
        value /= 1024
    return DASH  # unreachable: the loop returns at TiB


def ratio(x: float | None) -> str:
    return DASH if x is None else f"{_sig(x)}×"


def interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"{_sig(low)}–{_sig(high)}×"


def sci(x: float | None) -> str:
    """Errors and tolerances: small numbers that need their exponent."""
    if x is None:
        return DASH
    if x == 0:
        return "0"
    return f"{x:.3g}" if 1e-3 <= abs(x) < 1e4 else f"{x:.2e}"


def percent_change(r: float | None) -> str:
    """A latency ratio as a signed change: 0.8 -> "-20.0%"."""
    return DASH if r is None else f"{(r - 1) * 100:+.1f}%"


def short(text: str, limit: int = 64) -> str:
    """A long kernel name cut for a narrow cell (the full name stays in a title and in the kernel table)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shape(m: int | None, n: int | None, k: int | None) -> str:
    if m is None and n is None and k is None:
        return DASH
    return " × ".join("?" if v is None else str(v) for v in (m, n, k))


def fraction(x: float | None) -> str:
    """A share of elements as a percentage: 0 -> "0", 0.0123 -> "1.23%" (tiny non-zero shares stay visible)."""
    if x is None:
        return DASH
    if x == 0:
        return "0"
    return f"{x * 100:.3g}%"
