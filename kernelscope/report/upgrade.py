"""The upgrade comparison's pages: compare.json (``upgrade_data``), compare.md and compare.html.

analysis/upgrade.py's ``UpgradeComparison`` holds the facts (per mode the latency ratio after/before with its
interval, the numerics verdicts, the GEMMs paired across the sides, the regressions); this module phrases them
(the summary whose first lines answer the upgrade question) and renders them; it derives nothing itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kernelscope import fmt
from kernelscope.analysis.pairing import GemmPair
from kernelscope.analysis.speedup import EAGER
from kernelscope.analysis.stats import RERUN_LOG_SD
from kernelscope.analysis.upgrade import KIND, UpgradeComparison, UpgradeMode
from kernelscope.report.evidence_words import why_not_text
from kernelscope.report.words import say
from kernelscope.result import GemmEpilogue, LatencyStats, NumericsVerdict

SCHEMA = "kernelscope.compare/1"

# A summary line is a sequence of segments: (text, is_code). Plain text puts code in backticks; markdown and
# HTML escape each segment as what it is, so a module path or kernel name never becomes markup.
Segment = tuple[str, bool]


# ---------------------------------------------------------------------------------------------------- summary
_ARTICLE = {"Triton template": "a Triton template", "Inductor C++ template": "an Inductor C++ template",
            "CUTLASS": "a CUTLASS kernel", "NVGEMM/CuTeDSL": "an NVGEMM (CuTeDSL) kernel"}


def _in(backend: str) -> str:
    return _ARTICLE.get(backend, backend)


def _ops(ops: Sequence[str]) -> str:
    return "+".join(ops)


def _gemm_phrase(g: GemmPair) -> list[Segment]:
    b, a = g.before, g.after
    head: list[Segment] = [("GEMM ", False), (g.label, True), (" ", False)]
    if b is None:
        assert a is not None
        return [("new ", False), *head, (f"({a.backend}, {a.verdict})", False)]
    if a is None:
        return [*head, (f"gone (was {b.backend}, {b.verdict})", False)]
    was = b.backend + (f" + separate {_ops(b.unfused)}" if b.unfused else "")
    kind = g.change
    if kind in ("fusion gained", "fusion changed") and g.gained:
        still = f", still separate {_ops(a.unfused)}" if a.unfused else ""
        lost = f", no longer {_ops(g.lost)}" if g.lost else ""
        return [*head, (f"now fused {_ops(a.fused)} in {_in(a.backend)}{still}{lost} (was: {was})", False)]
    if kind == "fusion lost":
        now = a.backend + (f" + separate {_ops(a.unfused)}" if a.unfused else "")
        return [*head, (f"no longer fuses {_ops(g.lost)}: {now} (was fused in {b.backend})", False)]
    if kind == "backend switched":
        return [*head, (f"now on {a.backend} (was {b.backend}), {_verdict_words(a)} as before", False)]
    if kind == "verdict changed":
        return [*head, (f"verdict {b.verdict} → {a.verdict} ({a.backend})", False)]
    return [*head, (f"unchanged: {a.backend}, {_verdict_words(a)}", False)]


def _verdict_words(g: GemmEpilogue) -> str:
    if g.fused and not g.unfused:
        return f"fused {_ops(g.fused)}"
    if g.fused:
        return f"fused {_ops(g.fused)}, separate {_ops(g.unfused)}"
    if g.unfused:
        return f"separate {_ops(g.unfused)}"
    return g.verdict


def _speed_phrase(m: UpgradeMode) -> str:
    r = m.latency
    if r.value is None or r.value <= 0:
        return "no latency to compare"
    # Read one way: "1.10× faster after the upgrade", never "0.907× after/before".
    ci = f", 95% CI {fmt.change_interval(r.low, r.high)}" if r.method == "bootstrap" else ""
    busy = (f"; {' and '.join(m.contended)} timed on a busy machine" if m.contended else "") + (
        f"; {' and '.join(m.busy_host)} timed on a busy host" if m.busy_host else "")
    if m.change in ("faster", "slower"):
        return f"{fmt.change(r.value)} ({fmt.ms(m.before.latency_ms.median)} → {fmt.ms(m.after.latency_ms.median)}{busy})"  # type: ignore[union-attr]
    return f"same speed within noise ({fmt.change(r.value)} after the upgrade{ci}{busy})"


def _numerics_phrase(m: UpgradeMode) -> str:
    na, nb = m.numerics_after, m.numerics_before
    if na is None or na.status == "n/a":
        return "numerics not measured"
    if na.status == "fail":
        return f"numerics FAIL ({say(na.reason)})" + (" as before" if nb is not None and nb.status == "fail" else "")
    if na.reason.code == "within-tolerance":
        return "numerics within tolerance"
    return f"numerics pass ({say(na.reason)})"


def mode_summary(m: UpgradeMode) -> list[Segment]:
    """One line answering "what did the upgrade do to this mode?"."""
    out: list[Segment] = [(f"{m.name}: ", False)]
    b, a = m.before, m.after
    sc = m.status_change
    if sc == "only after":
        assert a is not None
        return out + [(f"only after ({a.status})", False)]
    if sc == "only before":
        return out + [("only before (not run after)", False)]
    assert a is not None and b is not None
    if sc == "new failure":
        return out + [(f"now {a.status.upper()} ({fmt.first_line(a.error)}); was ok", False)]
    if sc == "available, fails":
        return out + [(f"now available but {a.status.upper()} ({fmt.first_line(a.error)}); was unavailable "
                       f"({fmt.first_line(b.error)})", False)]
    if sc in ("still failing", "still unavailable"):
        return out + [(f"{sc} ({a.status}: {fmt.first_line(a.error)})", False)]
    parts: list[list[Segment]] = []
    if sc == "fixed":
        parts.append([(f"now runs (was {b.status}: {fmt.first_line(b.error)})", False)])
    changed = sorted((g for g in m.gemms if g.change != "same"), key=lambda g: -g.time_us)
    if changed:
        parts.append(_gemm_phrase(changed[0]))
        if len(changed) > 1:
            parts.append([(f"{len(changed) - 1} more GEMM change{'s' if len(changed) > 2 else ''}", False)])
    elif len(m.gemms) == 1:
        parts.append(_gemm_phrase(m.gemms[0]))
    elif m.gemms:
        parts.append([(f"{len(m.gemms)} GEMMs unchanged", False)])
    if sc != "fixed":
        parts.append([(_speed_phrase(m), False)])
    kb, ka = b.kernels_per_iter, a.kernels_per_iter
    if kb is not None and ka is not None and kb != ka:
        parts.append([(f"kernels/iter {fmt.count(kb)} → {fmt.count(ka)}", False)])
    parts.append([(_numerics_phrase(m), False)])
    if b.ranks or a.ranks:  # torchrun runs: whose figures these are
        parts.append([(f"{len(a.ranks or b.ranks)} ranks, figures of the slowest (rank {b.slowest_rank} → "
                       f"rank {a.slowest_rank})", False)])
    for i, p in enumerate(parts):
        if i:
            out.append(("; ", False))
        out.extend(p)
    return out


def _v(v: str | None) -> str:
    return v or "?"


def headline(cmp: UpgradeComparison) -> list[Segment]:
    """The first line: what was upgraded (torch, python, triton), where, in which dtype."""
    eb, ea = cmp.before.environment, cmp.after.environment
    parts = [f"torch {_v(eb.torch)} → {_v(ea.torch)}"]
    for key, b, a in (("triton", eb.triton, ea.triton), ("python", eb.python, ea.python)):
        if b != a:
            parts.append(f"{key} {_v(b)} → {_v(a)}")
    where = ea.gpu or ea.cpu or cmp.after.device or "?"
    dtype = cmp.after.dtype or cmp.before.dtype
    return [(f"Upgrade check: {', '.join(parts)} on {where}{', ' + dtype if dtype else ''}", False)]


def verdict_line(cmp: UpgradeComparison) -> list[Segment]:
    regs = cmp.regressions
    if regs:
        what = "; ".join(f"{name} {say(r)}" for name, r in regs)
        return [(f"Verdict: REGRESSION ({what})", False)]
    better = cmp.improvements
    tail = f"; better: {', '.join(better)}" if better else ""
    return [(f"Verdict: no regression (no new failure, no mode slower beyond noise, no numerics or fusion "
             f"lost){tail}", False)]


def summary(cmp: UpgradeComparison) -> list[list[Segment]]:
    """The summary's lines, most telling first: the compiled modes, then eager (the baseline's own change)."""
    modes = [m for m in cmp.modes if m.name != EAGER] + [m for m in cmp.modes if m.name == EAGER]
    return [headline(cmp), verdict_line(cmp), *(mode_summary(m) for m in modes)]


def plain(line: Sequence[Segment]) -> str:
    return "".join(f"`{t}`" if code else t for t, code in line)


# ------------------------------------------------------------------------------------------------- JSON view
def _lat(s: LatencyStats | None) -> dict[str, Any] | None:
    if s is None:
        return None
    return {"median_ms": s.median, "q1_ms": s.q1, "q3_ms": s.q3, "iqr_ms": s.iqr, "samples": len(s.samples)}


def _side_gemm(g: GemmEpilogue | None) -> dict[str, Any] | None:
    if g is None:
        return None
    return {"id": g.id, "op": g.op, "module": g.module, "backend": g.backend, "verdict": g.verdict,
            "fused": list(g.fused), "unfused": list(g.unfused), "kernels": list(g.kernels),
            "time_us_per_iter": g.time_us_per_iter, "why_not": why_not_text(g.why_not)}


def _gemm_shape(g: GemmPair) -> str:
    one = g.after or g.before
    assert one is not None
    return fmt.shape(one.m, one.n, one.k) + (f" (batch {one.batch})" if one.batch else "")


def _arrow(before: Any, after: Any) -> str:
    return f"{fmt.DASH if before is None else before} → {fmt.DASH if after is None else after}"


def _numerics(n: NumericsVerdict | None) -> dict[str, Any] | None:
    return None if n is None else {"status": n.status, "reason": say(n.reason), "vs_eager": n.vs_eager,
                                   "vs_reference": n.vs_reference}


def upgrade_data(cmp: UpgradeComparison) -> dict[str, Any]:
    """compare.json: everything the markdown and HTML pages print, as plain JSON."""
    lines = summary(cmp)
    modes = []
    for m in cmp.modes:
        b, a, r = m.before, m.after, m.latency
        modes.append({
            "name": m.name,
            "status": {"before": b.status if b else None, "after": a.status if a else None},
            "status_change": m.status_change,
            "change": m.change,
            "latency": {"before": _lat(b.latency_ms) if b else None, "after": _lat(a.latency_ms) if a else None,
                        "ratio": r.value, "low": r.low, "high": r.high, "method": r.method,
                        "speedup": (1 / r.value) if r.value else None},
            "compile_s": dict(zip(("before", "after"), m.compile_s)),
            "kernels_per_iter": {"before": b.kernels_per_iter if b else None,
                                 "after": a.kernels_per_iter if a else None},
            "peak_memory_bytes": {"before": b.peak_memory_bytes if b else None,
                                  "after": a.peak_memory_bytes if a else None},
            "numerics": {"before": _numerics(m.numerics_before), "after": _numerics(m.numerics_after)},
            "errors": {"before": fmt.first_line(b.error) if b and b.error else "",
                       "after": fmt.first_line(a.error) if a and a.error else ""},
            "gemms": [{"label": g.label, "matched_by": g.matched_by, "change": g.change, "gained": list(g.gained),
                       "lost": list(g.lost), "shape": _gemm_shape(g),
                       "before": _side_gemm(g.before), "after": _side_gemm(g.after)} for g in m.gemms],
            "regressions": [say(r) for r in m.regressions],
            "contended": list(m.contended),
            "busy_host": list(m.busy_host),
            "summary": plain(mode_summary(m)),
            **_ranks_json(m),
        })
    return {
        "schema": SCHEMA,
        "kind": KIND,
        "comparable": cmp.comparable,
        "summary": [plain(line) for line in lines],
        "summary_segments": [[[t, code] for t, code in line] for line in lines],
        "verdict": "regression" if cmp.regressions else "ok",
        "regressions": [{"mode": n, "what": say(r)} for n, r in cmp.regressions],
        "before": {"dir": "before", "command": cmp.before.command, "created": cmp.before.created},
        "after": {"dir": "after", "command": cmp.after.command, "created": cmp.after.created},
        "environment_changes": [list(e) for e in cmp.environment],
        "modes": modes,
    }


def _ranks_json(m: UpgradeMode) -> dict[str, Any]:
    """torchrun runs: each rank before and after, matched by rank index (report/ranks.py)."""
    from kernelscope.report.ranks import rank_delta_json

    return {"ranks": [rank_delta_json(d, ("before", "after")) for d in m.ranks]} if m.ranks else {}


# ------------------------------------------------------------------------------------------------- renderers
def _md_line(segments: Sequence[Sequence[Any]]) -> str:
    from kernelscope.report.markdown import md_code, md_text

    def text(t: str) -> str:  # md_text collapses the spaces at a segment's edges; they separate segments here
        lead, trail = " " if t[:1].isspace() else "", " " if t[-1:].isspace() else ""
        return lead + md_text(t, 600) + trail if t.strip() else t

    return "".join(md_code(t, 200, in_table=False) if code else text(t) for t, code in segments)


def _md_cell(x: Any) -> str:
    from kernelscope.report.markdown import md_text

    return md_text(x, 120)


def _lat_cell(lat: dict[str, Any] | None) -> str:
    if not lat:
        return fmt.DASH
    return f"{fmt.ms(lat['median_ms'])} (IQR {fmt.ms(lat['q1_ms'])}–{fmt.ms(lat['q3_ms'])})"


def _change_cell(m: dict[str, Any]) -> str:
    lat = m["latency"]
    if lat["ratio"] is None:
        return fmt.DASH
    ci = f" (95% CI {fmt.change_interval(lat['low'], lat['high'])})" if lat["method"] == "bootstrap" else ""
    if m["change"] == "none":
        return f"{fmt.change(lat['ratio'])}, **within noise**{ci}"
    return f"**{fmt.change(lat['ratio'])}**{ci}"


def _num_cell(n: dict[str, Any] | None) -> str:
    return fmt.DASH if n is None else n["status"]


def _gemm_side(g: dict[str, Any] | None) -> str:
    if g is None:
        return fmt.DASH
    fused = ", ".join(g["fused"]) or fmt.DASH
    unfused = ", ".join(g["unfused"]) or fmt.DASH
    return f"{g['backend']}, {g['verdict']} (fused {fused}; separate {unfused})"


def render_upgrade_markdown(data: dict[str, Any], max_gemms: int = 20) -> str:
    from kernelscope.report.markdown import MAX_CHARS

    segs = data["summary_segments"]
    out = [f"## {_md_line(segs[0])}", "", f"**{_md_line(segs[1])}**", ""]
    out += [f"- {_md_line(line)}" for line in segs[2:]]
    out += ["", "| Mode | Status before → after | Latency before | Latency after | Change after the upgrade | Compile "
                "| Kernels/iter | Peak memory | Numerics |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for m in data["modes"]:
        st = m["status"]
        out.append(
            f"| {_md_cell(m['name'])} | {_md_cell(_arrow(st['before'], st['after']))} "
            f"| {_lat_cell(m['latency']['before'])} | {_lat_cell(m['latency']['after'])} | {_change_cell(m)} "
            f"| {fmt.seconds(m['compile_s']['before'])} → {fmt.seconds(m['compile_s']['after'])} "
            f"| {fmt.count(m['kernels_per_iter']['before'])} → {fmt.count(m['kernels_per_iter']['after'])} "
            f"| {fmt.nbytes(m['peak_memory_bytes']['before'])} → {fmt.nbytes(m['peak_memory_bytes']['after'])} "
            f"| {_num_cell(m['numerics']['before'])} → {_num_cell(m['numerics']['after'])} |")
    out += ["", "Change: after vs before, read one way (\"1.10× slower\": after takes 1.10× before's time); "
                "\"within noise\": the 95% interval of the ratio of medians contains 1 (across processes, with "
                f"each run's host drift of {RERUN_LOG_SD * 100:.3g}%; a bootstrap over samples for one-process runs)."]
    rows = [(m["name"], g) for m in data["modes"] for g in m["gemms"]]
    if rows:
        out += ["", "### GEMMs (matched by module path and shape, else op and shape)", "",
                "| Mode | GEMM | Shape | Change | Before | After |", "| --- | --- | --- | --- | --- | --- |"]
        for name, g in rows[:max_gemms]:
            out.append(f"| {_md_cell(name)} | {_md_cell(g['label'])} | {_md_cell(g['shape'])} | {_md_cell(g['change'])} "
                       f"| {_md_cell(_gemm_side(g['before']))} | {_md_cell(_gemm_side(g['after']))} |")
        if len(rows) > max_gemms:
            out.append(f"\n_{len(rows) - max_gemms} more GEMM rows in compare.html and compare.json._")
    from kernelscope.report.ranks import upgrade_markdown

    out += upgrade_markdown(data["modes"])  # torchrun runs: per rank before → after
    if data["environment_changes"]:
        out += ["", "Environment changes: " + "; ".join(
            f"{_md_cell(k)} {_md_cell(b)} → {_md_cell(a)}" for k, b, a in data["environment_changes"][:20])]
    text = "\n".join(out) + "\n"
    if len(text) >= MAX_CHARS and max_gemms > 1:
        return render_upgrade_markdown(data, max_gemms // 2)
    return text


def render_upgrade_html(data: dict[str, Any], tool_version: str) -> str:
    from kernelscope.report.html import environment, page_assets

    return environment().from_string(UPGRADE_TEMPLATE).render(d=data, tool_version=tool_version, **page_assets())


# The page extends the shared _layout (CSP, inline CSS/JS, autoescape, StrictUndefined).
UPGRADE_TEMPLATE = r"""{% extends "_layout.html.j2" %}
{#- kernelscope upgrade-check: prints compare.json's data (report/upgrade.py upgrade_data) and derives nothing. -#}
{% block title %}kernelscope upgrade check: torch {{ d.comparable.before.torch }} → {{ d.comparable.after.torch }}{% endblock %}
{% macro line(segments) %}{% for text, code in segments %}{% if code %}<code>{{ text }}</code>{% else %}{{ text }}{% endif %}{% endfor %}{% endmacro %}
{% macro lat(l) %}{% if l %}{{ l.median_ms|ms }}<br><span class="muted small">IQR {{ l.q1_ms|ms }}–{{ l.q3_ms|ms }}</span>{% else %}—{% endif %}{% endmacro %}
{% macro side(g) %}{% if g %}<span class="badge b-{{ g.verdict|badge }}">{{ g.verdict }}</span> {{ g.backend }}
  <br><span class="small">fused: {{ g.fused|join(", ") or "—" }} · separate: {{ g.unfused|join(", ") or "—" }}</span>
  <br><span class="small muted">{% for k in g.kernels %}<code title="{{ k }}">{{ k|short }}</code>{{ "" if loop.last else ", " }}{% endfor %}</span>{% else %}—{% endif %}{% endmacro %}
{% block body %}
<header id="header">
  <h1>{{ line(d.summary_segments[0]) }}</h1>
  <p id="verdict" class="subtitle"><span class="badge b-{{ "fail" if d.verdict == "regression" else "pass" }}">{{ d.verdict }}</span> {{ line(d.summary_segments[1]) }}</p>
  <ul id="summary">
  {% for segs in d.summary_segments[2:] %}<li>{{ line(segs) }}</li>
  {% endfor %}</ul>
  <dl class="meta">
    <dt>Before</dt><dd><code>{{ d.comparable.before.interpreter or "—" }}</code> · torch {{ d.comparable.before.torch }} · python {{ d.comparable.before.python }} · triton {{ d.comparable.before.triton or "—" }}<br><code class="small">{{ d.before.command }}</code></dd>
    <dt>After</dt><dd><code>{{ d.comparable.after.interpreter or "—" }}</code> · torch {{ d.comparable.after.torch }} · python {{ d.comparable.after.python }} · triton {{ d.comparable.after.triton or "—" }}<br><code class="small">{{ d.after.command }}</code></dd>
  </dl>
  <p class="small">Full reports: <a href="before/report.html">before/report.html</a> · <a href="after/report.html">after/report.html</a></p>
</header>

<section id="modes">
  <h2>Modes</h2>
  <div class="scroll">
  <table>
    <thead><tr><th>Mode</th><th>Status</th><th class="num">Latency before</th><th class="num">Latency after</th>
      <th>Change after the upgrade</th><th class="num">Compile</th><th class="num">Kernels / iter</th><th class="num">Peak memory</th><th>Numerics</th></tr></thead>
    <tbody>
    {% for m in d.modes %}
    <tr{% if m.regressions %} class="failed"{% endif %}>
      <td><strong>{{ m.name }}</strong></td>
      <td><span class="badge b-{{ (m.status.before or "n/a")|badge }}">{{ m.status.before or "—" }}</span> → <span class="badge b-{{ (m.status.after or "n/a")|badge }}">{{ m.status.after or "—" }}</span>
        {% if m.status_change %}<br><span class="small">{{ m.status_change }}</span>{% endif %}</td>
      <td class="num">{{ lat(m.latency.before) }}</td>
      <td class="num">{{ lat(m.latency.after) }}</td>
      <td>{% if m.latency.ratio is not none %}{{ m.latency.ratio|change }}
        <span class="badge b-{{ {"none": "within noise"}.get(m.change, m.change)|badge }}">{{ {"none": "within noise"}.get(m.change, m.change) }}</span>
        {% if m.latency.method == "bootstrap" %}<br><span class="muted small">95% CI {{ m.latency.low|change_interval(m.latency.high) }}</span>{% endif %}
        {% else %}—{% endif %}</td>
      <td class="num">{{ m.compile_s.before|seconds }} → {{ m.compile_s.after|seconds }}</td>
      <td class="num">{{ m.kernels_per_iter.before|count }} → {{ m.kernels_per_iter.after|count }}</td>
      <td class="num">{{ m.peak_memory_bytes.before|nbytes }} → {{ m.peak_memory_bytes.after|nbytes }}</td>
      <td>{% for n in (m.numerics.before, m.numerics.after) %}{% if n %}<span class="badge b-{{ n.status|badge }}" title="{{ n.reason }}">{{ n.status }}</span>{% else %}—{% endif %}{{ " → " if loop.first else "" }}{% endfor %}</td>
    </tr>
    {% endfor %}
    </tbody>
  </table>
  </div>
  <p class="caption">Change = after vs before, read one way from the ratio of the latency medians ("1.10× slower":
    after takes 1.10× before's time); "within noise" when its 95% bootstrap interval
    (both sides' recorded timings resampled, seeded) contains 1.0. Compile = the first call's cold compile.</p>
</section>

<section id="gemms">
  <h2>GEMMs before and after</h2>
  {% set any = namespace(v=false) %}
  <table>
    <thead><tr><th>Mode</th><th>GEMM</th><th>Shape</th><th>Change</th><th>Before</th><th>After</th></tr></thead>
    <tbody>
    {% for m in d.modes %}{% for g in m.gemms %}{% set any.v = true %}
    <tr><td>{{ m.name }}</td><td><code>{{ g.label }}</code>{% if g.matched_by %}<br><span class="small muted">matched by {{ g.matched_by }}</span>{% endif %}</td>
      <td>{{ g.shape }}</td>
      <td><span class="badge b-{{ {"fusion gained": "pass", "fusion lost": "fail", "same": "n/a"}.get(g.change, "partial")|badge }}">{{ g.change }}</span>
        {% if g.gained %}<br>now fused: {{ g.gained|join(", ") }}{% endif %}
        {% if g.lost %}<br>no longer fused: {{ g.lost|join(", ") }}{% endif %}</td>
      <td>{{ side(g.before) }}</td><td>{{ side(g.after) }}</td>
    </tr>
    {% endfor %}{% endfor %}
    </tbody>
  </table>
  {% if not any.v %}<p class="muted">No GEMM on either side.</p>{% endif %}
</section>

{% set ranked = d.modes|selectattr("ranks", "defined")|selectattr("ranks")|list %}
{% if ranked %}
<section id="ranks">
  <h2>Ranks</h2>
  <p class="caption">torchrun runs: each rank before and after, matched by rank index; a mode's figures above are its slowest rank's.</p>
  {% for m in ranked %}
  <h3>{{ m.name }}</h3>
  <div class="scroll">
  <table>
    <thead><tr><th>Rank</th><th class="num">Latency before → after</th><th>Change</th><th class="num">Kernels / iter</th>
      <th class="num">Communication / iter</th><th>GEMM verdicts changed</th></tr></thead>
    <tbody>
    {% for r in m.ranks %}
    <tr{% if r.fusion_lost %} class="failed"{% endif %}><td>{{ r.rank }}</td>
      <td class="num">{{ r.before.median_ms|ms if r.before and r.before.median_ms is not none else "—" }} → {{ r.after.median_ms|ms if r.after and r.after.median_ms is not none else "—" }}</td>
      <td>{{ r.ratio|change if r.ratio is not none else "—" }}</td>
      <td class="num">{{ r.before.kernels_per_iter|count if r.before else "—" }} → {{ r.after.kernels_per_iter|count if r.after else "—" }}</td>
      <td class="num">{{ r.before.communication_us_per_iter|us if r.before and r.before.communication_us_per_iter is not none else "—" }} → {{ r.after.communication_us_per_iter|us if r.after and r.after.communication_us_per_iter is not none else "—" }}</td>
      <td class="wrap">{{ r.verdicts_changed|join("; ") or "—" }}</td></tr>
    {% endfor %}
    </tbody>
  </table>
  </div>
  {% endfor %}
</section>
{% endif %}

<section id="failures">
  <h2>Errors</h2>
  {% for m in d.modes if m.errors.before or m.errors.after %}
  <div class="failure"><h3>{{ m.name }}</h3>
    {% if m.errors.before %}<p>before ({{ m.status.before }}): <code>{{ m.errors.before }}</code></p>{% endif %}
    {% if m.errors.after %}<p>after ({{ m.status.after }}): <code>{{ m.errors.after }}</code></p>{% endif %}
  </div>
  {% else %}<p>No mode failed on either side.</p>{% endfor %}
</section>

{% if d.environment_changes %}
<section id="environment">
  <h2>Environment changes</h2>
  <table class="small"><thead><tr><th>Key</th><th>Before</th><th>After</th></tr></thead><tbody>
  {% for key, b, a in d.environment_changes %}<tr><th>{{ key }}</th><td>{{ b }}</td><td>{{ a }}</td></tr>
  {% endfor %}</tbody></table>
</section>
{% endif %}
<footer><p>Generated by kernelscope {{ tool_version }} from before/result.json and after/result.json.</p></footer>
{% endblock %}
"""
