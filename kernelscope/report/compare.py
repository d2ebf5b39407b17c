"""Compare two runs (base -> head): compare.html, compare.md and compare.json print analysis/compare.py's
``Comparison`` (the latency calls, kernel counts, GEMM pairs, failures are all made there) and derive nothing.
"""

from __future__ import annotations

from typing import Any

from kernelscope import fmt
from kernelscope.analysis.compare import Comparison, GemmChange, ModeDelta
from kernelscope.analysis.stats import RERUN_LOG_SD
from kernelscope.report import charts
from kernelscope.report.html import environment, page_assets
from kernelscope.report.markdown import MAX_CHARS, md_code, md_text
from kernelscope.report.ranks import compare_markdown as rank_compare_markdown
from kernelscope.report.ranks import rank_delta_json
from kernelscope.report.words import comparable_headline, field_change, say
from kernelscope.result import LatencyStats, Note


def _lat_json(lat: LatencyStats | None, interval: tuple[float | None, float | None, str]) -> dict[str, Any] | None:
    if lat is None:
        return None
    low, high, method = interval
    return {"median_ms": lat.median, "low_ms": low, "high_ms": high, "interval": method,
            "processes": lat.processes or 1, "per_process_ms": list(lat.per_process)}


def compare_data(cmp: Comparison) -> dict:
    """compare.json: the comparability header first, then per mode the change and per GEMM the verdicts."""
    c = cmp.comparable
    marked = not c.ok
    return {
        "schema": "kernelscope.compare/1",
        "base": cmp.base_label,
        "head": cmp.head_label,
        "comparable": {"ok": c.ok, "forced": c.forced, "headline": comparable_headline(c),
                       "fields": [{"name": n, "base": b, "head": h, "same": b == h} for n, b, h in c.fields],
                       "differences": [field_change(*d) for d in c.differences],
                       "refused": [field_change(*d) for d in c.refused]},
        "modes": [{
            "mode": m.name,
            "status_change": m.status_change,
            "change": m.change,
            "ratio": m.latency.value,
            "low": m.latency.low,
            "high": m.latency.high,
            "interval": m.latency.method,
            "base": _lat_json(m.base.latency_ms if m.base else None, m.base_interval),
            "head": _lat_json(m.head.latency_ms if m.head else None, m.head_interval),
            "kernels_per_iter": ({"base": m.kernels_delta.base, "head": m.kernels_delta.head}
                                 if m.kernels_delta else None),
            "gemms": [{"key": g.key, "kind": g.kind, "base": g.base.verdict if g.base else None,
                       "head": g.head.verdict if g.head else None,
                       "base_backend": g.base.backend if g.base else None,
                       "head_backend": g.head.backend if g.head else None,
                       "gained": list(g.gained), "lost": list(g.lost),
                       "marginal_autotune": g.marginal_autotune, "choice": g.choice} for g in m.gemms],
            "pad_note": _words(m.pad_note),
            "compile_note": _words(m.compile_note),
            "not_comparable": marked,
            "contended": list(m.contended),
            "busy_host": list(m.busy_host),
            **({"ranks": [rank_delta_json(d) for d in m.ranks]} if m.ranks else {}),
        } for m in cmp.modes],
    }


def _words(note: Note | None) -> str:
    return say(note) if note is not None else ""


def compile_choice(m: ModeDelta) -> str:
    """Why a mode's kernels differ between two runs of one build, in words ("" when they do not)."""
    return _words(m.pad_note or m.compile_note)


def ratio_chart(cmp: Comparison) -> charts.Chart:
    rows = [(m.name, m.latency.value, m.latency.low if m.latency.method == "bootstrap" else None,
             m.latency.high if m.latency.method == "bootstrap" else None, m.latency.within_noise) for m in cmp.modes]
    return charts.ratio_chart("Latency change per mode (head / base)", rows)


