"""Mode workers under another Python interpreter (``profile --python``, ``upgrade-check --before/--after``).

The other interpreter is typically the pre-upgrade venv: it has torch (and what the model needs) but not
kernelscope. Two things make the worker run there anyway:

- ``probe`` asks the interpreter, in ONE subprocess, for its Python, torch and triton versions before anything
  runs, so a wrong path, a missing torch or a too-old one is a one-line error up front, not N failed modes.
- ``ship_worker`` copies the worker's own modules (``WORKER_FILES``: the worker and what it imports; standard
  library and torch only on that side) into the run directory, next to a launcher script. Python puts a
  script's directory first on ``sys.path``, so the shipped copy wins over any kernelscope the other environment
  may have (an older install) and over ``PYTHONPATH``, which an interpreter wrapper script may set for itself.

Everything after capture (analysis, reports) stays in kernelscope's own environment. This module never imports
torch.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kernelscope.errors import UsageError

# pyproject.toml's torch floor; the worker's dataclasses(slots=True) need Python 3.10.
MIN_TORCH = (2, 4)
MIN_PYTHON = (3, 10)
PROBE_TIMEOUT_S = 300.0  # one `import torch` (and triton), which takes seconds; a cold NFS venv can take more

SHIP_DIR = "worker"  # inside the run directory (outdir.OWNED lists it, so a rerun replaces it)
LAUNCHER = "kernelscope_worker.py"

# The worker's side of kernelscope, relative to the package's parent folder. test_interpreter.py checks that
# every kernelscope module these import is listed and that everything else they import is the standard
# library or torch/triton, so a new import in the worker cannot silently need kernelscope's environment.
WORKER_FILES = (
    "kernelscope/__init__.py",
    "kernelscope/capture_record.py",  # the record the worker writes
    "kernelscope/errors.py",
    "kernelscope/files.py",
    "kernelscope/mode_names.py",  # capture/modes.py reads a mode name's options
    "kernelscope/modelfile.py",
    "kernelscope/provenance.py",
    "kernelscope/tolerance.py",
    "kernelscope/vocab.py",  # provenance.py reads its op classes
    "kernelscope/capture/__init__.py",
    "kernelscope/capture/callers.py",  # the compile's backend: each graph's calling modules
    "kernelscope/capture/compiling.py",
    "kernelscope/capture/dispatch.py",  # the ops one call dispatches
    "kernelscope/capture/dist.py",
    "kernelscope/capture/eager_ranges.py",
    "kernelscope/capture/environment.py",
    "kernelscope/capture/load.py",  # other processes' CPU use while timing
    "kernelscope/capture/memory.py",
    "kernelscope/capture/model_cache.py",  # the model built once per run, the float64 reference computed once
    "kernelscope/capture/modes.py",
    "kernelscope/capture/numerics.py",
    "kernelscope/capture/pinning.py",
    "kernelscope/capture/profiling.py",
    "kernelscope/capture/progress.py",
    "kernelscope/capture/setup.py",
    "kernelscope/capture/timing.py",
    "kernelscope/capture/worker.py",  # the entry point; the modules above are its jobs
)

# The launcher mimics `python -m kernelscope.capture.worker`: the working directory on sys.path (right after the
# shipped copy, which must win), the module run as __main__ with the worker's arguments.
_LAUNCHER_TEXT = '''\
"""Written by kernelscope: runs the kernelscope worker shipped next to this file under this interpreter."""
import os
import runpy
import sys

sys.path.insert(1, os.getcwd())
runpy.run_module("kernelscope.capture.worker", run_name="__main__", alter_sys=True)
'''

# Runs under ANY interpreter the user points at (maybe Python 2, maybe not Python at all): no f-strings, and the
# marker is built at run time so that a program that echoes its arguments does not pass for Python.
_PROBE = r'''
import json, platform, sys
info = {"executable": sys.executable, "python": platform.python_version(), "prefix": sys.prefix}
try:
    import torch
    info["torch"] = torch.__version__
    info["cuda"] = torch.version.cuda
except BaseException as e:
    info["torch_error"] = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")
try:
    import triton
    info["triton"] = triton.__version__
except BaseException:
    info["triton"] = None
print("@@kernelscope" + "-probe " + json.dumps(info))
'''
_MARKER = "@@kernelscope-probe "


@dataclass(frozen=True, slots=True)
class Interpreter:
    """What result.json records as ``environment.interpreter``."""

    path: str  # as the user gave it, made absolute (a venv's bin/python or a wrapper script; never resolved)
    executable: str  # sys.executable as that interpreter reports it (the real python behind a wrapper)
    python: str
    torch: str
    triton: str | None
    cuda: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _version_tuple(text: str) -> tuple[int, ...]:
    out = []
    for part in text.split("+")[0].split("."):
        digits = "".join(c for c in part if c.isdigit()) if part[:1].isdigit() else ""
        if not digits:
            break
        out.append(int(digits))
    return tuple(out)


def resolve(path: str, option: str = "--python") -> str:
    """The interpreter's absolute path: a bare name (``python3.11``) is looked up on PATH. Symlinks are kept:
    a venv's bin/python is a symlink to the base interpreter, and resolving it would leave the venv."""
    if os.sep not in path and not os.path.exists(path):
        found = shutil.which(path)
        if found is None:
            raise UsageError(f"{option} {path}: no such file, and no {path!r} on PATH",
                             "pass the path of a Python interpreter, e.g. /path/to/venv/bin/python")
        path = found
    p = Path(os.path.abspath(os.path.expanduser(path)))
    if p.is_dir():
        hint = next((str(c) for c in (p / "bin" / "python", p / "Scripts" / "python.exe") if c.exists()), None)
        raise UsageError(f"{option} {p} is a directory, not an interpreter",
                         f"pass {hint}" if hint else "pass the interpreter itself, e.g. VENV/bin/python")
    if not p.exists():
        raise UsageError(f"{option} {p}: no such file", "pass the path of a Python interpreter, e.g. VENV/bin/python")
    if not os.access(p, os.X_OK):
        raise UsageError(f"{option} {p} is not executable",
                         "pass a Python interpreter (or an executable wrapper script that runs one: chmod +x)")
    return str(p)


