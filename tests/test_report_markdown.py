"""summary.md: concise, under 60,000 characters, and no data can break a table or inject a link or HTML."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from kernelscope.report.markdown import MAX_CHARS, md_code, md_text, render_markdown
from tests.conftest_reports import (
    HOSTILE_NAMES,
    huge_result,
    seed_h200_211,
    seed_h200_2141,
    with_hostile_names,
)

# CommonMark plus GFM tables: the parts of GitHub's renderer a summary can trip over.
MD = MarkdownIt("commonmark").enable("table")


def html_of(markdown: str) -> str:
    return MD.render(markdown)


def table_shapes(html: str) -> list[tuple[int, list[int]]]:
    """(header cells, [cells per body row]) for each table."""
    out = []
    for table in re.findall(r"<table>(.*?)</table>", html, re.DOTALL):
        head = len(re.findall(r"<th[ >]", table))
        rows = [len(re.findall(r"<td[ >]", row)) for row in re.findall(r"<tr>(.*?)</tr>", table, re.DOTALL)]
        out.append((head, [r for r in rows if r]))
    return out


def test_summary_has_mode_table_gemm_verdicts_and_failures():
    md = render_markdown(seed_h200_2141())
    assert "| Mode | Status |" in md
    assert "### GEMM epilogues" in md
    assert "**fused**" in md
    assert "### Failed modes" in md
    assert "NoValidChoicesError" in md
    assert "add ATEN to" in md
    html = html_of(md)
    ((head, rows),) = table_shapes(html)
    assert head == 9 and rows == [9, 9]  # the last column: GEMMs fused k/n
    assert md.splitlines()[4].endswith("| GEMMs fused |")


def test_seed_summary_reads_right():
    md = render_markdown(seed_h200_211())
    row = next(line for line in md.splitlines() if line.startswith("| default |"))
    assert "**2.52× slower**" in row  # read one way: never "0.398× slower"
    assert "3.59 s" in row
    assert row.endswith("| 0/1 |")  # GEMMs fused: the one GEMM's GELU ran apart
    assert "pass" in row
    assert len(md) < 5000  # a PR comment a reviewer reads in a minute


def test_hostile_names_cannot_break_tables_or_inject():
    md = render_markdown(with_hostile_names(seed_h200_211()))
    html = html_of(md)
    for tag in ("<a ", "<img", "<script", "<b>", "<strong>bold"):
        assert tag not in html, tag
    assert "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in html  # shown, as text
    for head, rows in table_shapes(html):
        assert all(r == head for r in rows)


@pytest.mark.parametrize("name", [*HOSTILE_NAMES, "a\\|b", "``x``", "` lead", "trail `", "line\nbreak", "|", "\\"])
def test_escaped_text_survives_a_table_cell(name):
    md = f"| a | b | c |\n| --- | --- | --- |\n| {md_code(name)} | {md_text(name)} | end |\n"
    html = html_of(md)
    ((head, rows),) = table_shapes(html)
    assert (head, rows) == (3, [3])
    assert "<a " not in html and "<img" not in html and "<b>" not in html
    assert "<td>end</td>" in html
    # the code span shows the name itself (newlines folded to spaces)
    code = re.search(r"<td><code>(.*?)</code></td>", html, re.DOTALL)
    assert code is not None
    shown = code.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").replace("&quot;", '"')
    assert shown.strip() == " ".join(name.split())


def test_huge_model_stays_under_the_comment_limit():
    big = huge_result()
    md = render_markdown(big)
    assert len(md) < MAX_CHARS
    assert "more groups (" in md and "GEMMs) not shown" in md
    # the table is still whole and the failure is still reported, shortened
    assert "### Failed modes" in md
    assert "E" * 100 in md and "E" * 20000 not in md
    for head, rows in table_shapes(html_of(md)):
        assert all(r == head for r in rows)


def test_transformer_block_summary_uses_code_spans_not_backslashes():
    from tests.report_pages import from_captures

    md = render_markdown(from_captures("transformer_block", ("eager", "default", "max-autotune")))
    assert "\\" not in md  # was 57+ backslash escapes
    assert "unfused `add` in `vectorized_elementwise_kernel<CUDAFunctor_add>`" in md
    assert "(`at::native::vectorized_elementwise_kernel<CUDAFunctor...>`)" in md
    rows = [line for line in md.splitlines() if line.startswith("| max-autotune |")]
    assert rows and rows[0].endswith("| 1/4 |")
    for head, body in table_shapes(html_of(md)):
        assert all(r == head for r in body)


def test_coverage_and_the_count_warning_in_the_summary():
    from tests.conftest_reports import seed_h200_211, with_coverage

    md = render_markdown(with_coverage(seed_h200_211()))
    assert "Coverage: **incomplete:** 1 of 2 GEMM-class ops attributed to a kernel" in md
    assert "- not attributed: `</script><img src=x onerror=alert(1)> stem.proj 1568 × 768 × 768 (model.py:12): " \
           "launched no kernel in the trace`" in md
    assert "_vs eager: 2 GEMM-class ops, as in eager_" in md
    assert "**Warning**: GEMM count vs eager: 3 GEMM-class ops against eager's 2: 1 more than decomposition" in md
