"""Chart geometry for inline SVG: plain shapes computed here, drawn by templates/_svg.html.j2.

Shapes carry text (labels, hover titles) that the template autoescapes; nothing here builds markup, so a kernel
name can never become an element. CSS classes come from fixed tables, never from the data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from kernelscope import fmt
from kernelscope.result import Category, ModeResult, TimelineEntry

# Category order in stacks and legends: the compute categories first, memops last (they are counted apart).
CATEGORY_ORDER: tuple[str, ...] = tuple(c.value for c in Category)


def category_class(category: str) -> str:
    """CSS class for a category; unknown names share "other" so data never chooses a class."""
    return f"cat-{category}" if category in CATEGORY_ORDER else "cat-other"


@dataclass(frozen=True, slots=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    cls: str
    title: str = ""


@dataclass(frozen=True, slots=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    cls: str


@dataclass(frozen=True, slots=True)
class Label:
    x: float
    y: float
    text: str
    anchor: str = "start"  # "start" | "middle" | "end"
    cls: str = ""


@dataclass(frozen=True, slots=True)
class Chart:
    title: str
    width: float
    height: float
    rects: tuple[Rect, ...] = ()
    lines: tuple[Line, ...] = ()
    labels: tuple[Label, ...] = ()
    legend: tuple[tuple[str, str], ...] = ()  # (css class, label)
    caption: str = ""

    @property
    def empty(self) -> bool:
        return not self.rects


WIDTH = 1000.0
LABEL_W = 150.0  # room for the mode names left of the plot
RIGHT_PAD = 170.0  # room for the value printed after each bar
ROW_H = 28.0
TOP = 10.0
AXIS_H = 26.0


def nice_ticks(vmax: float, n: int = 5, *, integer: bool = False) -> list[float]:
    """Round tick values 0..>=vmax (1, 2, 2.5, 5 x 10^k steps) so axes read at a glance; ``integer``: whole
    steps only (counts of kernels have no 0.2)."""
    if vmax <= 0 or not math.isfinite(vmax):
        return [0.0, 1.0]
    raw = max(vmax / n, 1.0) if integer else vmax / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw)
    count = math.ceil(vmax / step - 1e-9)
    return [round(i * step, 12) for i in range(count + 1)]


def label_width(names: Sequence[str]) -> float:
    """Room left of the plot for the longest row name ("max-autotune:ATEN+TRITON+NVGEMM": ~8.5 px a character at
    the label size), between LABEL_W and 320 px."""
    return min(max(LABEL_W, 8.5 * max((len(n) for n in names), default=0) + 16), 320.0)


def _axis(ticks: list[float], scale: float, y: float, unit_fmt, *, x0: float) -> tuple[list[Line], list[Label]]:
    lines = [Line(x0, y, x0 + ticks[-1] * scale, y, "axis")]
    labels = []
    for t in ticks:
        x = x0 + t * scale
        lines.append(Line(x, TOP, x, y, "grid"))
        labels.append(Label(x, y + 16, unit_fmt(t), "middle", "tick"))
    return lines, labels


def latency_chart(modes: Sequence[ModeResult]) -> Chart:
    """Median steady latency per mode as a bar, the interquartile range as a whisker over it."""
    rows = list(modes)
    measured = [m.latency_ms for m in rows if m.latency_ms is not None]
    if not measured:
        return Chart("Steady-state latency per mode", WIDTH, 0)
    vmax = max(max(lat.q3, lat.median) for lat in measured)
    ticks = nice_ticks(vmax)
    lw = label_width([m.name for m in rows])
    scale = (WIDTH - lw - RIGHT_PAD) / ticks[-1]
    rects, lines, labels = [], [], []
    for i, m in enumerate(rows):
        y = TOP + i * ROW_H
        mid = y + ROW_H / 2
        labels.append(Label(lw - 8, mid + 4, m.name, "end", "row-label"))
        lat = m.latency_ms
        if lat is None:
            labels.append(Label(lw + 4, mid + 4, f"no latency ({m.status})", "start", "muted"))
            continue
        title = (
            f"{m.name}: median {fmt.ms(lat.median)}, IQR {fmt.ms(lat.q1)}–{fmt.ms(lat.q3)}"
            f", min {fmt.ms(lat.min)}, {len(lat.samples)} samples"
        )
        rects.append(Rect(lw, y + 6, lat.median * scale, ROW_H - 12, "bar-latency", title))
        x1, x3 = lw + lat.q1 * scale, lw + lat.q3 * scale
        lines += [Line(x1, mid, x3, mid, "whisker"), Line(x1, y + 4, x1, y + ROW_H - 4, "whisker"),
                  Line(x3, y + 4, x3, y + ROW_H - 4, "whisker")]
        labels.append(Label(max(x3, lw + lat.median * scale) + 6, mid + 4,
                            f"{fmt.ms(lat.median)} (IQR {fmt.ms(lat.iqr)})", "start", "value"))
    axis_y = TOP + len(rows) * ROW_H + 4
    # Tick labels in one unit for the whole axis, without trailing zeros ("50 µs", not "50.0 µs").
    if ticks[-1] < 1:
        ax_lines, ax_labels = _axis(ticks, scale, axis_y, lambda t: f"{t * 1000:g} µs", x0=lw)
    else:
        ax_lines, ax_labels = _axis(ticks, scale, axis_y, lambda t: f"{t:g} ms", x0=lw)
    return Chart(
        "Steady-state latency per mode",
        WIDTH,
        axis_y + AXIS_H,
        tuple(rects),
        tuple(ax_lines + lines),
        tuple(ax_labels + labels),
        (("bar-latency", "median"), ("whisker", "interquartile range (q1–q3)")),
        "Bars: median of the timed repeats outside the profiler; whiskers: q1 to q3.",
    )


def kernel_stack_chart(modes: Sequence[ModeResult]) -> Chart:
    """Kernels (and memops) per iteration per mode, stacked by category."""
    rows = [m for m in modes if m.kernels_by_category]
    if not rows:
        return Chart("Kernels per iteration by category", WIDTH, 0)
    totals = [sum(m.kernels_by_category.values()) for m in rows]
    ticks = nice_ticks(max(totals), integer=True)
    lw = label_width([m.name for m in rows])
    scale = (WIDTH - lw - RIGHT_PAD) / ticks[-1]
    rects, labels = [], []
    seen: list[str] = []
    for i, m in enumerate(rows):
        y = TOP + i * ROW_H
        labels.append(Label(lw - 8, y + ROW_H / 2 + 4, m.name, "end", "row-label"))
        x = lw
        cats = sorted(m.kernels_by_category.items(),
                      key=lambda kv: (CATEGORY_ORDER.index(kv[0]) if kv[0] in CATEGORY_ORDER else 99, kv[0]))
        for cat, n in cats:
            if n <= 0:
                continue
            w = n * scale
            rects.append(Rect(x, y + 5, w, ROW_H - 10, category_class(cat), f"{m.name}: {fmt.count(n)} {cat}"))
            if w >= 22:
                labels.append(Label(x + w / 2, y + ROW_H / 2 + 4, fmt.count(n), "middle", "in-bar"))
            x += w
            if cat not in seen:
                seen.append(cat)
        kpi = fmt.count(m.kernels_per_iter)
        noun = "kernel" if m.kernels_per_iter == 1 else "kernels"
        memops = f" + {fmt.count(m.memops_per_iter)} memops" if m.memops_per_iter else ""
        labels.append(Label(x + 6, y + ROW_H / 2 + 4, f"{kpi} {noun}{memops}", "start", "value"))
    axis_y = TOP + len(rows) * ROW_H + 4
    ax_lines, ax_labels = _axis(ticks, scale, axis_y, lambda t: f"{t:g}", x0=lw)
    legend = tuple((category_class(c), c) for c in seen)
    return Chart("Kernels per iteration by category", WIDTH, axis_y + AXIS_H, tuple(rects), tuple(ax_lines),
                 tuple(ax_labels + labels), legend,
                 "Memsets and memcpys are stacked too but counted apart from kernels.")


def timeline_chart(modes: Sequence[ModeResult]) -> Chart:
    """One iteration per mode on a shared time axis: kernels as bars, names on hover."""
    rows = [m for m in modes if m.timeline]
    if not rows:
        return Chart("One iteration per mode (timeline)", WIDTH, 0)
    spans = [max(e.start_us + e.dur_us for e in m.timeline) for m in rows]
    span = max(spans)
    # One shared time axis compares modes directly; but when one mode's iteration is >10x longer (a slow
    # eager op on the CPU, say), the others would shrink to slivers, so each row then gets its own scale.
    own_scale = min(spans) > 0 and span / min(spans) > 10
    ticks = nice_ticks(span)
    lw = label_width([m.name for m in rows])
    plot_w = WIDTH - lw - RIGHT_PAD
    scale = plot_w / ticks[-1]
    rects, labels = [], []
    seen: list[str] = []
    for i, m in enumerate(rows):
        y = TOP + i * ROW_H
        labels.append(Label(lw - 8, y + ROW_H / 2 + 4, m.name, "end", "row-label"))
        if own_scale:
            scale = plot_w / spans[i]
            labels.append(Label(lw + plot_w + 6, y + ROW_H / 2 + 4, f"{fmt.us(spans[i])} (own scale)",
                                "start", "value"))
        for x, right, entries in _drawn(m.timeline, lw, scale):
            rects.append(Rect(x, y + 5, right - x, ROW_H - 10, category_class(_main_category(entries)),
                              _timeline_title(entries)))
            seen.extend(c for c in dict.fromkeys(e.category for e in entries) if c not in seen)
    axis_y = TOP + len(rows) * ROW_H + 4
    if own_scale:
        ax_lines, ax_labels = [Line(lw, axis_y, lw + plot_w, axis_y, "axis")], []
    elif ticks[-1] >= 1000:
        ax_lines, ax_labels = _axis(ticks, plot_w / ticks[-1], axis_y, lambda t: f"{t / 1000:g} ms", x0=lw)
    else:
        ax_lines, ax_labels = _axis(ticks, plot_w / ticks[-1], axis_y, lambda t: f"{t:g} µs", x0=lw)
    legend = tuple((category_class(c), c) for c in CATEGORY_ORDER if c in seen) + tuple(
        (category_class(c), c) for c in seen if c not in CATEGORY_ORDER
    )
    caption = ("Kernel time from the iteration's start (the profiled run, so launch gaps show); "
               "hover a bar for its name (kernels closer than a pixel share a bar).")
    if own_scale:
        caption += " Iterations differ more than 10x in length: each row is drawn to its own scale."
    return Chart("One iteration per mode (timeline)", WIDTH, axis_y + AXIS_H, tuple(rects), tuple(ax_lines),
                 tuple(ax_labels + labels), legend, caption)


MIN_BAR_PX = 1.5  # a 1 µs kernel in a 200 µs iteration must still be visible and hoverable


_Bar = tuple[float, float, list[TimelineEntry]]  # left, right, the kernels drawn as one bar


def _drawn(timeline: Sequence[TimelineEntry], x0: float, scale: float) -> list[_Bar]:
    """(left, right, kernels) of each bar. A kernel that starts within MIN_BAR_PX of a bar's left edge, or while
    the bar's kernels still run, joins that bar: a row has at most one bar per MIN_BAR_PX of plot however many
    kernels the iteration launched (a 64-layer model's thousands), and bars never overlap."""
    bars: list[_Bar] = []
    for e in sorted(timeline, key=lambda e: e.start_us):
        x = x0 + e.start_us * scale
        end = x + e.dur_us * scale
        if bars and (x < bars[-1][0] + MIN_BAR_PX or x < bars[-1][1]):
            left, right, entries = bars[-1]
            entries.append(e)
            bars[-1] = (left, max(right, end), entries)
        else:
            bars.append((x, end, [e]))
    return [(left, max(right, left + MIN_BAR_PX), entries) for left, right, entries in bars]


def _main_category(entries: Sequence[TimelineEntry]) -> str:
    time: dict[str, float] = {}
    for e in entries:
        time[e.category] = time.get(e.category, 0.0) + e.dur_us
    return max(time, key=lambda c: time[c])


def _timeline_title(entries: Sequence[TimelineEntry]) -> str:
    """One kernel: its name (short: full names are in the kernel tables), category, start and length. Several
    in one bar: how many of each category, from when to when, and the first names."""
    e = entries[0]
    if len(entries) == 1:
        return f"{fmt.kernel_name(e.name, 80)}\n{e.category}: starts +{fmt.us(e.start_us)}, runs {fmt.us(e.dur_us)}"
    counts: dict[str, int] = {}
    for k in entries:
        counts[k.category] = counts.get(k.category, 0) + 1
    end = max(k.start_us + k.dur_us for k in entries)
    names = ", ".join(fmt.kernel_name(k.name, 40) for k in entries[:3]) + (", …" if len(entries) > 3 else "")
    return (f"{len(entries)} kernels, +{fmt.us(e.start_us)} to +{fmt.us(end)}: "
            + ", ".join(f"{c} {n}" for c, n in counts.items()) + f"\n{names}")


def ratio_chart(title: str, rows: Sequence[tuple[str, float | None, float | None, float | None, bool | None]]) -> Chart:
    """Forest plot of latency ratios head / base (name, value, low, high, within_noise), read one way.

    x is the speedup base / head on a log scale symmetric around 1×, faster to the right; ticks come in mirrored
    pairs ("2× slower", "1×", "2× faster"), never "0.5×"; each row's label is its interval ("2.49–2.54× slower",
    "1.20× slower to 1.10× faster"), or its point change without one."""
    vals = [v for _, value, low, high, _ in rows for v in (value, low, high) if v]
    if not vals:
        return Chart(title, WIDTH, 0)
    # Symmetric around 1.0, so 2x slower and 2x faster sit at the same distance from "no change".
    extent = max(abs(math.log(v)) for v in vals)
    extent = max(extent * 1.15, math.log(1.1) * 1.15)
    right_pad = RIGHT_PAD + 50  # "1.20× slower to 1.10× faster" after the plot
    label_w = label_width([name for name, *_ in rows])
    plot_w = WIDTH - label_w - right_pad

    def x_of(r: float) -> float:  # r: head / base; its speedup base / head grows to the right
        return label_w + (extent - math.log(r)) / (2 * extent) * plot_w

    rects, lines, labels = [], [], []
    for i, (name, value, low, high, noise) in enumerate(rows):
        y = TOP + i * ROW_H
        mid = y + ROW_H / 2
        labels.append(Label(label_w - 8, mid + 4, name, "end", "row-label"))
        if not value:
            labels.append(Label(label_w + 4, mid + 4, "no latency to compare", "start", "muted"))
            continue
        cls = "noise" if noise else ("better" if value < 1 else "worse")
        interval = fmt.change_interval(low, high) if low and high else ""
        if interval:
            lines.append(Line(x_of(high), mid, x_of(low), mid, f"ci {cls}"))
        ci = f", 95% CI {interval}" if interval else ""
        rects.append(Rect(x_of(value) - 4, mid - 4, 8, 8, f"dot {cls}",
                          f"{name}: {fmt.change(value)} ({fmt.percent_change(value)}){ci}"))
        labels.append(Label(WIDTH - right_pad + 8, mid + 4, interval or fmt.change(value), "start", "value"))
    axis_y = TOP + len(rows) * ROW_H + 4
    lines.append(Line(label_w, axis_y, label_w + plot_w, axis_y, "axis"))
    for t in _log_ticks(-extent, extent, plot_w, min_gap=90.0):
        x = x_of(1 / t)
        lines.append(Line(x, TOP, x, axis_y, "unity" if t == 1.0 else "grid"))
        labels.append(Label(x, axis_y + 16, fmt.factor_tick(t), "middle", "tick"))
    return Chart(title, WIDTH, axis_y + AXIS_H, tuple(rects), tuple(lines), tuple(labels),
                 (("dot better", "faster"), ("dot worse", "slower"), ("dot noise", "within noise")),
                 "Head vs base: base latency / head latency on a log scale, faster to the right; lines: 95% "
                 "interval of the ratio (across processes and each run's host drift; inside one process for "
                 "single-process runs).")


SERIES = 6  # series colours in report.css (.s0 ... .s5); more modes reuse them in order


def _log_ticks(lo: float, hi: float, length: float, min_gap: float = 18.0) -> list[float]:
    """Speedup ticks for a log axis from exp(lo) to exp(hi), in mirrored pairs (2× faster and 2× slower, i.e. 2
    and 0.5) so every tick reads as a whole factor one way: 1× first, then powers of ten, then 2× / 5× and finer
    factors, each kept only when at least ``min_gap`` pixels (of ``length`` for the whole axis) from every tick
    kept before it."""
    per_px = (hi - lo) / length
    e_hi = max(math.ceil(max(abs(lo), abs(hi)) / math.log(10)) + 1, 1)
    factors = [[10.0 ** e for e in range(1, e_hi + 1)],
               [k * 10.0 ** e for e in range(0, e_hi + 1) for k in (2, 5)],
               [1.25, 1.5, 3.0], [1.1]]
    tiers = [[1.0]] + [[v for f in tier for v in (f, 1 / f)] for tier in factors]
    kept: list[float] = []
    for tier in tiers:
        for t in tier:
            lt = math.log(t)
            if lo - 1e-9 <= lt <= hi + 1e-9 and all(abs(lt - math.log(k)) / per_px >= min_gap for k in kept):
                kept.append(t)
    return sorted(kept)


def speedup_vs_shape_chart(rows, modes: Sequence[str], axis: str | None) -> Chart:
    """Speedup vs eager per compiled mode across the sweep's shape points, with each point's 95% interval.

    ``rows``: context.SweepRow (label, params, cells). x: the points in sweep order, spaced by log(value) when one
    numeric parameter varies (batch 1, 16, 256 sit evenly), else evenly; y: log scale around 1.0 (no change).
    """
    title = "Speedup vs eager across shapes"
    series = [m for m in modes if m != "eager"]
    pts: list[tuple[int, int, object]] = []  # (series index, row index, cell)
    for ri, row in enumerate(rows):
        for cell in row.cells:
            if cell.mode in series and cell.speedup.value:
                pts.append((series.index(cell.mode), ri, cell))
    if not pts or not rows:
        return Chart(title, WIDTH, 0)
    logs = [math.log(v) for _, _, c in pts for v in (c.speedup.value, c.speedup.low, c.speedup.high) if v]
    # The y range covers the data and 1x (no change), padded; not symmetric: speedups of 100x leave no room
    # wasted below 1x.
    lo_y, hi_y = min(0.0, *logs), max(0.0, *logs)
    pad = max((hi_y - lo_y) * 0.08, math.log(1.25))
    lo_y, hi_y = lo_y - pad, hi_y + pad
    left, right, top, plot_h = 100.0, 40.0, TOP + 6, 240.0
    plot_w = WIDTH - left - right
    if axis is not None:
        xs = [math.log(float(row.params[axis])) for row in rows]
    else:
        xs = [float(i) for i in range(len(rows))]
    lo_x, hi_x = min(xs), max(xs)
    span = (hi_x - lo_x) or 1.0

    def x_of(i: int) -> float:
        pad = 0.06 * plot_w
        return left + pad + (xs[i] - lo_x) / span * (plot_w - 2 * pad) if len(rows) > 1 else left + plot_w / 2

    def y_of(v: float) -> float:
        return top + (hi_y - math.log(v)) / (hi_y - lo_y) * plot_h

    lines: list[Line] = []
    labels: list[Label] = []
    rects: list[Rect] = []
    bottom = top + plot_h
    for t in _log_ticks(lo_y, hi_y, plot_h):
        y = y_of(t)
        lines.append(Line(left, y, left + plot_w, y, "unity" if t == 1.0 else "grid"))
        labels.append(Label(left - 8, y + 4, fmt.factor_tick(t), "end", "tick"))
    lines.append(Line(left, bottom, left + plot_w, bottom, "axis"))
    for i, row in enumerate(rows):
        x = x_of(i)
        lines.append(Line(x, top, x, bottom, "grid"))
        text = str(row.params[axis]) if axis is not None else row.label
        labels.append(Label(x, bottom + 16, fmt.short(text, 28), "middle", "tick"))
    if axis is not None:
        labels.append(Label(left + plot_w / 2, bottom + 34, f"{axis} (log scale)", "middle", "tick"))
    by_series: dict[int, list[tuple[int, object]]] = {}
    for si, ri, cell in pts:
        by_series.setdefault(si, []).append((ri, cell))
    for si, items in sorted(by_series.items()):
        cls = f"s{si % SERIES}"
        items.sort(key=lambda it: it[0])
        for (r0, c0), (r1, c1) in zip(items, items[1:]):
            lines.append(Line(x_of(r0), y_of(c0.speedup.value), x_of(r1), y_of(c1.speedup.value), f"series {cls}"))
        for ri, c in items:
            sp = c.speedup
            x, y = x_of(ri), y_of(sp.value)
            if sp.low and sp.high:
                lines.append(Line(x, y_of(sp.high), x, y_of(sp.low), f"ci-v {cls}"))
            ci = f" (95% CI {sp.interval_text})" if sp.low and sp.high else ""
            rects.append(Rect(x - 4, y - 4, 8, 8, f"dot-s {cls}",
                              f"{c.mode} @ {rows[ri].label}: {sp.text}{ci}{', within noise' if sp.noisy else ''}"))
    legend = tuple((f"s{si % SERIES}", series[si]) for si in sorted(by_series))
    return Chart(title, WIDTH, bottom + (44 if axis is not None else 28), tuple(rects), tuple(lines),
                 tuple(labels), legend,
                 "Speedup vs eager (eager median / mode median) at each shape, log scale: above 1× is faster than "
                 "eager, below it slower; vertical bars: 95% bootstrap interval; a bar crossing 1× is within noise.")