# ---------------------------------------------------------------------------------------------------------------
def render_compare_html(cmp: Comparison) -> str:
    template = environment().get_template("compare.html.j2")
    return template.render(cmp=cmp, chart=ratio_chart(cmp), tool_version=cmp.head.tool_version,
                           drift_pct=f"{RERUN_LOG_SD * 100:.3g}", headline=comparable_headline(cmp.comparable),
                           compile_choice=compile_choice, **page_assets())


def change_text(m: ModeDelta) -> str:
    """The latency change head vs base read one way, with the call: "2.51× faster (-60.2%)",
    "1.01× slower (+1.0%), within noise"; "" without a latency on both sides."""
    r = m.latency
    if r.value is None:
        return ""
    noise = ", within noise" if m.call == "within noise" else ""
    return f"{fmt.change(r.value)} ({fmt.percent_change(r.value)}){noise}{busy_marker(m)}"


def _latency_cell(m: ModeDelta) -> str:
    r = m.latency
    if r.value is None:
        return fmt.DASH
    ci = (f"; 95% CI {fmt.change_interval(r.low, r.high)}"
          if r.method in ("bootstrap", "processes") and r.low and r.high else "")
    detail = f"({fmt.percent_change(r.value)}{ci})" + busy_marker(m)
    if m.call == "within noise":
        return f"{fmt.change(r.value)}, **within noise** {detail}"
    return f"**{fmt.change(r.value)}** {detail}"


def busy_marker(m: ModeDelta) -> str:
    """" — head timed on a busy machine" when either run's timing of this mode was contended; " — head timed on a
    busy host" when one run's host was busy and the other's quiet (analysis/contention.py)."""
    return ((f" — {' and '.join(m.contended)} timed on a busy machine" if m.contended else "")
            + (f" — {' and '.join(m.busy_host)} timed on a busy host" if m.busy_host else ""))


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
    out += [f"**{md_text(comparable_headline(cmp.comparable), 600)}**", ""]
    if cmp.environment:
        out.append("Environment changes: " + "; ".join(
            f"{md_text(k, 60)} {md_text(b, 60)} → {md_text(h, 60)}" for k, b, h in cmp.environment[:max_env]))
        out.append("")
    out.append("| Mode | Status | Latency base → head | Change (head vs base) | Kernels/iter | First call |")
    out.append("| --- | --- | --- | --- | --- | --- |")
    for m in cmp.modes:
        status = m.status_change or (m.head.status if m.head else fmt.DASH)
        lat_b = fmt.ms(m.base.latency_ms.median) if m.base and m.base.latency_ms else fmt.DASH
        lat_h = fmt.ms(m.head.latency_ms.median) if m.head and m.head.latency_ms else fmt.DASH
        kd = m.kernels_delta
        kernels = f"{fmt.count(kd.base)} → {fmt.count(kd.head)}" if kd else fmt.DASH
        fc_b = fmt.seconds(m.base.first_call_s) if m.base else fmt.DASH
        fc_h = fmt.seconds(m.head.first_call_s) if m.head else fmt.DASH
        mark = " (not comparable)" if not cmp.comparable.ok else ""
        out.append(f"| {md_text(m.name, 40)}{mark} | {md_text(status)} | {lat_b} → {lat_h} | {_latency_cell(m)} "
                   f"| {kernels} | {fc_b} → {fc_h} |")
    out.append("")
    out.append("Change: head vs base, read one way (\"1.10× slower\": head takes 1.10× base's time). "
               "A change is beyond noise (\"faster\"/\"slower\") only when the two runs' 95% intervals of the "
               f"median (across processes, and the host's drift between runs: {RERUN_LOG_SD * 100:.3g}% a run) do "
               "not overlap; otherwise \"within noise\".")
    pads = [f"- **{md_text(m.name, 40)}**: {md_text(compile_choice(m), 600)}" for m in cmp.modes
            if m.pad_note or m.compile_note]
    if pads:
        out += ["", *pads]
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
    for m in cmp.modes:
        out += rank_compare_markdown(m.name, m.ranks)
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
