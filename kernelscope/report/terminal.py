"""The summary printed at the end of a run: mode table, one line per GEMM verdict, failures with advice.

Every value from the result goes in as ``rich.text.Text``, never as a markup string: a kernel name such as
``foo[bold]`` must print as itself.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kernelscope import fmt
from kernelscope.report.context import CoverageRow, ModeSection, ReportContext, build_context, gemm_line
from kernelscope.result import GemmEpilogue, RunResult

DEFAULT_WIDTH = 120  # not a terminal and no COLUMNS: a CI log viewer's width
# Groups of GEMMs per mode without --verbose: a model of identical layers has a handful (a 1B Llama: 7 per mode);
# only GEMMs without module paths in many distinct shapes reach this.
TERMINAL_GROUPS = 40


def terminal_width(stream: TextIO | None = None) -> int:
    """COLUMNS when set (also when the output is not a terminal: CI logs, pipes), else the terminal's width,
    else DEFAULT_WIDTH."""
    raw = os.environ.get("COLUMNS", "").strip()
    if raw.isdigit() and int(raw) >= 20:
        return int(raw)
    stream = stream or sys.stdout
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        pass
    return DEFAULT_WIDTH


def console_for(stream: TextIO | None = None, *, stderr: bool = False) -> Console:
    """A rich Console that never prints a line wider than ``terminal_width``."""
    stream = stream or (sys.stderr if stderr else sys.stdout)
    return Console(file=stream, highlight=False, width=terminal_width(stream), soft_wrap=False)

_STYLE = {
    "ok": "green", "pass": "green", "faster": "green", "fused": "green",
    "failed": "red", "fail": "red", "timeout": "red", "slower": "red", "unfused": "red", "interrupted": "red",
    "partial": "yellow", "within noise": "yellow", "unavailable": "yellow", "unknown": "yellow",
}


def _t(value: object, style: str = "") -> Text:
    return Text(str(value), style=style)


def _print_coverage(console: Console, cov: CoverageRow) -> None:
    """The coverage self-check under a mode's GEMM summary: the count, every op not attributed, and a warning
    when the mode's GEMM count disagrees with eager's beyond decomposition."""
    console.print(Text.assemble("  coverage: ", (cov.line, "green" if cov.complete else "bold red")))
    for line in cov.missing:
        console.print(Text(f"    not attributed: {line}", style="red"))
    if cov.hidden:
        console.print(Text(f"    ... and {cov.hidden} more (result.json lists them all)", style="red"))
    if cov.warning:
        console.print(Text.assemble(("  warning", "bold yellow"), f": GEMM count vs eager: {cov.vs_eager}"))
    elif cov.vs_eager:
        console.print(Text(f"  vs eager: {cov.vs_eager}", style="dim"))


def _verdict(g: GemmEpilogue) -> tuple[str, str]:
    return g.verdict, _STYLE.get(g.verdict, "")


def _gemm_groups(console: Console, section: ModeSection, cov: CoverageRow | None, names: int, *,
                 verbose: bool) -> int:
    """One mode's GEMMs: a line per group of identical layers (a group's why-not once, and how a layer that
    differs from its group differs); ``verbose``: every GEMM of a group under it with its own why-not. The
    number of GEMMs left to --verbose."""
    row = section.row
    cost = f" · {section.epilogue_cost}" if section.epilogue_cost else ""
    console.print(Text.assemble((f"{row.name}", "bold"), f"  {row.mode.gemm_summary}{cost}"))
    if cov is not None:
        _print_coverage(console, cov)
    shown = section.groups if verbose else section.groups[:TERMINAL_GROUPS]
    for grp in shown:
        console.print(Text.assemble("  ", _verdict(grp.first), "  ", grp.line(names)))
        if grp.differs:
            console.print(Text(f"    {grp.differs}", style="yellow"))
        if verbose and grp.count > 1:
            for member in grp.members:
                g = member.gemm
                console.print(Text.assemble("    ", _verdict(g), "  ", gemm_line(g, names)))
                if member.why_not:
                    console.print(Text(f"      why not: {member.why_not}", style="dim"))
        elif grp.why_not:
            console.print(Text(f"    why not: {grp.why_not}", style="dim"))
    rest = section.groups[len(shown):]
    if rest:
        console.print(Text(f"  … {len(rest)} more groups ({sum(g.count for g in rest)} GEMMs): --verbose lists "
                           "them", style="dim"))
    return 0 if verbose else sum(g.count for g in shown if g.count > 1) + sum(g.count for g in rest)


ADVICE_SHOWN = 12  # groups of the fusion advice printed (report.html and result.json hold every one)


def _advice(console: Console, ctx: ReportContext) -> None:
    """Fusion advice in a few lines: per group, its best candidate (or what its candidates did), or why none."""
    for row in ctx.advice[:ADVICE_SHOWN]:
        head = Text.assemble(("advice", "bold"), f" {row.line}: ")
        best = row.best
        if best is not None:
            head.append(f"{best.c.mode_name} {best.ops}, whole model {best.ratio}", style="green")
            console.print(head)
            console.print(Text(f"  {best.line}", style="dim"))
        elif row.candidates:
            console.print(head + Text("; ".join(f"{c.c.mode_name} {c.verdict}"
                                                + (f": {c.ratio}" if c.c.latency_ratio is not None else "")
                                                for c in row.candidates), style="yellow"))
        else:
            console.print(head + Text(f"no setting: {row.no_setting}", style="dim"))
    if len(ctx.advice) > ADVICE_SHOWN:
        console.print(Text(f"advice: {len(ctx.advice) - ADVICE_SHOWN} more groups in report.html", style="dim"))


def render_terminal(result: RunResult, console: Console, *, verbose: bool = False) -> None:
    """The end-of-run summary. GEMMs print one line per group of identical layers, so the output grows with the
    groups, not the layers; ``verbose`` adds every GEMM of each group with its own why-not."""
    ctx = build_context(result)
    width = console.width
    names = max(30, min(72, width - 50))  # kernel names in verdict lines: what the line has room for
    head = ", ".join(kv.value if kv.key == "device" else f"{kv.key} {kv.value}" for kv in ctx.headline)
    dtype = f", {result.dtype}" if result.dtype else ""
    table = Table(title=Text(f"kernelscope: {result.model} ({head}{dtype})"), title_justify="left")
    for col, justify in (("mode", "left"), ("status", "left"), ("latency", "right"), ("IQR", "right"),
                         ("vs eager", "left"), ("first call", "right"), ("kernels/iter", "right"),
                         ("peak mem", "right"), ("numerics", "left")):
        # The columns a reader scans stay on one line; the others wrap when the terminal is narrow.
        table.add_column(col, justify=justify, no_wrap=col in ("mode", "vs eager", "latency"))  # type: ignore[arg-type]
    for row in ctx.rows:
        m, sp, num = row.mode, row.speedup, row.numerics  # the Numerics table's call (one source)
        if sp.call == "baseline":
            vs = _t("baseline", "dim")
        elif sp.value is None:
            vs = _t(fmt.DASH)
        else:
            vs = Text.assemble((sp.text, _STYLE.get(sp.call, "")), " (noise)" if sp.noisy else "")
        if num.status in ("reference", "n/a"):
            err = _t(num.status, "dim")
        else:
            err = Text.assemble((num.status, _STYLE.get(num.status, "")), f" abs {fmt.sci(row.mode.max_abs_error)}")
        kernels = fmt.count(m.kernels_per_iter) + (f" +{fmt.count(m.memops_per_iter)} mem" if m.memops_per_iter else "")
        table.add_row(
            _t(m.name, "bold"),
            _t(m.status, _STYLE.get(m.status, "")),
            _t(fmt.ms(m.latency_ms.median) if m.latency_ms else fmt.DASH),
            _t(fmt.ms(m.latency_ms.iqr) if m.latency_ms else fmt.DASH),
            vs,
            _t(fmt.first_call(m.first_call_s)),
            _t(kernels),
            _t(fmt.nbytes(m.peak_memory_bytes)),
            err,
        )
    if any(row.mode.status != "ok" or row.mode.latency_ms or row.mode.kernels_per_iter is not None
           for row in ctx.rows):
        console.print(table)
        kinds = sorted({row.memory_kind for row in ctx.rows if row.memory_kind})
        if kinds:
            what = {"RSS growth": "resident memory (RSS) growth over the mode, above what the process held "
                                  "before the model was built",
                    "RSS, whole process": "the whole process's resident memory (RSS)"}
            console.print(Text("peak mem: " + "; ".join(what.get(k, k) for k in kinds), style="dim"))
    folded = 0  # GEMMs whose own lines only --verbose prints
    for section in ctx.sections:
        cov = next((c for c in ctx.coverage if c.mode == section.row.name), None)
        if section.gemms:
            folded += _gemm_groups(console, section, cov, names, verbose=verbose)
        elif cov is not None:
            console.print(Text.assemble((f"{section.row.name}", "bold"), "  no GEMM verdict"))
            _print_coverage(console, cov)
    if folded:
        console.print(Text(f"(--verbose: each of the {folded} GEMMs in groups above, with its why-not; "
                           "report.html: every GEMM with its evidence)", style="dim"))
    for v in ctx.ranks:  # torchrun runs: one line per rank, from report/ranks.py's view
        console.print(Text.assemble((f"{v.title} ranks", "bold"), f"  {v.headline}"
                                    + (f"; {v.differ}" if v.differ else "")))
        for r in v.rows:
            mark = " (slowest)" if r.slowest else ""
            console.print(Text(f"  rank {r.rank}{mark}: {r.status} · {r.latency} · {r.kernels} kernels/iter · "
                               f"communication {r.comm}, overlap {r.overlap}"
                               + (f" · differs: {r.differs}" if r.differs else "")))
    if ctx.sweep is not None:
        sw = ctx.sweep
        st = Table(title=Text(f"shape sweep: {len(sw.rows)} points (median; speedup vs eager)"), title_justify="left")
        st.add_column("shape")
        for name in sw.modes:
            st.add_column(name, justify="right")
        st.add_column("recommended")
        for srow in sw.rows:
            cells = []
            for c in srow.cells:
                if c.status != "ok":
                    cells.append(_t(c.status, _STYLE.get(c.status, "")))
                    continue
                sp = c.speedup
                tail = "" if sp.call == "baseline" or sp.value is None else f" {sp.text}"
                text = Text.assemble(fmt.ms(c.median_ms), (tail, _STYLE.get(sp.call, "")))
                if c.recompiles:
                    text.append(f" ({c.recompiles} recompile{'s' if c.recompiles != 1 else ''})", style="dim")
                cells.append(text)
            rec = srow.recommendation.mode if srow.recommendation and srow.recommendation.mode else fmt.DASH
            st.add_row(_t(srow.label, "bold"), *cells, _t(rec, "green"))
        console.print(st)
    if ctx.dynamic is not None:
        dy = ctx.dynamic
        total = "?" if dy.recompiles is None else dy.recompiles
        vs = f" vs static {dy.static_mode}" if dy.static_mode else ""
        console.print(Text.assemble((f"{dy.mode}{vs}", "bold"), f": {total} recompilation(s) across "
                                    f"{len(dy.points)} shape(s)"))
        for p in dy.points:
            if p.guard_failures:
                console.print(Text(f"  {p.label or 'run'}: {p.guard_failures[0]}", style="dim"))
    for c in ctx.compile:
        if c.warm_s is not None:
            console.print(Text.assemble((c.mode, "bold"), f"  compile cold {fmt.seconds(c.cold_s)} ({c.cold_cache}), "
                                        f"warm {fmt.seconds(c.warm_s)} ({c.warm_cache})"))
    for n in ctx.numerics:
        if n.verdict == "fail" or (n.vs_eager.passed is False) or n.hint:
            console.print(Text.assemble((n.mode, "bold"), "  numerics ", (n.verdict, _STYLE.get(n.verdict, "")),
                                        f": {n.reason}"))
            for o in n.outputs[:8]:
                console.print(Text.assemble("  ", (o.status, _STYLE.get(o.status, "")), f"  {o.name} ({o.shape} "
                                            f"{o.dtype}): {o.rule} · max abs {fmt.sci(o.max_abs)} · scale rms "
                                            f"{fmt.sci(o.rms)}, max {fmt.sci(o.max_value)} · relative "
                                            f"{fmt.fraction(o.relative)}"))
            if len(n.outputs) > 8:
                console.print(Text(f"  ... {len(n.outputs) - 8} more outputs in result.json", style="dim"))
            if n.hint:
                console.print(Text(f"  to tell: {n.hint}", style="yellow"))
    for n in ctx.notes:
        console.print(Text.assemble((f"note {n.key}", "bold yellow"), f": {n.value}"))
    for rec in ctx.recommendations:
        where = f" @ {rec.label}" if rec.label else ""
        console.print(Text.assemble(("recommendation" + where, "bold"), ": ",
                                    (f"use {rec.mode}" if rec.mode else "no working mode", "green" if rec.mode
                                     else "red"), f" — {rec.reason}"))
    _advice(console, ctx)
    if ctx.failure_groups and not any(row.ok for row in ctx.rows):
        console.print(Text(f"no mode worked ({len(ctx.rows)} tried):", style="bold red"))
    for grp in ctx.failure_groups:
        console.print(Text.assemble((f"{', '.join(grp.modes)} {grp.status}", "bold red"), f": {grp.line}"))
        console.print(Text(f"  what to do: {grp.recommendation}", style="yellow"))
