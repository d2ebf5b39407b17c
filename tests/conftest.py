"""Shared fixtures. The expensive one is ``cpu_run``: one real ``kernelscope profile`` on the CPU (real torch,
real Inductor, real torch.profiler) that every end-to-end test reads, so the suite compiles each mode once."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kernelscope.capture_record import CAPTURE_FILE

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
H200_211 = DATA / "h200-torch2.11"
H200_2141 = DATA / "h200-torch2.14.1-nvgemm"


def benchmark_module(name: str) -> Any:
    """A script of benchmarks/ (scripts, not a package) as a module: the large-trace generator is shared by the
    benchmarks and the tests. Registered in sys.modules first: dataclasses look their module up there."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


# eager, Inductor default, and max-autotune pinned to the C++ GEMM template (deterministic epilogue fusion on
# 2 cores; with ATEN in the list MKL and the template trade places from run to run).
CPU_RUN_MODES = "eager,default,max-autotune:CPP,reduce-overhead"


# The fast tier (-m "not slow") runs one real profile, FAST_PROFILE's. Any other test whose CLI run gets as far as a
# mode's worker (its capture record under --out) must be marked slow: run_cli and run_cli_isolated fail it otherwise.
FAST_PROFILE = "tests/test_report_command.py::test_profile_appends_summary_md_in_actions"
_running: list[pytest.Item] = []


if os.environ.get("PYTEST_XDIST_WORKER"):
    # xdist's workers start with COLUMNS=80, which a serial run (and CI) does not have; the tests that depend on a
    # terminal width set COLUMNS themselves
    os.environ.pop("COLUMNS", None)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _running[:] = [item]  # before the fixtures: a session fixture's run counts for the test that first asks for it


def _check_tier(args: tuple[str, ...], cwd: Path) -> None:
    if not _running or args[:1] not in (("profile",), ("upgrade-check",)) or "--out" not in args[:-1]:
        return
    item = _running[0]
    if item.get_closest_marker("slow") or item.nodeid == FAST_PROFILE:
        return
    out = cwd / args[args.index("--out") + 1]
    if out.is_dir() and next(out.rglob(CAPTURE_FILE), None) is not None:
        pytest.fail(f"{item.nodeid} runs a real `kernelscope {args[0]}` (a worker wrote {CAPTURE_FILE}): mark it "
                    "@pytest.mark.slow", pytrace=False)


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 900, env: dict | None = None
            ) -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it: a real subprocess."""
    proc = subprocess.run(
        [sys.executable, "-m", "kernelscope", *args],
        capture_output=True, text=True, timeout=timeout, cwd=cwd or ROOT,
        env={**os.environ, **(env or {})},
    )
    _check_tier(args, cwd or ROOT)
    return proc


@pytest.fixture(scope="session")
def cpu_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cpu-run") / "linear_gelu"
    # Two processes per mode: the across-process path end to end, at a fraction of the default five's cost.
    proc = run_cli("profile", "samples/linear_gelu.py", "--device", "cpu", "--modes", CPU_RUN_MODES,
                   "--repeats", "5", "--warmup", "3", "--processes", "2", "--out", str(out))
    # reduce-overhead is unavailable on the CPU, which is not a failure: exit 0.
    assert proc.returncode == 0, proc.stderr[-3000:]
    (out / "cli-stdout.txt").write_text(proc.stdout)
    (out / "cli-stderr.txt").write_text(proc.stderr)
    return out


@pytest.fixture(scope="session")
def cpu_result(cpu_run: Path) -> dict:
    return json.loads((cpu_run / "result.json").read_text())


@pytest.fixture(scope="session")
def moe_bf16_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The zoo's Mixtral-style model (2 layers, experts through torch._grouped_mm) in bf16, eager and default."""
    out = tmp_path_factory.mktemp("moe-bf16") / "run"
    proc = run_cli("profile", str(ROOT / "tests" / "zoo" / "models" / "hf_mixtral.py"), "--device", "cpu",
                   "--dtype", "bfloat16", "--modes", "eager,default", "--processes", "1", "--repeats", "3",
                   "--warmup", "2", "--steps", "2", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


# --- another interpreter (profile --python, upgrade-check): a venv made in the test session -------------------
# Deliberately NOT importable there: kernelscope (the editable install's finder lives in a .pth, which a path
# added by another .pth does not run) and the parent-only packages the worker must not need.
PARENT_ONLY = ("kernelscope", "msgspec", "rich", "click")


def run_cli_isolated(*args: str, timeout: float = 900, cwd: Path | None = None
                     ) -> subprocess.CompletedProcess[str]:
    """The CLI from this worktree with PYTHONPATH unset, so the workers it starts inherit no path to kernelscope:
    under another interpreter the only kernelscope they can import is the copy the run ships."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    boot = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from kernelscope.cli import main; main()"
    proc = subprocess.run([sys.executable, "-c", boot, *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd or ROOT, env=env)
    _check_tier(args, cwd or ROOT)
    return proc


@pytest.fixture(scope="session")
def torch_only_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bin/python of a venv that sees this interpreter's torch (and its dependencies) but not kernelscope,
    msgspec, rich or click: the pre-upgrade venv of a user who never installed kernelscope there."""
    import re

    import torch  # the test process may import torch; kernelscope's parent never does

    site = Path(torch.__file__).resolve().parent.parent
    root = tmp_path_factory.mktemp("torch-only")
    venv, farm = root / "venv", root / "site"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    hidden = re.compile(r"^(__editable__|_?(" + "|".join(PARENT_ONLY) + r"))|\.pth$", re.IGNORECASE)
    farm.mkdir()
    for entry in site.iterdir():
        if not hidden.search(entry.name):
            (farm / entry.name).symlink_to(entry)
    (next(venv.glob("lib/python*/site-packages")) / "torch-only.pth").write_text(f"{farm}\n")
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    check = ("import importlib.util as u, torch; "
             f"print([m for m in {PARENT_ONLY!r} if u.find_spec(m) is not None])")
    proc = subprocess.run([str(python), "-c", check], capture_output=True, text=True, env=env, timeout=300,
                          cwd=root)  # not the worktree: `-c` puts the working directory on sys.path
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", (proc.stdout, proc.stderr[-2000:])
    return python