def probe(path: str, option: str = "--python") -> Interpreter:
    """Ask the interpreter at ``path`` for its versions (one subprocess). UsageError (exit 2) when it is not a
    Python interpreter, cannot import torch, or has a Python or torch older than kernelscope's worker needs."""
    path = resolve(path, option)
    env = dict(os.environ)
    # A TORCH_LOGS that torch rejects would look like a broken torch here; check_torch_logs says that instead.
    env.pop("TORCH_LOGS", None)
    try:
        proc = subprocess.run([path, "-c", _PROBE], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, env=env, errors="replace")
    except subprocess.TimeoutExpired:
        raise UsageError(f"{option} {path} did not answer within {PROBE_TIMEOUT_S:g} s (import torch hangs?)",
                         f"run {path} -c 'import torch' to see why")
    except OSError as exc:
        raise UsageError(f"{option} {path} cannot be run ({exc.strerror or exc})",
                         "pass a Python interpreter, or a wrapper script starting with #!")
    line = next((ln for ln in reversed(proc.stdout.splitlines()) if ln.startswith(_MARKER)), None)
    info: dict[str, Any] | None = None
    if line is not None:
        try:
            info = json.loads(line[len(_MARKER):])
        except ValueError:
            info = None
    if not isinstance(info, dict):
        said = (proc.stderr.strip().splitlines() or [""])[-1][:200]
        raise UsageError(f"{option} {path} is not a Python interpreter: running it with -c gave no answer "
                         f"(exit code {proc.returncode}{': ' + said if said else ''})",
                         "pass the python of the environment to profile, e.g. VENV/bin/python")
    py = str(info.get("python") or "?")
    if _version_tuple(py) < MIN_PYTHON:
        raise UsageError(f"{option} {path} is Python {py}; kernelscope's worker needs Python "
                         f">= {'.'.join(map(str, MIN_PYTHON))}", "pass a newer interpreter")
    if "torch" not in info:
        why = info.get("torch_error") or "no reason"
        raise UsageError(f"{option} {path} (Python {py}) cannot import torch ({why})",
                         "install torch into that environment, or pass the interpreter of one that has it")
    torch_v = str(info["torch"])
    if _version_tuple(torch_v)[:2] < MIN_TORCH:
        raise UsageError(f"{option} {path} has torch {torch_v}; kernelscope needs torch "
                         f">= {'.'.join(map(str, MIN_TORCH))}", "pass an environment with a newer torch")
    return Interpreter(path=path, executable=str(info.get("executable") or path), python=py, torch=torch_v,
                       triton=info.get("triton"), cuda=info.get("cuda"))


def package_root() -> Path:
    """The folder holding this kernelscope package (the worktree or site-packages)."""
    return Path(__file__).resolve().parent.parent.parent


def ship_worker(run_dir: Path) -> Path:
    """Copy the worker's modules into ``run_dir/worker/`` (once per run) and return the launcher's path."""
    dest = Path(run_dir) / SHIP_DIR
    launcher = dest / LAUNCHER
    if launcher.is_file():
        return launcher
    root = package_root()
    tmp = Path(run_dir) / f".{SHIP_DIR}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    for rel in WORKER_FILES:
        target = tmp / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / rel, target)
    (tmp / LAUNCHER).write_text(_LAUNCHER_TEXT, encoding="utf-8")
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(tmp, dest)  # whole or not at all: a half-copied package would fail in confusing ways
    return launcher


def worker_argv(python: str | None, run_dir: Path) -> list[str]:
    """The command line that starts a worker: kernelscope's own interpreter runs the installed module; another
    interpreter runs the copy shipped into the run directory."""
    if python is None:
        return [sys.executable, "-m", "kernelscope.capture.worker"]
    return [python, str(ship_worker(run_dir))]
