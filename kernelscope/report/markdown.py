"""summary.md: a short Markdown report for a pull-request comment (``gh pr comment --body-file summary.md``).

GitHub rejects comments over 65,536 characters, so the summary stays under ``MAX_CHARS`` however large the model:
GEMMs come one line per group of identical layers (a 16-layer Llama's three modes read in ~11,000 characters),
tables shrink (with a note saying how much was left out) until it fits, and ``cap`` cuts what is still too long
at a line outside any code fence, with a note pointing to report.html. Data from the result never reaches the
Markdown as markup: kernel and op names, and any other word that could form markup, go in code spans (no links,
HTML or emphasis inside), the rest is plain prose without backslash escapes, and ``|`` is escaped in table cells.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kernelscope import fmt
from kernelscope.report.context import CoverageRow, GroupRow, ReportContext, build_context
from kernelscope.result import RunResult

MAX_CHARS = 60_000

_BACKTICKS = re.compile(r"`+")
# A word holding any of these could start markup (emphasis, a link, HTML, an entity, a code span, a table cell
# break) or a GFM autolink: such words go in a code span, where nothing is markup; all other words are plain.
_MARKUP = re.compile(r"[\\`*_\[\]<>&|~!]|://|^www\.", re.IGNORECASE)
# Punctuation around a word that stays outside its code span ("(triton_poi_fused_gelu_0)," reads as prose).
_EDGE = re.compile(r"^([(\"']*)(.*?)([)\"',;:.]*)$", re.S)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def md_text(text: object, limit: int = 300, *, in_table: bool = True) -> str:
    """Prose from the result in Markdown: every word that could form markup (a kernel name with ``_`` or
    ``<>``, a URL, ``[x](y)``, ``<b>``, ``|``) goes in a code span, the rest stays as written, so a summary reads
    without backslashes and no link, HTML, emphasis or table break can come from the data."""
    out = []
    for word in _cut(_one_line(str(text)), limit).split(" "):
        if not _MARKUP.search(word):
            out.append(word)
            continue
        lead, core, trail = _EDGE.match(word).groups()  # type: ignore[union-attr]
        if not core or _MARKUP.search(lead + trail):
            lead, core, trail = "", word, ""
        out.append(f"{lead}{md_code(core, len(core) + 1, in_table=in_table)}{trail}")
    return " ".join(out)


def md_code(text: object, limit: int = 120, *, in_table: bool = True) -> str:
    """Text as an inline code span whatever it contains: the fence is one backtick longer than the longest run
    inside, and in a table ``|`` becomes ``\\|`` (GFM unescapes it inside code spans in cells)."""
    body = _cut(_one_line(str(text)), limit)
    longest = max((len(m) for m in _BACKTICKS.findall(body)), default=0)
    fence = "`" * (longest + 1)
    if in_table:
        body = body.replace("|", "\\|")
    if body.startswith(("`", " ")) or body.endswith(("`", " ")):
        body = f" {body} "
    return f"{fence}{body}{fence}" if body.strip() else "` `"


def md_block(text: str, limit: int) -> str:
    """A fenced code block holding ``text`` verbatim (fence longer than any backtick run inside)."""
    body = _cut(str(text).rstrip(), limit)
    longest = max((len(m) for m in _BACKTICKS.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{body}\n{fence}"


@dataclass(frozen=True, slots=True)
class Limits:
    modes: int = 30
    groups_per_mode: int = 20  # groups of identical layers (a 1B Llama has 7 per mode)
    error_chars: int = 1500
    name_chars: int = 100

    def smaller(self) -> Limits:
        return Limits(max(self.modes // 2, 3), max(self.groups_per_mode // 2, 1), max(self.error_chars // 2, 200),
                      max(self.name_chars - 20, 40))


def _speedup_cell(row) -> str:
    sp = row.speedup
    if sp.call == "baseline":
        return "baseline"
    if sp.value is None:
        return fmt.DASH
    ci = f" (95% CI {sp.interval_text})" if sp.method in ("bootstrap", "processes") and sp.low is not None else ""
    noise = ", within noise" if sp.noisy else ""
    return f"**{sp.text}**{noise}{ci}"


def _numerics_cell(row) -> str:
    """The mode's one numerics call (the Numerics table's verdict) with its largest errors vs eager."""
    n = row.numerics
    if n.status in ("reference", "n/a"):
        return n.status
    return f"{n.status} (abs {fmt.sci(row.mode.max_abs_error)}, rel {fmt.sci(row.mode.max_rel_error)})"


def _latency_cell(m) -> str:
    lat = m.latency_ms
    return fmt.DASH if lat is None else f"{fmt.ms(lat.median)} ± {fmt.ms(lat.iqr / 2)}"


def _memory_cell(row) -> str:
    text = fmt.nbytes(row.mode.peak_memory_bytes)
    return f"{text} ({row.memory_kind})" if row.memory_kind and row.mode.peak_memory_bytes is not None else text


def _ops(ops, lim: Limits) -> str:
    return ", ".join(md_code(o, 40, in_table=False) for o in ops)


def _kernels(names, lim: Limits, n: int = 3) -> str:
    return ", ".join(k if k == fmt.ELLIPSIS else md_code(fmt.kernel_name(k, lim.name_chars), lim.name_chars + 1,
                                                          in_table=False) for k in names[:n])


def _group_item(grp: GroupRow, lim: Limits) -> str:
    """One group of identical layers (or one GEMM): "- `mm` `layers.0-15.mlp.up_proj` ×16, 512 × 2816 × 1024 on
    cuBLASLt: **unfused**; unfused `mul` in `...`", how a layer that differs from its group differs, the why-not
    once."""
    g = grp.first
    label = g.module if grp.count == 1 else grp.label
    where = f" {md_code(label, 120, in_table=False)}" if label else ""
    many = f" ×{grp.count}," if grp.count > 1 else ""
    parts = [f"{md_code(g.op or 'gemm', 40, in_table=False)}{where}{many} {fmt.shape(g.m, g.n, g.k, g.batch)} on "
             f"{md_text(g.backend, in_table=False)}: **{md_text(g.verdict, in_table=False)}**"]
    if g.fused:
        parts.append("fused " + _ops(g.fused, lim))
    if g.unfused:
        where = f" in {_kernels(grp.unfused_kernels, lim)}" if grp.unfused_kernels else ""
        parts.append("unfused " + _ops(g.unfused, lim) + where)
    if g.confidence == "trace-only":
        parts.append("from the trace only")
    line = "- " + "; ".join(parts)
    if grp.group.differs_from:
        line += (f". **Differs** from {md_code(grp.group.differs_from, 120, in_table=False)}: "
                 f"{md_text(grp.group.difference, 300, in_table=False)}")
    if grp.why_not:
        line += f". Why not: {md_text(grp.why_not, 400, in_table=False)}"
    return line


def _recommendation(ctx: ReportContext, lim: Limits) -> list[str]:
    recs = ctx.recommendations
    if not recs:
        return []
    out = ["", "### Recommendation", ""]
    for rec in recs[: lim.modes]:
        where = f"**{md_text(rec.label, 80)}**: " if rec.label else ""
        use = f"use **{md_text(rec.mode, 40, in_table=False)}**" if rec.mode else "**no working mode**"
        out.append(f"- {where}{use}: {md_text(rec.reason, 400, in_table=False)}")
    if len(recs) > lim.modes:
        out.append(f"- _{len(recs) - lim.modes} more shapes; see report.html._")
    return out


def _advice(ctx: ReportContext, lim: Limits) -> list[str]:
    """Fusion advice: a line per GEMM group not all fused, a line per candidate, the best one's line to copy."""
    if not ctx.advice:
        return []
    out = ["", "### Fusion advice", ""]
    for row in ctx.advice[: lim.groups_per_mode * 2]:
        a = row.a
        head = (f"- **{md_text(a.group, lim.name_chars, in_table=False)}** ({md_text(a.mode, 40, in_table=False)}):"
                f" {md_text(', '.join(a.unfused), in_table=False)} unfused ({md_text(row.cause, in_table=False)})")
        if not row.candidates:
            out.append(f"{head}: no setting: {md_text(row.no_setting, 400, in_table=False)}")
            continue
        out.append(head)
        for c in row.candidates:
            if c.ran:
                what = (f"{md_text(c.ops, 200, in_table=False)}; whole model {md_text(c.ratio, in_table=False)}, "
                        f"compile {md_text(c.compile, in_table=False)}, numerics {c.numerics}")
            else:
                what = md_text(c.why, 300, in_table=False)
            best = " **best**" if c.best else ""
            out.append(f"  - {md_code(c.c.mode_name, 80, in_table=False)}: {md_text(c.verdict, in_table=False)}"
                       f"{best}: {what}")
        if row.best is not None:
            out.append(f"  - to use it: {md_code(row.best.line, 400, in_table=False)}")
    if len(ctx.advice) > lim.groups_per_mode * 2:
        out.append(f"- _{len(ctx.advice) - lim.groups_per_mode * 2} more groups; see report.html._")
    return out


