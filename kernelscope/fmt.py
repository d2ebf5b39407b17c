"""Number formatting shared by every renderer, so html, md and the terminal print the same figures."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from kernelscope.result import RunEnvironment, to_json

DASH = "—"
ELLIPSIS = "…"  # "and more" after a list that was cut


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
    """A plain factor, for limits >= 1 only: a ratio below 1 shown to a reader goes through ``speedup`` or
    ``change`` ("1.12× slower", never "0.891×")."""
    return DASH if x is None else f"{_sig(x)}×"


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
    """A long text cut for a narrow cell (the full text stays in a title or an expanded row)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def middle(text: str, limit: int) -> str:
    """Cut in the middle: kernel names carry their meaning at both ends (``nvjet_..._bias_TNT``)."""
    if len(text) <= limit:
        return text
    tail = max(limit // 3, 1)
    return text[: max(limit - tail - 1, 1)] + "…" + text[-tail:]


# Identifiers in a kernel's template arguments that say nothing about what it computes: types, keywords and the
# wrappers every ATen kernel goes through. What remains (CUDAFunctor_add, GeluCUDAKernelImpl, MeanOps) names it.
_NOISE = frozenset("""
    void int long short char float double bool signed unsigned const true false operator lambda auto size_t
    half __half Half BFloat16 __nv_bfloat16 bfloat16_t float16_t half_t c10 std array at native detail cuda
    anonymous namespace TensorIteratorBase TensorIterator OffsetCalculator TensorListMetadata IntDivider
    gpu_kernel_impl gpu_kernel_impl_nocast gpu_kernel_nocast gpu_kernel LoadWithoutCast StoreWithoutCast
    GeluType ul ull u
""".split())
_IDENT = re.compile(r"(?<![\w])[A-Za-z_]\w*")
_CPP_HINT = re.compile(r"<|::")


def _top_level(text: str, stop: str) -> int:
    """Index of the first ``stop`` character outside <>, (), [] and {} (-1 when none)."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "<([{":
            if ch == stop and depth == 0:
                return i
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif ch == stop and depth == 0:
            return i
    return -1


def _split_scope(name: str) -> str:
    """``at::native::foo<...>`` -> ``foo<...>`` (the last ``::`` component outside template brackets)."""
    depth, last = 0, 0
    i = 0
    while i < len(name):
        ch = name[i]
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif depth == 0 and name.startswith("::", i):
            last = i + 2
            i += 1
        i += 1
    return name[last:]


def _template_hint(args: str) -> str:
    """The identifier of a kernel's template arguments that names what it does, or "".

    The last functor (``CUDAFunctor_add``, ``MulFunctor`` inside ``BUnaryFunctor<..., MulFunctor>``) or reduction
    ops class wins; else the first identifier that is neither a type, a keyword, a namespace nor a wrapper."""
    found = []
    for m in _IDENT.finditer(args):
        word, nxt = m.group(), args[m.end(): m.end() + 2]
        if word in _NOISE or nxt == "::" and not word[:1].isupper():
            continue  # a lower-case name followed by :: is a namespace
        if nxt == "::" and word[:1].isupper() and not word.endswith(("Impl", "Functor", "Ops")):
            continue
        found.append(word)
    functors = [w for w in found if "Functor" in w or w.endswith("Ops")]
    if functors:
        return functors[-1]
    return found[0] if found else ""


def kernel_name(name: str, limit: int = 60) -> str:
    """A short, readable form of a kernel name for tables and terminals; the full name stays in the result.

    A demangled C++ signature (``void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<
    c10::BFloat16>, std::array<char*, 3ul> >(int, ...)``) becomes its function name with the template argument
    that says what it computes (``vectorized_elementwise_kernel<CUDAFunctor_add>``); any name still longer than
    ``limit`` is cut in the middle."""
    text = " ".join(str(name).split())
    if _CPP_HINT.search(text):
        text = re.sub(r"^(?:void|__global__)\s+", "", text).replace("(anonymous namespace)::", "")
        paren = _top_level(text, "(")
        head = text[:paren] if paren > 0 else text
        func = _split_scope(head).strip()
        lt = _top_level(func, "<")
        if lt > 0:
            base, args = func[:lt], func[lt + 1:].rstrip().rstrip(">")
            hint = _template_hint(args)
            func = f"{base}<{hint}>" if hint else base
        text = func or text
    return middle(text, limit)


def flops_rate(tflops: float | None) -> str:
    """TFLOP/s scaled to the unit that reads best: 472 TFLOP/s, 38.1 GFLOP/s, 1.20 PFLOP/s."""
    if tflops is None:
        return DASH
    if abs(tflops) >= 1000:
        return f"{_sig(tflops / 1000)} PFLOP/s"
    if abs(tflops) >= 1 or tflops == 0:
        return f"{_sig(tflops)} TFLOP/s"
    if abs(tflops) >= 1e-3:
        return f"{_sig(tflops * 1000)} GFLOP/s"
    return f"{_sig(tflops * 1e6)} MFLOP/s"


def bandwidth(gbps: float | None) -> str:
    """GB/s scaled: 3.59 TB/s, 412 GB/s, 18.2 MB/s (decimal units, as datasheets print them)."""
    if gbps is None:
        return DASH
    if abs(gbps) >= 1000:
        return f"{_sig(gbps / 1000)} TB/s"
    if abs(gbps) >= 1 or gbps == 0:
        return f"{_sig(gbps)} GB/s"
    return f"{_sig(gbps * 1000)} MB/s"


def speedup(value: float | None) -> str:
    """A speedup read one way: 1.12 -> "1.12× faster", 0.891 -> "1.12× slower" (never "0.891× slower")."""
    if value is None or value <= 0:
        return DASH
    if value >= 1:
        return f"{_sig(value)}× faster" if _sig(value) != "1.00" else "1.00×"
    return f"{_sig(1 / value)}× slower" if _sig(1 / value) != "1.00" else "1.00×"


def _factor(x: float) -> tuple[str, str]:
    """A speedup as (factor >= 1, direction): 1.12 -> ("1.12", "faster"), 0.891 -> ("1.12", "slower"); a factor
    that prints as 1.00 has no direction ("1.00", "")."""
    f, word = (x, "faster") if x >= 1 else (1 / x, "slower")
    text = _sig(f)
    return (text, "") if text == "1.00" else (text, word)


def speedup_interval(low: float | None, high: float | None, value: float | None = None) -> str:
    """The 95% interval of a speedup, read one way like ``speedup``: "2.49–2.54× slower", "1.10–1.20× faster",
    and across 1 "1.20× slower to 1.10× faster" (the slow end first). ``value`` is unused (kept for callers)."""
    if low is None or high is None or low <= 0 or high <= 0:
        return ""
    low, high = min(low, high), max(low, high)
    (lo_f, lo_w), (hi_f, hi_w) = _factor(low), _factor(high)
    if lo_w == "slower" and hi_w == "faster":
        return f"{lo_f}× slower to {hi_f}× faster"
    if "slower" in (lo_w, hi_w):  # both ends at or below 1: the smaller slowdown (the high end) first
        return f"{hi_f}–{lo_f}× slower"
    if "faster" in (lo_w, hi_w):
        return f"{lo_f}–{hi_f}× faster"
    return "1.00×"


def change(r: float | None) -> str:
    """A latency ratio new / old (head / base, after / before, mode / eager) read one way: 1.12 -> "1.12× slower",
    0.891 -> "1.12× faster" (never "0.891×")."""
    return DASH if r is None or r <= 0 else speedup(1 / r)


def change_interval(low: float | None, high: float | None) -> str:
    """The interval of a latency ratio new / old read one way: (0.393, 0.402) -> "2.49–2.54× faster"."""
    if low is None or high is None or low <= 0 or high <= 0:
        return ""
    return speedup_interval(1 / high, 1 / low)


def factor_tick(t: float) -> str:
    """A tick of a speedup axis, mirrored around 1×: 2 -> "2× faster", 0.5 -> "2× slower", 1 -> "1×"."""
    if abs(t - 1) < 1e-9:
        return "1×"
    f = t if t > 1 else 1 / t
    return f"{round(f, 6):g}× {'faster' if t > 1 else 'slower'}"


def first_call(x: float | None) -> str:
    """First-call (compile + autotune + one run) time, always in seconds so a column compares at a glance:
    eager's 0.0003 s next to max-autotune's 6.40 s."""
    if x is None:
        return DASH
    if x >= 100:
        return f"{x:.0f} s"
    if x >= 1:
        return f"{x:.2f} s"
    if x >= 0.01:
        return f"{x:.3f} s"
    return f"{x:.4f} s" if x >= 0.00005 else "<0.0001 s"


def shape(m: int | None, n: int | None, k: int | None, batch: int | None = None) -> str:
    """M × N × K, with the batch count of a bmm first ("8 × 512 × 512 × 64" reads batch × M × N × K)."""
    if m is None and n is None and k is None:
        return DASH
    dims = (m, n, k) if batch is None else (batch, m, n, k)
    return " × ".join("?" if v is None else str(v) for v in dims)


def fraction(x: float | None) -> str:
    """A share of elements as a percentage: 0 -> "0", 0.0123 -> "1.23%" (tiny non-zero shares stay visible)."""
    if x is None:
        return DASH
    if x == 0:
        return "0"
    return f"{x * 100:.3g}%"


def first_line(text: str, limit: int = 160) -> str:
    """The first non-empty line of an error, cut to ``limit``: what a one-line summary or a gate's message says."""
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    return short(lines[0].strip(), limit) if lines else "no reason given"


@dataclass(frozen=True, slots=True)
class KV:
    key: str
    value: str


def environment_rows(env: RunEnvironment) -> list[KV]:
    """The environment as "key / sub-key: value" rows, in the record's order; what it did not record (None, no
    GEMM backends) is left out."""
    data = {k: v for k, v in to_json(env).items() if v is not None and v != {}}
    return flatten(data)


def flatten(data: Any, prefix: str = "") -> list[KV]:
    """Any JSON-like dict as "a / b: value" rows, so the report shows whatever keys the run recorded."""
    rows: list[KV] = []
    if isinstance(data, dict):
        if not data and prefix:
            rows.append(KV(prefix, DASH))
        for k, v in data.items():
            rows += flatten(v, f"{prefix} / {k}" if prefix else str(k))
        return rows
    if isinstance(data, (list, tuple)):
        if all(not isinstance(v, (dict, list, tuple)) for v in data):
            return [KV(prefix, ", ".join(_scalar(v) for v in data) or DASH)]
        for i, v in enumerate(data):
            rows += flatten(v, f"{prefix} / {i}")
        return rows
    return [KV(prefix, _scalar(data))]


def _scalar(v: Any) -> str:
    if v is None or v == "":
        return DASH
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)
