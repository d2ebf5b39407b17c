"""Output that grows with the groups of identical layers, not with the layers.

A 1B Llama (16 layers, 114 GEMMs) in 3 modes printed 1,190 terminal lines, a 30 KB summary.md and a 4.4 MB
report.html. The models here are the recorded H200 llama_block (2 decoder layers) repeated to N layers through
the result's own types (tests/report_pages.py ``llama_layers``), layer 7's up_proj fused where the others are not.
"""

from __future__ import annotations

import functools
import io
import re

import pytest
from markupsafe import escape
from rich.cells import cell_len
from rich.console import Console

from kernelscope.report.evidence_words import evidence_text, why_not_text
from kernelscope.report.html import render_html
from kernelscope.report.markdown import CUT_NOTE, MAX_CHARS, cap, render_markdown
from kernelscope.report.terminal import render_terminal
from kernelscope.result import RunResult
from tests.report_pages import llama_layers

LAYERS = (2, 16, 32, 64)
DIFFER = (7, "mlp.up_proj")


@functools.cache
def model(layers: int) -> RunResult:
    return llama_layers(layers, differ=DIFFER if layers > DIFFER[0] else None)


@functools.cache
def terminal(layers: int, width: int, verbose: bool = False) -> tuple[str, ...]:
    console = Console(record=True, width=width, color_system=None, file=io.StringIO())
    render_terminal(model(layers), console, verbose=verbose)
    return tuple(console.export_text().splitlines())


@functools.cache
def page(layers: int) -> str:
    return render_html(model(layers))


@pytest.mark.parametrize("width", [80, 120])
def test_terminal_length_follows_the_groups_not_the_layers(width):
    # GIVEN the same model with 2 to 64 layers (42 to 1344 GEMMs over 3 modes)
    counts = {n: len(terminal(n, width)) for n in LAYERS}
    # THEN the summary is as long at 64 layers as at 16 (before: one line per GEMM and its why-not, 1,190 lines
    # at 16 layers), and 2 layers differ only by the lines of the one layer that differs
    assert counts[16] == counts[32] == counts[64], counts
    assert 0 <= counts[16] - counts[2] <= 12, counts
    assert counts[64] < 160  # 111 at 120 columns (959 before, and 3,695 at 64 layers)
    # AND no line is wider than the terminal
    for n in LAYERS:
        assert max(cell_len(line) for line in terminal(n, width)) <= width


def test_the_layer_that_differs_is_in_the_default_terminal_output_and_the_summary():
    out = "\n".join(terminal(16, 120))
    assert "mm layers.{0-6,8-15}.mlp.up_proj ×15, 512 × 2816 × 1024 cuBLASLt: unfused (unfused mul in" in out
    assert "fused  mm layers.7.mlp.up_proj 512 × 2816 × 1024 cuBLASLt: fused (fused mul)" in out
    assert out.count("differs from layers.{0-6,8-15}.mlp.up_proj: verdict fused (theirs: unfused)") == 3  # 3 modes
    # max-autotune's last down_proj kept the library GEMM (its output is the graph's): said the same way
    assert "differs from layers.0-14.mlp.down_proj: backend cuBLASLt (theirs: Triton template)" in out
    assert "layers.5.mlp.up_proj" not in out  # no GEMM of a group prints its own line without --verbose
    md = render_markdown(model(16))
    assert ("- `mm` `layers.7.mlp.up_proj` 512 × 2816 × 1024 on cuBLASLt: **fused**; fused `mul`. **Differs** from "
            "`layers.{0-6,8-15}.mlp.up_proj`: verdict fused (theirs: unfused)") in md


@pytest.mark.parametrize("width", [80, 120])
def test_verbose_lists_every_gemm_with_its_why_not(width):
    lines = terminal(16, width, verbose=True)
    text = "\n".join(lines)
    r = model(16)
    for m in r.modes:
        for g in m.gemms:
            assert f"mm {g.module} {g.m} × {g.n} × {g.k}" in text
    assert sum(line.lstrip().startswith("why not:") for line in lines) == sum(
        bool(g.why_not) for m in r.modes for g in m.gemms)
    assert "--verbose" not in text  # nothing left to ask for
    assert max(cell_len(line) for line in lines) <= width
    assert len(lines) > len(terminal(16, width)) + sum(len(m.gemms) for m in r.modes)


def test_summary_md_stays_short_for_any_model():
    sizes = {n: len(render_markdown(model(n))) for n in LAYERS}
    assert sizes[16] < 15_000  # was 30 KB for the 1B Llama
    assert sizes[64] < MAX_CHARS and sizes[64] - sizes[16] < 100, sizes  # as long as the groups, not the layers


def test_report_html_grows_by_a_small_constant_per_gemm_and_keeps_every_fact():
    sizes = {n: len(page(n).encode()) for n in (16, 64)}
    gemms = {n: sum(len(m.gemms) for m in model(n).modes) for n in (16, 64)}
    assert sizes[16] < 1_500_000  # was 2.85 MB (the 1B Llama's: 4.4 MB)
    per_gemm = (sizes[64] - sizes[16]) / (gemms[64] - gemms[16])
    assert per_gemm < 2_500, per_gemm  # about one GEMM's own evidence, why-not and figures
    # every fact of every GEMM is in the page: its id, module, why-not and each piece of evidence
    text = page(16)
    for m in model(16).modes:
        for g in m.gemms:
            assert f"<code>{g.id}</code>" in text and f"<code>{g.module}</code>" in text
            assert str(escape(why_not_text(g.why_not))) in text
            for e in g.evidence:
                assert str(escape(evidence_text(e))) in text, evidence_text(e)
    # collapsed: one row per group, each GEMM under it in a closed <details>
    assert text.count('<tbody class="gemm') == 8 + 8 + 9
    assert text.count('<details class="members">') == 7 + 7 + 7
    assert "<details open" not in text


def test_autotune_tables_are_shown_once_and_linked():
    text = page(16)
    tables = re.findall(r'<details class="autotune" id="(autotune-\d+-\d+)">', text)
    assert tables and len(tables) == len(set(tables))
    for anchor in tables:
        assert f'href="#{anchor}"' in text
    assert len(tables) <= len(model(16).modes[2].autotune)


def test_the_cap_cuts_at_a_line_outside_fences_and_tables():
    table = "| a | b |\n| --- | --- |\n" + "".join(f"| row {i} | `x{i}` |\n" for i in range(200))
    fence = "```text\n" + "E" * 300 + "\nmore\n```\n"
    text = "## head\n\n" + table + "\nprose line\n\n" + fence + "\n" + "- item\n" * 50
    for limit in range(200, len(text) + 50, 37):
        out = cap(text, limit)
        if len(text) < limit:
            assert out == text
            continue
        assert len(out) < limit and out.endswith(CUT_NOTE)
        body = out[: -len(CUT_NOTE)]
        assert text.startswith(body.rstrip("\n"))  # a prefix of whole lines
        assert body.count("```") % 2 == 0  # never inside the fence
        for line in body.splitlines():
            assert not line.startswith("|") or line.endswith("|")  # never inside a table row
        assert "\n\n_Summary cut here" in out  # a blank line: the note cannot join a table


def test_summary_md_of_a_huge_model_is_cut_by_the_cap():
    # GIVEN a summary longer than MAX_CHARS at its smallest limits (a hostile or absurd result)
    md = render_markdown(model(2))
    assert cap(md * 10).endswith(CUT_NOTE) and len(cap(md * 10)) < MAX_CHARS
    assert cap(md) == md