def _sweep_cell(c) -> str:
    if c.status != "ok":
        return md_text(c.status)
    text = fmt.ms(c.median_ms)
    sp = c.speedup
    if sp.call != "baseline" and sp.value is not None:
        text += f" ({sp.text}{', within noise' if sp.noisy else ''})"
    if c.recompiles:
        text += f", {c.recompiles} recompile{'s' if c.recompiles != 1 else ''}"
    if c.numerics == "fail":
        text += ", numerics **fail**"
    return text


def _sweep(ctx: ReportContext, lim: Limits) -> list[str]:
    sw = ctx.sweep
    if sw is None:
        return []
    modes = sw.modes[: lim.modes]
    out = ["", f"### Shape sweep ({len(sw.rows)} points; latency, speedup vs eager)", "",
           "| Shape | " + " | ".join(md_text(m, 40) for m in modes) + " | Kernels/iter | Recommended |",
           "| --- | " + " | ".join("---" for _ in modes) + " | --- | --- |"]
    for row in sw.rows[: lim.modes]:
        cells = {c.mode: c for c in row.cells}
        kernels = " / ".join(fmt.count(cells[m].kernels_per_iter) if m in cells else fmt.DASH for m in modes)
        rec = row.recommendation.mode if row.recommendation and row.recommendation.mode else fmt.DASH
        out.append(f"| {md_text(row.label, 80)} | "
                   + " | ".join(_sweep_cell(cells[m]) if m in cells else fmt.DASH for m in modes)
                   + f" | {kernels} | {md_text(rec, 40)} |")
    if len(sw.rows) > lim.modes:
        out.append(f"\n_{len(sw.rows) - lim.modes} more shapes not shown; see report.html._")
    return out


