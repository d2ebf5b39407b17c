"""kernelscope compare BASE_DIR HEAD_DIR: what changed between two runs (compare.html, compare.md)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("compare")
@click.argument("base_dir", type=click.Path(path_type=Path))
@click.argument("head_dir", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), default=Path("kernelscope-compare"), show_default=True,
              help="Directory for compare.html and compare.md.")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
def command(base_dir: Path, head_dir: Path, out: Path, debug: bool) -> None:
    """Compare two result directories (e.g. torch 2.13 vs 2.14, or before/after a model change): latency per mode
    with a noise-aware call (bootstrap interval of the ratio of medians), kernel counts by category, GEMM
    verdicts gained or lost, backends switched, new failures. Writes compare.html and compare.md to --out."""
    from kernelscope.errors import OutputDirError
    from kernelscope.report import fmt
    from kernelscope.report.compare import compare_results, render_compare_html, render_compare_markdown
    from kernelscope.report.io import atomic_write_text, load_result

    base, head = load_result(base_dir), load_result(head_dir)
    cmp = compare_results(base, head, base_label=str(base_dir), head_label=str(head_dir))
    try:
        out.mkdir(parents=True, exist_ok=True)
        html_path = atomic_write_text(out / "compare.html", render_compare_html(cmp))
        md_path = atomic_write_text(out / "compare.md", render_compare_markdown(cmp))
    except OSError as exc:
        raise OutputDirError(f"cannot write to {out}: {exc.strerror or exc}", "pass a writable --out DIR") from exc
    for m in cmp.modes:
        if m.latency.value is not None:
            change = f"{fmt.percent_change(m.latency.value)} {m.call}"
        else:
            change = "no latency to compare"
        status = f" [{m.status_change}]" if m.status_change else ""
        gemms = "".join(f"; {g.key}: {g.kind}" for g in m.changed_gemms)
        click.echo(f"{m.name}: {change}{status}{gemms}")
    click.echo(f"wrote {html_path} and {md_path}", err=True)
