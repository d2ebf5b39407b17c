"""The H200 zoo captures (tests/data/h200-torch2.11-zoo/<name>.tar.gz): each extracted once per session."""

from __future__ import annotations

import tarfile
import tempfile
from pathlib import Path

ZOO = Path(__file__).resolve().parent / "data" / "h200-torch2.11-zoo"
_RUNS: dict[str, Path] = {}


def zoo_run(name: str) -> Path:
    """The run directory of zoo capture ``name`` (hf_gpt2, tv_resnet50, ...), extracted into a temp dir once."""
    if name not in _RUNS:
        out = Path(tempfile.mkdtemp(prefix=f"zoo-{name}-"))
        with tarfile.open(ZOO / f"{name}.tar.gz") as tar:
            tar.extractall(out, filter="data")
        _RUNS[name] = out / name
    return _RUNS[name]