def _dynamic(ctx: ReportContext, lim: Limits) -> list[str]:
    dy = ctx.dynamic
    if dy is None:
        return []
    total = "?" if dy.recompiles is None else str(dy.recompiles)
    vs = f" vs static {md_text(dy.static_mode)}" if dy.static_mode else ""
    out = ["", f"### Dynamic shapes ({md_text(dy.mode)}{vs})", "",
           f"{total} recompilation(s) across {len(dy.points)} shape(s) in one process (Dynamo counters)."]
    for p in dy.points[: lim.modes]:
        bits = [f"{p.recompiles if p.recompiles is not None else '?'} recompile(s)"]
        if p.ratio:
            bits.append(f"dynamic {fmt.speedup(1 / p.ratio)} than static"
                        + (" (within noise)" if p.call == "within noise" else ""))
        if p.guard_failures:
            bits.append("guard: " + md_code(p.guard_failures[0], 160, in_table=False))
        out.append(f"- {md_text(p.label or 'the run', 80)}: " + "; ".join(bits))
    return out


def _numerics(ctx: ReportContext, lim: Limits) -> list[str]:
    rows = [n for n in ctx.numerics if n.measured_reference or n.verdict == "fail" or n.nonfinite]
    if not rows:
        return []
    out = ["", "### Numerics", "", "| Mode | Verdict | vs eager: max abs, mismatch | vs reference: max abs, rmse "
           "(eager's) | NaN/Inf | Reference |", "| --- | --- | --- | --- | --- | --- |"]
    for n in rows[: lim.modes]:
        ve, vr = n.vs_eager, n.vs_reference
        out.append(
            f"| {md_text(n.mode, 40)} | {md_text(n.verdict)} | {fmt.sci(ve.max_abs)}, "
            f"{fmt.fraction(ve.mismatch_fraction)} | {fmt.sci(vr.max_abs)}, {fmt.sci(vr.rmse)} "
            f"({fmt.sci(vr.eager_rmse)}) | {n.nonfinite} | {md_text(n.reference, 80)} |")
    outs = [n for n in rows[: lim.modes] if n.outputs]
    if outs:
        out += ["", f"Per output (torch's accuracy rule against the {md_text(ctx.reference_dtype)} reference, tol "
                f"{fmt.sci(outs[0].same_tol)}; scale: the output's rms / largest magnitude):", "",
                "| Mode | Output | Verdict | Rule applied | max abs | Scale | Relative |",
                "| --- | --- | --- | --- | --- | --- | --- |"]
        for n in outs:
            for o in n.outputs[: lim.modes * 2]:
                out.append(f"| {md_text(n.mode, 40)} | {md_code(o.name, 60)} {md_text(o.shape, 40)} {md_text(o.dtype)} "
                           f"| {md_text(o.status)} | {md_text(o.rule, 120)} | {fmt.sci(o.max_abs)} "
                           f"| {fmt.sci(o.rms)} / {fmt.sci(o.max_value)} | {fmt.fraction(o.relative)} |")
            if len(n.outputs) > lim.modes * 2:
                out.append(f"| {md_text(n.mode, 40)} | _{len(n.outputs) - lim.modes * 2} more outputs: see "
                           "result.json_ | | | | | |")
    for n in rows[: lim.modes]:
        if n.hint:
            out.append(f"\n- **{md_text(n.mode, 40)}**, to tell: {md_text(n.hint, 400, in_table=False)}")
    return out


