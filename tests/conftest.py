"""Shared fixtures. The expensive one is ``cpu_run``: one real ``kernelscope profile`` on the CPU (real torch,
real Inductor, real torch.profiler) that every end-to-end test reads, so the suite compiles each mode once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
H200_211 = DATA / "h200-torch2.11"
H200_2141 = DATA / "h200-torch2.14.1-nvgemm"

# eager, Inductor default, and max-autotune pinned to the C++ GEMM template (deterministic epilogue fusion on
# 2 cores; with ATEN in the list MKL and the template trade places from run to run).
CPU_RUN_MODES = "eager,default,max-autotune:CPP,reduce-overhead"


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 900, env: dict | None = None
            ) -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it: a real subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "kernelscope", *args],
        capture_output=True, text=True, timeout=timeout, cwd=cwd or ROOT,
        env={**os.environ, **(env or {})},
    )


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
