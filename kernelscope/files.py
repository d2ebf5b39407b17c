"""Atomic file writes, shared by every layer that writes: the capture worker, the runner, reports and commands.

It sits below capture and report (standard library only, no torch), so the worker, which runs in the model's
interpreter (capture/interpreter.py ships it), writes its files without importing the reporting layer.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


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


def atomic_write_json(path: Path, data: Any) -> None:
    """Write a JSON record (capture.json, a worker spec) atomically, creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(_finite(data), indent=1, allow_nan=False, default=str))


def _finite(x: Any) -> Any:
    # NaN/Inf (a model with NaN outputs) are not JSON: write them as null.
    if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x