def _compile(ctx: ReportContext, lim: Limits) -> list[str]:
    rows = [c for c in ctx.compile if c.warm_s is not None or c.recompiles or c.graph_breaks]
    if not rows:
        return []
    out = ["", "### Compile and cache", ""]
    for c in rows[: lim.modes]:
        bits = [f"cold {fmt.first_call(c.cold_s)} ({md_text(c.cold_cache, 200, in_table=False)})"]
        if c.warm_s is not None:
            bits.append(f"warm {fmt.first_call(c.warm_s)} ({md_text(c.warm_cache, 200, in_table=False)})")
        if c.recompiles:
            bits.append(f"{c.recompiles} recompile(s)")
        if c.graph_breaks:
            bits.append(f"{c.graph_breaks} graph break(s)")
        out.append(f"- **{md_text(c.mode, 40)}**: " + "; ".join(bits))
    return out


def _coverage(c: CoverageRow, lim: Limits) -> list[str]:
    """The coverage self-check of one mode: its count, the ops not attributed, the count against eager's."""
    mark = "" if c.complete else "**incomplete:** "
    out = [f"Coverage: {mark}{md_text(c.line, 400, in_table=False)}"]
    shown = c.missing[: lim.groups_per_mode]
    out += [f"- not attributed: {md_code(line, 300, in_table=False)}" for line in shown]
    if c.hidden or len(c.missing) > len(shown):
        out.append(f"- _{c.hidden + len(c.missing) - len(shown)} more not attributed; see result.json._")
    if c.warning:
        out.append(f"\n**Warning**: GEMM count vs eager: {md_text(c.vs_eager, 600, in_table=False)}")
    elif c.vs_eager:
        out.append(f"\n_vs eager: {md_text(c.vs_eager, 400, in_table=False)}_")
    out.append("")
    return out


