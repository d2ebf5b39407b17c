"""Reading a result directory back (result.json -> RunResult); the atomic writers are in kernelscope/files.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

from kernelscope.errors import ResultError
from kernelscope.result import SCHEMA, RunResult, run_from_json

RESULT_FILE = "result.json"


def result_path(path: str | os.PathLike[str]) -> Path:
    """A result directory (holding result.json) or the result.json file itself -> the result.json path."""
    p = Path(path)
    return p / RESULT_FILE if p.is_dir() else p


def load_result(path: str | os.PathLike[str]) -> RunResult:
    """Read a run's result.json (given its directory or the file) into a RunResult.

    Raises ResultError (exit code 2) with the path and what to do when the file is missing, is not JSON, or is
    not a kernelscope result.
    """
    file = result_path(path)
    if not file.exists():
        raise ResultError(
            f"{file} does not exist",
            "pass a directory written by `kernelscope profile` or `kernelscope analyze` (it holds result.json)",
        )
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ResultError(f"cannot read {file}: {exc}", "re-run kernelscope to write it again") from exc
    if not isinstance(data, dict) or not str(data.get("schema", "")).startswith("kernelscope.result/"):
        raise ResultError(
            f"{file} is not a kernelscope result (no 'schema': '{SCHEMA}')",
            "pass the result.json that kernelscope wrote",
        )
    if data["schema"] != SCHEMA:
        raise ResultError(
            f"{file} has schema {data['schema']!r}; this kernelscope reads {SCHEMA!r}",
            "re-render it with the kernelscope version that wrote it, or re-run the profile",
        )
    try:
        return run_from_json(data)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise ResultError(f"{file} does not match schema {SCHEMA}: {exc}",
                          "re-run kernelscope to write it again") from exc
