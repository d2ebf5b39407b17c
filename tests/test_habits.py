"""House habits CI keeps: the linter and the type checker pass (they run here because CI runs pytest).

ruff's settings and mypy's (strict on trace, inductor_code, analysis, result, result_file and capture_record) live in
pyproject.toml.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None,
                    reason="ruff is not installed (pip install -e '.[test]' installs it)")
def test_ruff_passes() -> None:
    proc = _run("ruff", "check", "kernelscope", "tests")
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (pip install -e '.[test]' installs it)")
def test_mypy_strict_modules_pass(tmp_path: Path) -> None:
    # A fresh cache under the test's tmp: a few seconds cold, and nothing left in the checkout.
    proc = _run("mypy", "--cache-dir", str(tmp_path / "mypy_cache"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success: no issues found" in proc.stdout
