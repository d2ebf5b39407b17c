"""Renderers: each reads the RunResult and nothing else (html, markdown, json, terminal, TensorBoard scalars)."""

from __future__ import annotations

from pathlib import Path

from kernelscope.files import atomic_write_text
from kernelscope.result import RunResult
from kernelscope.result_file import dumps_result, write_result


def prepare(*, tensorboard: bool = True) -> None:
    """Import what write_reports and the terminal summary use and compile report.html's template, ahead: profile
    calls it while its later processes compile, so that the run's last seconds only render (the first
    write_reports in a process took 0.38 s on the VM against 0.10 s for a second one, mostly TensorBoard's
    import and the template)."""
    from kernelscope.report import markdown, terminal  # noqa: F401
    from kernelscope.report.html import environment

    environment().get_template("report.html.j2")
    if tensorboard:
        from kernelscope.report import tensorboard as _tb  # noqa: F401


def write_reports(result: RunResult, out_dir: Path, *, tensorboard: bool = True) -> dict[str, Path]:
    """Write result.json, report.html, summary.md (atomically) and the TensorBoard scalars."""
    from kernelscope.report.html import render_html
    from kernelscope.report.markdown import render_markdown

    paths = {"json": out_dir / "result.json", "html": out_dir / "report.html", "md": out_dir / "summary.md"}
    # result.json first: whatever breaks later, the run's facts are on disk.
    text = dumps_result(result)  # (written once here and embedded in the HTML: ~0.1 s each on a 1M-event trace)
    write_result(paths["json"], result, text)
    atomic_write_text(paths["html"], render_html(result, text))
    atomic_write_text(paths["md"], render_markdown(result))
    if tensorboard:
        from kernelscope.report.tensorboard import write_scalars

        write_scalars(result, out_dir / "tb")
    return paths
