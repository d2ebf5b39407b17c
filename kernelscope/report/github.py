"""GitHub Actions: the job summary and error annotations, used by ``profile`` and ``check`` when they run there.

``GITHUB_STEP_SUMMARY`` names a file whose Markdown GitHub shows on the run's page: ``profile`` appends
summary.md, ``check`` its verdict. ``::error ...::`` lines on stdout become annotations on the run (and on the
pull request's files view). Outside Actions neither happens.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from kernelscope.report.check import violation_line
from kernelscope.report.markdown import md_text
from kernelscope.report.words import say


def in_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true" or bool(os.environ.get("GITHUB_STEP_SUMMARY"))


def append_step_summary(markdown: str) -> Path | None:
    """Append ``markdown`` to the job summary; None when GITHUB_STEP_SUMMARY is unset. A summary file that
    cannot be written is not the run's failure: the caller gets the OSError to report in one line."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    path = Path(target)
    with open(path, "a", encoding="utf-8") as f:
        f.write(markdown if markdown.endswith("\n") else markdown + "\n")
        f.write("\n")
    return path


def _escape_data(text: str) -> str:
    # The workflow-command escapes (actions/toolkit, command.ts): % first, then the line breaks.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def error_annotation(message: str, *, title: str = "kernelscope", file: str | None = None) -> str:
    """``::error title=...::message``: one annotation on the run."""
    props = [f"title={_escape_property(title)}"]
    if file:
        props.insert(0, f"file={_escape_property(file)}")
    return f"::error {','.join(props)}::{_escape_data(message)}"


def check_summary(result_dir: str, ok: bool, rules: Iterable[str], lines: Iterable[str],
                  notes: Iterable[str] = ()) -> str:
    """The ``check`` verdict as Markdown for the job summary."""
    head = "passed" if ok else "failed"
    out = [f"### kernelscope check {head}: {md_text(result_dir, 200, in_table=False)}", "",
           f"Rules: {', '.join(md_text(r, 60, in_table=False) for r in rules) or 'none'}", ""]
    out += [f"- {md_text(line, 600, in_table=False)}" for line in lines]
    out += [f"- note: {md_text(n, 600, in_table=False)}" for n in notes]
    return "\n".join(out) + "\n"


def report_check(result_dir: str, outcome: object, lines: Iterable[str]) -> None:
    """In Actions: each violation as an ``::error`` annotation, and the verdict in the job summary."""
    import click

    if not in_actions():
        return
    lines = list(lines)
    violations = getattr(outcome, "violations", ())
    for v in violations:
        click.echo(error_annotation(violation_line(v), title=f"kernelscope check {v.rule}"))
    try:
        append_step_summary(check_summary(result_dir, not violations, getattr(outcome, "rules", ()), lines,
                                          [say(n) for n in getattr(outcome, "notes", ())]))
    except OSError as exc:
        click.echo(f"kernelscope: warning: cannot append to GITHUB_STEP_SUMMARY ({exc.strerror})", err=True)


def publish_profile(summary_md: Path) -> None:
    """In Actions: the run's summary.md in the job summary."""
    import click

    if not os.environ.get("GITHUB_STEP_SUMMARY"):
        return
    try:
        append_step_summary(Path(summary_md).read_text(encoding="utf-8"))
    except OSError as exc:
        click.echo(f"kernelscope: warning: cannot append to GITHUB_STEP_SUMMARY ({exc.strerror})", err=True)
