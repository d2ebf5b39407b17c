"""The output directory: refuse someone else's files, never mix an old run's files with a new one's."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from kernelscope import __version__
from kernelscope.errors import OutputDirError
from kernelscope.files import atomic_write_text

MARKER = ".kernelscope"
# Everything a run writes at the top of its directory; a new run removes these first, and nothing else.
OWNED = ("modes", "points", "tb", "result.json", "report.html", "summary.md", MARKER,
         "worker",  # the worker's modules shipped for --python (capture/interpreter.py)
         "model-cache")  # the model built once for the run's workers (capture/model_cache.py CACHE_DIR)


def prepare_out_dir(path: Path, *, force: bool) -> Path:
    path = path.resolve()
    if path.exists() and not path.is_dir():
        raise OutputDirError(f"output path {path} is a file", "pass a directory with --out")
    if path.is_dir():
        entries = [p.name for p in path.iterdir()]
        ours = (path / MARKER).is_file()
        if entries and not ours and not force:
            raise OutputDirError(
                f"output directory {path} is not empty and was not written by kernelscope",
                "pass an empty or new directory with --out, or --force to write into it "
                "(only kernelscope's files are replaced)",
            )
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=path, prefix=".write-test-", delete=True)
        probe.close()
    except OSError as exc:
        raise OutputDirError(f"output directory {path} is not writable ({exc.strerror})",
                             "pass a writable directory with --out")
    for name in OWNED:
        p = path / name
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        elif p.exists() or p.is_symlink():
            p.unlink()
    atomic_write_text(path / MARKER, json.dumps({"tool": "kernelscope", "version": __version__}) + "\n")
    return path
