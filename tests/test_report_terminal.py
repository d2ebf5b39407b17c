"""The end-of-run terminal summary (rich): every value printed as text, never as rich markup."""

from __future__ import annotations

import dataclasses

from rich.console import Console

from kernelscope.report.terminal import render_terminal
from tests.conftest_reports import HOSTILE, big_h200_211, seed_h200_211, seed_h200_2141, why, with_coverage


def rendered(result) -> str:
    console = Console(record=True, width=200, color_system=None)
    render_terminal(result, console)
    return console.export_text()


def test_summary_has_modes_gemm_verdicts_and_failures():
    out = rendered(seed_h200_2141())
    assert "max-autotune-nvgemm" in out
    assert "78.1 µs" in out
    assert "fused  addmm 16 × 4096 × 4096 Triton template: fused (fused bias, gelu)" in out
    assert "NoValidChoicesError" in out
    assert "what to do: no GEMM choice of the requested backends compiled" in out


def test_memops_and_speedups():
    out = rendered(big_h200_211())
    assert "2 +1 mem" in out  # two kernels plus the memset, counted apart
    assert "baseline" in out
    assert "slower" in out


def test_rich_markup_in_names_prints_literally():
    r = big_h200_211()
    m = r.modes[1]
    g = dataclasses.replace(m.gemms[0], unfused_kernels=("[bold red]triton_poi[/]", "[link=x]y[/link]"),
                            why_not=why("[/] unbalanced"))
    r = dataclasses.replace(r, modes=(r.modes[0], dataclasses.replace(m, name="[b]default[/b]", gemms=(g,))))
    out = rendered(r)
    assert "[bold red]triton_poi[/]" in out
    assert "[link=x]y[/link]" in out
    assert "[/] unbalanced" in out
    assert "[b]default[/b]" in out


def test_coverage_under_each_mode_and_the_count_warning():
    out = rendered(with_coverage(seed_h200_211()))
    assert "  coverage: 1 of 2 GEMM-class ops attributed to a kernel (1 convolution by the CPU op" in out
    assert f"    not attributed: {HOSTILE} stem.proj 1568 × 768 × 768 (model.py:12): launched no kernel" in out
    assert "  vs eager: 2 GEMM-class ops, as in eager" in out
    assert ("  warning: GEMM count vs eager: 3 GEMM-class ops against eager's 2: 1 more than decomposition explains"
            in out)
