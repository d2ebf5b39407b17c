"""File I/O shared by the reporters and commands: atomic writes, and reading a result directory back."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from kernelscope.errors import ResultError
from kernelscope.result import SCHEMA, RunResult, run_from_json

RESULT_FILE = "result.json"


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half of one.

    The temporary file lives in the same folder, so ``os.replace`` is a rename on one filesystem (atomic on
    POSIX and Windows). A failed write leaves no temporary file behind.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        # mkstemp creates 0600; a report is meant to be read by others like any file the user writes.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Atomic UTF-8 text write (see ``atomic_write_bytes``); newlines are written as given."""
    return atomic_write_bytes(path, text.encode("utf-8"))


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
        raise ResultError(f"{file} does not match schema {SCHEMA}: {exc}", "re-run kernelscope to write it again") from exc
