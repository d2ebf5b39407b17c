"""kernelscope report RESULT_DIR: re-render a run's reports from its result.json (no GPU, no torch)."""

from __future__ import annotations

from pathlib import Path

import click

from kernelscope.commands import verbose_option


@click.command("report")
@click.argument("result_dir", type=click.Path(path_type=Path))
@click.option("--quiet", is_flag=True, help="Do not print the terminal summary.")
@verbose_option
@click.option("--debug", is_flag=True, help="Show tracebacks.")
def command(result_dir: Path, quiet: bool, verbose: bool, debug: bool) -> None:
    """Re-render report.html and summary.md in RESULT_DIR from its result.json (e.g. after upgrading
    kernelscope) and print the terminal summary. result.json itself is not changed; a result.json of a schema
    this kernelscope does not know is refused."""
    from kernelscope.errors import ResultError
    from kernelscope.files import atomic_write_text
    from kernelscope.report.html import render_html
    from kernelscope.report.markdown import render_markdown
    from kernelscope.report.terminal import console_for, render_terminal
    from kernelscope.result_file import load_result, result_path

    file = result_path(result_dir)
    result = load_result(file)
    folder = file.parent
    html, md = folder / "report.html", folder / "summary.md"
    try:
        atomic_write_text(html, render_html(result))
        atomic_write_text(md, render_markdown(result))
    except PermissionError as exc:
        raise ResultError(f"cannot write the reports into {folder} ({exc.strerror})",
                          "make the folder writable, or copy it and re-render the copy") from exc
    if not quiet:
        render_terminal(result, console_for(), verbose=verbose)
    console_for(stderr=True).print(f"report: {html}\nsummary: {md}")
