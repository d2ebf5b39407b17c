"""Compare two runs (base -> head): latency with a noise-aware call, kernel counts, GEMM verdicts, failures.

``compare_results`` builds a ``Comparison`` (plain frozen data, what the tests assert on);
``render_compare_html`` and ``render_compare_markdown`` only print it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from kernelscope.analysis.stats import Ratio, latency_ratio
from kernelscope.report import charts, fmt
from kernelscope.report.context import flatten
from kernelscope.report.html import environment, page_assets
from kernelscope.report.markdown import MAX_CHARS, md_code, md_text
from kernelscope.result import GemmEpilogue, ModeResult, RunResult, Status


@dataclass(frozen=True, slots=True)
class CountDelta:
    key: str  # a category or a backend
    base: float
    head: float

    @property
    def delta(self) -> float:
        return self.head - self.base


@dataclass(frozen=True, slots=True)
class GemmChange:
    """One GEMM matched across the runs by (op, M, N, K, occurrence), or present in one run only."""

    key: str
    base: GemmEpilogue | None
    head: GemmEpilogue | None
    gained: tuple[str, ...]  # epilogue ops fused in head that were not fused in base
    lost: tuple[str, ...]  # ops fused in base that are not fused in head
    backend_switched: bool

    @property
    def kind(self) -> str:
        if self.base is None:
            return "new GEMM"
        if self.head is None:
            return "GEMM gone"
        if self.gained and not self.lost:
            return "fusion gained"
        if self.lost and not self.gained:
            return "fusion lost"
        if self.gained or self.lost:
            return "fusion changed"
        if self.base.verdict != self.head.verdict:
            return "verdict changed"
        return "backend switched" if self.backend_switched else "same"


@dataclass(frozen=True, slots=True)
class ModeDelta:
    name: str
    base: ModeResult | None
    head: ModeResult | None
    latency: Ratio  # head median / base median
    call: str  # "faster" | "slower" | "within noise" | "n/a"
    categories: tuple[CountDelta, ...]
    backends: tuple[CountDelta, ...]
    gemms: tuple[GemmChange, ...]

    @property
    def status_change(self) -> str:
        """"new failure", "fixed", "only in base", "only in head", "still failing", "still unavailable" or ""."""
        if self.base is None:
            return "only in head" + (" (failed)" if not _ok(self.head) else "")
        if self.head is None:
            return "only in base"
        if _ok(self.base) and not _ok(self.head):
            return "new failure"
        if not _ok(self.base) and _ok(self.head):
            return "fixed"
        if not _ok(self.base) and not _ok(self.head):
            unavailable = Status.UNAVAILABLE.value
            return "still unavailable" if self.base.status == self.head.status == unavailable else "still failing"
        return ""

    @property
    def kernels_delta(self) -> CountDelta | None:
        if self.base is None or self.head is None:
            return None
        if self.base.kernels_per_iter is None or self.head.kernels_per_iter is None:
            return None
        return CountDelta("kernels", self.base.kernels_per_iter, self.head.kernels_per_iter)

    @property
    def changed_gemms(self) -> tuple[GemmChange, ...]:
        return tuple(g for g in self.gemms if g.kind != "same")


@dataclass(frozen=True, slots=True)
class Comparison:
    base: RunResult
    head: RunResult
    base_label: str
    head_label: str
    modes: tuple[ModeDelta, ...]
    environment: tuple[tuple[str, str, str], ...]  # (key, base value, head value) where they differ

    @property
    def new_failures(self) -> tuple[ModeDelta, ...]:
        return tuple(m for m in self.modes if m.status_change in ("new failure", "only in head (failed)"))

    @property
    def fixed(self) -> tuple[ModeDelta, ...]:
        return tuple(m for m in self.modes if m.status_change == "fixed")


def _ok(m: ModeResult | None) -> bool:
    return m is not None and m.status == Status.OK.value


def _counts(base: dict[str, float], head: dict[str, float]) -> tuple[CountDelta, ...]:
    keys = list(dict.fromkeys([*base, *head]))
    return tuple(CountDelta(k, base.get(k, 0.0), head.get(k, 0.0)) for k in keys)


def _gemm_key(g: GemmEpilogue) -> str:
    return f"{g.op or 'gemm'} {fmt.shape(g.m, g.n, g.k)}"


def _keyed(gemms: tuple[GemmEpilogue, ...]) -> dict[str, GemmEpilogue]:
    # The nth GEMM of a given op and shape in one run matches the nth in the other: ids are per-run names.
    seen: dict[str, int] = defaultdict(int)
    out: dict[str, GemmEpilogue] = {}
    for g in gemms:
        k = _gemm_key(g)
        seen[k] += 1
        out[k if seen[k] == 1 else f"{k} #{seen[k]}"] = g
    return out


def compare_gemms(base: tuple[GemmEpilogue, ...], head: tuple[GemmEpilogue, ...]) -> tuple[GemmChange, ...]:
    b, h = _keyed(base), _keyed(head)
    out = []
    for key in dict.fromkeys([*b, *h]):
        gb, gh = b.get(key), h.get(key)
        if gb is None or gh is None:
            out.append(GemmChange(key, gb, gh, (), (), False))
            continue
        gained = tuple(op for op in gh.fused if op not in gb.fused)
        lost = tuple(op for op in gb.fused if op not in gh.fused)
        out.append(GemmChange(key, gb, gh, gained, lost, gb.backend != gh.backend))
    return tuple(out)


def _call(r: Ratio) -> str:
    if r.value is None:
        return "n/a"
    if r.within_noise:
        return "within noise"
    return "faster" if r.value < 1 else "slower"


def compare_results(base: RunResult, head: RunResult, base_label: str = "base", head_label: str = "head") -> Comparison:
    names = list(dict.fromkeys([m.name for m in base.modes] + [m.name for m in head.modes]))
    modes = []
    for name in names:
        mb, mh = base.mode(name), head.mode(name)
        r = latency_ratio(mh.latency_ms if _ok(mh) else None, mb.latency_ms if _ok(mb) else None)
        modes.append(ModeDelta(
            name=name, base=mb, head=mh, latency=r, call=_call(r),
            categories=_counts(mb.kernels_by_category if mb else {}, mh.kernels_by_category if mh else {}),
            backends=_counts(mb.kernels_by_backend if mb else {}, mh.kernels_by_backend if mh else {}),
            # GEMMs of a mode that ran in one run only are not "gained" or "lost": the mode itself is.
            gemms=compare_gemms(mb.gemms, mh.gemms) if mb and mh else (),
        ))
    env_b = {kv.key: kv.value for kv in flatten(base.environment)}
    env_h = {kv.key: kv.value for kv in flatten(head.environment)}
    env = tuple((k, env_b.get(k, fmt.DASH), env_h.get(k, fmt.DASH)) for k in dict.fromkeys([*env_b, *env_h])
                if env_b.get(k) != env_h.get(k))
    return Comparison(base, head, base_label, head_label, tuple(modes), env)


def ratio_chart(cmp: Comparison) -> charts.Chart:
    rows = [(m.name, m.latency.value, m.latency.low if m.latency.method == "bootstrap" else None,
             m.latency.high if m.latency.method == "bootstrap" else None, m.latency.within_noise) for m in cmp.modes]
    return charts.ratio_chart("Latency change per mode (head / base)", rows)


# ---------------------------------------------------------------------------------------------------------------
def render_compare_html(cmp: Comparison) -> str:
    template = environment().get_template("compare.html.j2")
    return template.render(cmp=cmp, chart=ratio_chart(cmp), tool_version=cmp.head.tool_version, **page_assets())


def _latency_cell(m: ModeDelta) -> str:
    r = m.latency
    if r.value is None:
        return fmt.DASH
    ci = f" (95% CI {fmt.percent_change(r.low)} to {fmt.percent_change(r.high)})" if r.method == "bootstrap" else ""
    return f"{fmt.percent_change(r.value)} **{m.call}**{ci}"


def _gemm_change_text(g: GemmChange, in_table: bool = False) -> str:
    if g.base is None or g.head is None:
        only = g.head or g.base
        assert only is not None
        return f"{md_text(g.kind)}: {md_text(g.key)} {md_text(only.backend)} {md_text(only.verdict)}"
    parts = [f"{md_text(g.key)}: {md_text(g.kind)}", f"{md_text(g.base.verdict)} → {md_text(g.head.verdict)}"]
    if g.gained:
        parts.append("now fused " + ", ".join(md_text(o, 40) for o in g.gained))
    if g.lost:
        parts.append("no longer fused " + ", ".join(md_text(o, 40) for o in g.lost))
    if g.backend_switched:
        parts.append(f"backend {md_text(g.base.backend)} → {md_text(g.head.backend)}")
    return "; ".join(parts)


def _render_md(cmp: Comparison, max_gemms: int, max_env: int, err_chars: int) -> str:
    out = [(f"## kernelscope compare: {md_code(cmp.base_label, 80, in_table=False)} → "
           f"{md_code(cmp.head_label, 80, in_table=False)}"), ""]
    if cmp.environment:
        out.append("Environment changes: " + "; ".join(
            f"{md_text(k, 60)} {md_text(b, 60)} → {md_text(h, 60)}" for k, b, h in cmp.environment[:max_env]))
        out.append("")
    out.append("| Mode | Status | Latency base → head | Change (head / base) | Kernels/iter | First call |")
    out.append("| --- | --- | --- | --- | --- | --- |")
    for m in cmp.modes:
        status = m.status_change or (m.head.status if m.head else fmt.DASH)
        lat_b = fmt.ms(m.base.latency_ms.median) if m.base and m.base.latency_ms else fmt.DASH
        lat_h = fmt.ms(m.head.latency_ms.median) if m.head and m.head.latency_ms else fmt.DASH
        kd = m.kernels_delta
        kernels = f"{fmt.count(kd.base)} → {fmt.count(kd.head)}" if kd else fmt.DASH
        fc_b = fmt.seconds(m.base.first_call_s) if m.base else fmt.DASH
        fc_h = fmt.seconds(m.head.first_call_s) if m.head else fmt.DASH
        out.append(f"| {md_text(m.name, 40)} | {md_text(status)} | {lat_b} → {lat_h} | {_latency_cell(m)} "
                   f"| {kernels} | {fc_b} → {fc_h} |")
    out.append("")
    out.append("\"within noise\": the 95% bootstrap interval of the ratio of medians contains 1.")
    cat_lines = []
    for m in cmp.modes:
        changed = [c for c in m.categories if c.delta]
        if changed and m.base and m.head:
            cat_lines.append(f"- **{md_text(m.name, 40)}**: " + ", ".join(
                f"{md_text(c.key)} {fmt.count(c.base)} → {fmt.count(c.head)}" for c in changed))
    if cat_lines:
        out += ["", "### Kernel counts per iteration by category", "", *cat_lines]
    gemm_lines = []
    for m in cmp.modes:
        for g in m.changed_gemms[:max_gemms]:
            gemm_lines.append(f"- **{md_text(m.name, 40)}** {_gemm_change_text(g)}")
        if len(m.changed_gemms) > max_gemms:
            gemm_lines.append(f"- _{len(m.changed_gemms) - max_gemms} more GEMM changes in {md_text(m.name, 40)}; "
                              "see compare.html._")
    if gemm_lines:
        out += ["", "### GEMM verdicts and backends", "", *gemm_lines]
    if cmp.new_failures:
        out += ["", "### New failures", ""]
        for m in cmp.new_failures:
            assert m.head is not None
            first = (m.head.error or "").strip().splitlines()
            out.append(f"- **{md_text(m.name, 40)}** ({md_text(m.head.status)}): "
                       f"{md_text(first[-1] if first else '', err_chars)}")
    if cmp.fixed:
        out += ["", "Fixed: " + ", ".join(md_text(m.name, 40) for m in cmp.fixed)]
    return "\n".join(out) + "\n"


def render_compare_markdown(cmp: Comparison) -> str:
    max_gemms, max_env, err = 20, 20, 400
    text = _render_md(cmp, max_gemms, max_env, err)
    while len(text) >= MAX_CHARS and max_gemms > 1:
        max_gemms, max_env, err = max_gemms // 2, max(max_env // 2, 3), max(err // 2, 80)
        text = _render_md(cmp, max_gemms, max_env, err)
    if len(text) >= MAX_CHARS:
        note = "\n\n_Truncated to fit a pull-request comment; see compare.html._\n"
        text = text[: MAX_CHARS - len(note) - 1].rsplit("\n", 1)[0] + note
    return text
