"""Run directories committed as ``<name>.tar.gz``: the H200 model zoo (tests/data/h200-torch2.11-zoo) and the CPU
GEMM + reduction problems (tests/data/cpu-torch2.14.1/kb_*.tar.gz). Each is extracted once per test session into a
temporary directory (removed when the session's process exits); the functions return the run directory, ready for
``build_mode_result``. ``path_differences``: the cross-mode check of module paths the zoo suites share."""

from __future__ import annotations

import atexit
import shutil
import tarfile
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ZOO = Path(__file__).resolve().parent / "data" / "h200-torch2.11-zoo"

_root: Path | None = None
_runs: dict[Path, Path] = {}


def zoo_run(name: str) -> Path:
    """The run directory of ``tests/data/h200-torch2.11-zoo/<name>.tar.gz`` (``modes/<mode>/capture.json``,
    ``code/``, ``tb/``; ``<name>.log``, the run's terminal output, lies beside it)."""
    tarball = ZOO / f"{name}.tar.gz"
    if not tarball.is_file():
        raise FileNotFoundError(f"no zoo capture {tarball}; see {ZOO / 'README.md'} for the models there")
    return extract_run(tarball)


def extract_run(tarball: Path) -> Path:
    """The run directory a ``<name>.tar.gz`` (or ``.tar.xz``) holds (its top folder ``<name>/``), extracted once
    per session."""
    global _root
    tarball = Path(tarball).resolve()
    if tarball in _runs:
        return _runs[tarball]
    if _root is None:
        _root = Path(tempfile.mkdtemp(prefix="kernelscope-runs-"))
        atexit.register(shutil.rmtree, _root, True)
    dest = _root / str(len(_runs))
    with tarfile.open(tarball) as tar:
        tar.extractall(dest, filter="data")
    run = dest / tarball.name.removesuffix(".tar.gz").removesuffix(".tar.xz")
    if not (run / "modes").is_dir():
        raise FileNotFoundError(f"{tarball} holds no run directory {run.name}/modes")
    _runs[tarball] = run
    return run


def path_differences(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> list[str]:
    """Where two modes' GEMMs disagree on module paths; each GEMM given as (kind, m, n, k, batch, module), its
    mode's order. Inductor reorders independent GEMMs (v_proj before k_proj, both of one shape) and may run a
    mixture of experts as grouped GEMMs where eager runs one mm per expert, so GEMMs are matched by shape: the GEMMs
    of one shape carry the same paths in both modes wherever both ran the same number of them, and both modes'
    GEMMs name the same modules. Empty: they agree."""
    out: list[str] = []
    if {g[-1] for g in a} != {g[-1] for g in b}:
        out.append(f"modules {sorted({g[-1] for g in a} ^ {g[-1] for g in b})} in one mode only")
    shapes: dict[tuple[Any, ...], tuple[Counter[str], Counter[str]]] = {}
    for side, gemms in enumerate((a, b)):
        for g in gemms:
            shapes.setdefault(tuple(g[:-1]), (Counter(), Counter()))[side][g[-1]] += 1
    for key, (x, y) in shapes.items():
        if sum(x.values()) == sum(y.values()) and x != y:
            out.append(f"{key}: {dict(x)} vs {dict(y)}")
    return out
