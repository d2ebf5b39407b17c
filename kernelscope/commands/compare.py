"""kernelscope compare BASE_DIR HEAD_DIR: what changed between two runs (compare.html, compare.md)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("compare")
@click.argument("base_dir", type=click.Path(path_type=Path))
@click.argument("head_dir", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), default=Path("kernelscope-compare"), show_default=True,
              help="Directory for compare.html and compare.md.")
@click.option("--force", is_flag=True,
              help="Compare runs from a different device or dtype anyway (every row is marked not comparable).")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
def command(base_dir: Path, head_dir: Path, out: Path, force: bool, debug: bool) -> None:
    """Compare two result directories (e.g. torch 2.13 vs 2.14, or before/after a model change): latency per mode
    with a noise-aware call (bootstrap interval of the ratio of medians), kernel counts by category, GEMM
    verdicts gained or lost, backends switched, new failures. Says first whether the runs are comparable (device,
    dtype, model file, shapes, versions, settings): a different device or dtype is refused (exit 2) unless
    --force. A change is beyond noise only when both runs' intervals across processes separate. Writes
    compare.html, compare.md and compare.json to --out."""
    import json

    from kernelscope.analysis.compare import compare_results
    from kernelscope.errors import OutputDirError, UsageError
    from kernelscope.files import atomic_write_text
    from kernelscope.report.compare import (
        change_text,
        compare_data,
        render_compare_html,
        render_compare_markdown,
    )
    from kernelscope.report.words import comparable_headline, field_change
    from kernelscope.result_file import load_result

    base, head = load_result(base_dir), load_result(head_dir)
    cmp = compare_results(base, head, base_label=str(base_dir), head_label=str(head_dir), force=force)
    if not cmp.comparable.ok and not force:
        refused = "; ".join(field_change(*d) for d in cmp.comparable.refused)
        raise UsageError(f"{base_dir} and {head_dir} are not comparable ({refused}): "
                         "their latencies and kernels measure different hardware or precision",
                         "compare runs of one device and dtype, or pass --force to compare anyway")
    click.echo(comparable_headline(cmp.comparable))
    try:
        out.mkdir(parents=True, exist_ok=True)
        html_path = atomic_write_text(out / "compare.html", render_compare_html(cmp))
        md_path = atomic_write_text(out / "compare.md", render_compare_markdown(cmp))
        json_path = atomic_write_text(out / "compare.json", json.dumps(compare_data(cmp), indent=1,
                                                                       allow_nan=False, default=str))
    except OSError as exc:
        raise OutputDirError(f"cannot write to {out}: {exc.strerror or exc}", "pass a writable --out DIR") from exc
    mark = " [not comparable]" if not cmp.comparable.ok else ""
    for m in cmp.modes:
        change = change_text(m) or "no latency to compare"
        status = f" [{m.status_change}]" if m.status_change else ""
        gemms = "".join(f"; {g.key}: {g.kind}" for g in m.changed_gemms)
        built = "; compiled differently from the same build (a compile-time choice)" if m.compile_note else ""
        click.echo(f"{m.name}{mark}: {change}{status}{built}{gemms}")
    click.echo(f"wrote {html_path}, {md_path} and {json_path}", err=True)