def _render(ctx: ReportContext, lim: Limits) -> str:
    r = ctx.result
    out: list[str] = []
    out.append(f"## kernelscope: {md_code(r.model, 80, in_table=False)}")
    head = [md_text(f"{kv.key} {kv.value}" if kv.key != "device" else kv.value, 80, in_table=False)
            for kv in ctx.headline]
    out.append("")
    out.append(" · ".join([md_code(r.command, 200, in_table=False), *head,
                           *([md_text(r.dtype, in_table=False)] if r.dtype else []), md_text(r.created)]))
    out.append("")
    gemm_col = any(row.gemms_fused for row in ctx.rows)
    out.append("| Mode | Status | Latency (median ± IQR/2) | vs eager | First call | Kernels/iter | Peak memory "
               "| Numerics (error vs eager) |" + (" GEMMs fused |" if gemm_col else ""))
    out.append("| --- | --- | --- | --- | --- | --- | --- | --- |" + (" --- |" if gemm_col else ""))
    for row in ctx.rows[: lim.modes]:
        m = row.mode
        out.append(
            f"| {md_text(m.name, 40)} | {md_text(m.status)} | {_latency_cell(m)} | {_speedup_cell(row)} "
            f"| {fmt.first_call(m.first_call_s)} | {fmt.count(m.kernels_per_iter)} | {_memory_cell(row)} "
            f"| {_numerics_cell(row)} |" + (f" {row.gemms_fused or fmt.DASH} |" if gemm_col else "")
        )
    if len(ctx.rows) > lim.modes:
        out.append(f"\n_{len(ctx.rows) - lim.modes} more modes not shown; see report.html._")
    out.append("")
    out.append(f"Speedup = eager median / mode median; \"within noise\" when its 95% bootstrap interval contains 1. "
               f"Numerics: the Numerics table's verdict (torch's accuracy rule against the "
               f"{md_text(ctx.reference_dtype)} reference, tol "
               f"{fmt.sci(ctx.tolerance.same_tol)}, when the reference ran); errors vs eager against the "
               f"{md_text(ctx.tolerance.dtype)} tolerance atol {fmt.sci(ctx.tolerance.atol)}, "
               f"rtol {fmt.sci(ctx.tolerance.rtol)}.")
    out += _recommendation(ctx, lim)
    out += _advice(ctx, lim)
    out += _sweep(ctx, lim)
    out += _dynamic(ctx, lim)
    out += _numerics(ctx, lim)
    out += _compile(ctx, lim)
    if ctx.notes:
        shown = ctx.notes[: lim.modes * 2]
        out += ["", "### Notes", ""]
        out += [f"- **{md_text(n.key, 120)}**: {md_text(n.value, 400)}" for n in shown]
        if len(ctx.notes) > len(shown):
            out.append(f"- _{len(ctx.notes) - len(shown)} more notes; see report.html._")

    coverage = {c.mode: c for c in ctx.coverage}
    gemm_modes = [row for row in ctx.rows[: lim.modes] if row.mode.gemms or row.name in coverage]
    if gemm_modes:
        out.append("")
        out.append("### GEMM epilogues")
        for row in gemm_modes:
            m = row.mode
            out.append("")
            summary = f" ({md_text(m.gemm_summary, in_table=False)})" if m.gemm_summary else ""
            out.append(f"**{md_text(m.name, 40, in_table=False)}**{summary}")
            out.append("")
            if row.name in coverage:
                out += _coverage(coverage[row.name], lim)
            section = next((s for s in ctx.sections if s.row.mode is m), None)
            if section is not None and section.epilogue_cost:
                out.append(f"_{md_text(section.epilogue_cost, in_table=False)}_")
                out.append("")
            groups = section.groups if section is not None else ()
            out += [_group_item(grp, lim) for grp in groups[: lim.groups_per_mode]]
            rest = groups[lim.groups_per_mode:]
            if rest:
                out.append(f"- _{len(rest)} more groups ({sum(g.count for g in rest)} GEMMs) not shown; "
                           "see report.html._")

    if ctx.failure_groups:
        out.append("")
        out.append("### Failed modes" if any(row.ok for row in ctx.rows) else
                   f"### No mode worked ({len(ctx.rows)} tried)")
        shown = ctx.failure_groups[: lim.modes]
        for grp in shown:
            shown_kind = grp.error_kind and grp.error_kind != "skipped"
            kind = f", {md_text(grp.error_kind, in_table=False)}" if shown_kind else ""
            names = ", ".join(f"**{md_text(n, 40, in_table=False)}**" for n in grp.modes)
            out.append("")
            out.append(f"{names} ({md_text(grp.status, in_table=False)}{kind}): "
                       f"{md_text(grp.recommendation, 600, in_table=False)}")
            if grp.error:
                out.append("")
                out.append(md_block(grp.error, lim.error_chars))
        if len(ctx.failure_groups) > len(shown):
            out.append(f"\n_{len(ctx.failure_groups) - len(shown)} more failures not shown; see report.html._")
    from kernelscope.report.ranks import markdown_tables

    out.extend(markdown_tables(ctx.result, lim.modes))  # torchrun runs: a table per mode and point
    out.append("")
    out.append("_Full report: report.html (kernels, charts, evidence); traces: `tensorboard --logdir tb` or Perfetto._")
    return "\n".join(out) + "\n"


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CUT_NOTE = "\n_Summary cut here to fit a pull-request comment; report.html has all of it._\n"


def cap(text: str, limit: int = MAX_CHARS) -> str:
    """The one place summary.md's length is enforced: ``text`` as it is when shorter than ``limit``, else cut
    after its last whole line outside a code fence that leaves room for a note pointing to report.html (never in
    a table row or a fence; the note follows a blank line, so it cannot join a table)."""
    if len(text) < limit:
        return text
    budget = limit - len(CUT_NOTE) - 1
    cut = pos = 0
    fence = ""
    for line in text.splitlines(keepends=True):
        pos += len(line)
        if pos > budget:
            break
        m = _FENCE.match(line)
        if m and not fence:
            fence = m.group(1)
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line[m.end():].strip():
            fence = ""
        if not fence:
            cut = pos
    return text[:cut].rstrip("\n") + "\n" + CUT_NOTE


def render_markdown(result: RunResult) -> str:
    """The PR-comment summary: shorter limits until it is under MAX_CHARS, and ``cap`` past their floor."""
    ctx = build_context(result)
    lim = Limits()
    text = _render(ctx, lim)
    while len(text) >= MAX_CHARS and lim.smaller() != lim:
        lim = lim.smaller()
        text = _render(ctx, lim)
    return cap(text)
