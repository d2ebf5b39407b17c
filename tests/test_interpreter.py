"""profile --python: the worker under another interpreter (a venv with torch and without kernelscope).

The interpreter check runs real subprocesses on real files (not-an-interpreter, no torch, an old torch); the
end-to-end run uses a venv made in this session that cannot import kernelscope, msgspec, rich or click.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernelscope.capture.interpreter import (
    LAUNCHER,
    MIN_TORCH,
    SHIP_DIR,
    WORKER_FILES,
    package_root,
    probe,
    ship_worker,
)
from kernelscope.errors import UsageError

from .conftest import PARENT_ONLY, ROOT, run_cli_isolated
from .test_faults import assert_one_line_error

# What the worker's side may import besides the standard library and itself.
WORKER_THIRD_PARTY = {"torch", "triton", "cutlass"}
# kernelscope imports in shipped files that the worker never executes: (file, enclosing function).
PARENT_ONLY_CALLS: set[tuple[str, str]] = set()


def _imports(rel: str) -> list[tuple[str, str | None]]:
    """(imported module, enclosing function) for every import in a file, at any depth."""
    tree = ast.parse((package_root() / rel).read_text())
    out: list[tuple[str, str | None]] = []

    def visit(node: ast.AST, func: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            f = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and func is None else func
            if isinstance(child, ast.Import):
                out.extend((a.name, f) for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and not child.level:
                out.append((child.module, f))
                # `from kernelscope import modelfile` imports a module too
                out.extend((f"{child.module}.{a.name}", f) for a in child.names
                           if child.module.startswith("kernelscope"))
            visit(child, f)

    visit(tree, None)
    return out


def _file_of(module: str) -> str | None:
    base = package_root() / Path(*module.split("."))
    if (base / "__init__.py").is_file():
        return f"{module.replace('.', '/')}/__init__.py"
    if base.with_suffix(".py").is_file():
        return f"{module.replace('.', '/')}.py"
    return None  # a name imported from a module, not a module


def test_shipped_files_are_the_workers_whole_import_closure_and_need_no_third_party_package():
    # GIVEN every import in the shipped files (function-level ones too: the worker imports lazily)
    missing, foreign = [], []
    for rel in WORKER_FILES:
        for module, func in _imports(rel):
            top = module.split(".")[0]
            if top == "kernelscope":
                f = _file_of(module)
                if f and f not in WORKER_FILES and (rel, func) not in PARENT_ONLY_CALLS:
                    missing.append((rel, module))
            elif top not in sys.stdlib_module_names and top not in WORKER_THIRD_PARTY and top != "__future__":
                foreign.append((rel, module))
    # THEN each kernelscope module they import is shipped, and nothing needs msgspec/rich/click/jinja2
    assert missing == []
    assert foreign == []
    # and every package on the way has its __init__
    for rel in WORKER_FILES:
        parts = Path(rel).parts[:-1]
        for i in range(1, len(parts) + 1):
            assert "/".join(parts[:i]) + "/__init__.py" in WORKER_FILES, rel


def test_ship_worker_copies_the_files_and_a_launcher(tmp_path: Path):
    launcher = ship_worker(tmp_path)
    assert launcher == tmp_path / SHIP_DIR / LAUNCHER
    shipped = sorted(str(p.relative_to(tmp_path / SHIP_DIR)) for p in (tmp_path / SHIP_DIR).rglob("*.py"))
    assert shipped == sorted([*WORKER_FILES, LAUNCHER])
    for rel in WORKER_FILES:
        assert (tmp_path / SHIP_DIR / rel).read_bytes() == (package_root() / rel).read_bytes()
    assert not list(tmp_path.glob(f".{SHIP_DIR}.tmp-*"))
    assert ship_worker(tmp_path) == launcher  # once per run directory

    from kernelscope.outdir import OWNED

    assert SHIP_DIR in OWNED  # a rerun into the same --out replaces it


def test_probe_reports_this_interpreter():
    import torch

    info = probe(sys.executable)
    assert info.path == os.path.abspath(sys.executable)
    assert info.torch == torch.__version__
    assert info.python == ".".join(map(str, sys.version_info[:3]))


def _script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.mark.parametrize(
    ("case", "make", "needles"),
    [
        ("missing", lambda d: d / "nope" / "python", ["no such file"]),
        ("directory", lambda d: d, ["is a directory, not an interpreter"]),
        ("not executable", lambda d: (d / "py").write_text("x") and d / "py", ["is not executable"]),
        ("not python", lambda d: _script(d / "py", "#!/bin/sh\necho hello\n"),
         ["is not a Python interpreter", "gave no answer"]),
        ("echoes its arguments", lambda d: _script(d / "py", '#!/bin/sh\necho "$@"\n'),
         ["is not a Python interpreter"]),
        ("no such name on PATH", lambda d: "kernelscope-no-such-python", ["no such file, and no"]),
    ],
)
def test_probe_refuses_what_is_not_an_interpreter(tmp_path: Path, case, make, needles):
    with pytest.raises(UsageError) as info:
        probe(str(make(tmp_path)))
    assert info.value.exit_code == 2
    assert "\n" not in info.value.message
    for n in needles:
        assert n in info.value.message, info.value.message


def test_probe_refuses_an_interpreter_without_torch(tmp_path: Path):
    # GIVEN a venv of this Python with nothing installed (no system site-packages: no torch)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "v")], check=True, timeout=120)
    with pytest.raises(UsageError) as info:
        probe(str(tmp_path / "v" / "bin" / "python"))
    assert "cannot import torch (ModuleNotFoundError: No module named 'torch')" in info.value.message


def test_probe_refuses_a_torch_older_than_kernelscope_supports(tmp_path: Path):
    # GIVEN an interpreter whose torch says 2.1.0 (a stand-in package on its path: the check reads __version__)
    old = tmp_path / "old"
    (old / "torch").mkdir(parents=True)
    (old / "torch" / "__init__.py").write_text("__version__ = '2.1.0+cu118'\nclass version:\n    cuda = '11.8'\n")
    wrapper = _script(tmp_path / "python-old-torch",
                      f"#!/bin/sh\nPYTHONPATH={old} exec {sys.executable} \"$@\"\n")
    with pytest.raises(UsageError) as info:
        probe(str(wrapper))
    floor = ".".join(map(str, MIN_TORCH))
    assert info.value.message.startswith(
        f"--python {wrapper} has torch 2.1.0+cu118; kernelscope needs torch >= {floor}")


def test_profile_refuses_a_bad_python_before_running_anything(tmp_path: Path):
    out = tmp_path / "out"
    proc = run_cli_isolated("profile", "samples/linear_gelu.py", "--device", "cpu", "--python", "/bin/true",
                            "--out", str(out))
    assert_one_line_error(proc, 2, "--python /bin/true is not a Python interpreter")
    assert not (out / "modes").exists()


@pytest.mark.slow
def test_worker_cannot_run_there_without_the_shipped_copy(torch_only_python: Path, tmp_path: Path):
    # The control: `python -m kernelscope.capture.worker` fails in that venv, so the run below used the shipped copy.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([str(torch_only_python), "-m", "kernelscope.capture.worker", "spec.json"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 1
    assert "No module named 'kernelscope'" in proc.stderr


@pytest.fixture(scope="module")
def venv_profile(torch_only_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("venv-profile")
    out = work / "out"
    # From a folder without kernelscope in it: the worker puts its working directory on sys.path, like -m.
    proc = run_cli_isolated("profile", str(ROOT / "samples" / "linear_gelu.py"), "--device", "cpu", "--modes", "eager",
                            "--repeats", "3", "--warmup", "1", "--no-tensorboard", "--out", str(out),
                            "--python", str(torch_only_python), cwd=work)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.mark.slow
def test_profile_under_a_venv_without_kernelscope(venv_profile: Path, torch_only_python: Path):
    import torch

    result = json.loads((venv_profile / "result.json").read_text())
    (eager,) = result["modes"]
    assert eager["status"] == "ok"
    assert eager["kernels_per_iter"] == 2  # addmm (its bias copy is part of its work) and gelu (the ATen CPU path)
    env = result["environment"]
    # the interpreter is recorded as given (the venv's bin/python, not the base interpreter it links to)
    assert env["interpreter"]["path"] == str(torch_only_python)
    assert env["interpreter"]["torch"] == env["torch"] == torch.__version__
    assert env["interpreter"]["python"] == env["python"]
    assert "triton" in env["interpreter"]
    assert result["settings"]["python"] == str(torch_only_python)
    # the worker ran from the shipped copy under that interpreter
    assert (venv_profile / SHIP_DIR / "kernelscope" / "capture" / "worker.py").is_file()
    spec = json.loads((venv_profile / "modes" / "eager" / "spec.json").read_text())
    assert spec["mode"]["name"] == "eager"


@pytest.mark.slow
def test_parent_only_packages_exist_here(torch_only_python: Path):
    # The venv's lack of these proves something only because kernelscope's own environment has them.
    import importlib.util

    assert all(importlib.util.find_spec(m) is not None for m in PARENT_ONLY)


@pytest.mark.slow
def test_profile_through_a_wrapper_script_that_puts_torch_on_pythonpath(torch_only_python: Path, tmp_path: Path):
    # GIVEN a venv without torch and a wrapper script that puts a torch folder on PYTHONPATH and execs that venv's
    # python: the H200 recipe, where torch 2.14.1 is `pip install --target /tmp/t214`ed beside the image's 2.11
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True, timeout=120)
    bare = tmp_path / "bare" / "bin" / "python"
    torch_dir = torch_only_python.parents[2] / "site"  # the fixture's folder of torch and its dependencies
    wrapper = _script(tmp_path / "python-torch", "#!/bin/sh\n"
                      f"export PYTHONPATH={torch_dir}${{PYTHONPATH:+:$PYTHONPATH}}\nexec {bare} \"$@\"\n")
    out = tmp_path / "out"
    proc = run_cli_isolated("profile", str(ROOT / "samples" / "linear_gelu.py"), "--device", "cpu", "--modes",
                            "eager", "--repeats", "3", "--warmup", "1", "--no-tensorboard", "--out", str(out),
                            "--python", str(wrapper), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    env = json.loads((out / "result.json").read_text())["environment"]
    # THEN the wrapper is the recorded interpreter, and the python it ran is the bare venv's
    assert env["interpreter"]["path"] == str(wrapper)
    assert env["interpreter"]["executable"] == str(bare)
    assert json.loads((out / "result.json").read_text())["modes"][0]["status"] == "ok"
