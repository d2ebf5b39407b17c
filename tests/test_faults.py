"""Bad input and faults, through the real CLI: one line naming the problem and the fix, exit 2 for usage errors
and 1 for run failures, no traceback unless --debug, and every finished mode kept in result.json and the report.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from kernelscope.report.words import note_from, say

from .conftest import DATA, ROOT, run_cli

TINY = "import torch\n{extra}\ndef get_model():\n    return {model}\ndef get_inputs():\n    return {inputs}\n"


def tiny(tmp_path: Path, *, model: str = "torch.nn.ReLU()", inputs: str = "[torch.randn(4, 8)]", extra: str = "",
         name: str = "m.py") -> Path:
    p = tmp_path / name
    p.write_text(TINY.format(model=model, inputs=inputs, extra=extra))
    return p


def assert_one_line_error(proc: subprocess.CompletedProcess[str], code: int, *needles: str) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stderr[-2000:])
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("kernelscope: error:")]
    assert len(errors) == 1, proc.stderr
    line = errors[0]
    for n in needles:
        assert n in line, (n, line)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    return line


def profile(tmp_path: Path, model: Path | str, *args: str, out: str = "out", timeout: float = 600):
    return run_cli("profile", str(model), "--device", "cpu", "--repeats", "3", "--warmup", "1", "--processes", "1",
                   "--out", str(tmp_path / out), *args, timeout=timeout)


# --- model file: caught before any mode runs (no torch in the parent) ---------------------------------------


@pytest.mark.parametrize(
    ("case", "setup", "needles"),
    [
        ("missing", lambda d: d / "nope.py", ["does not exist", "samples/linear_gelu.py"]),
        ("not python", lambda d: (d / "m.txt").write_text("x") and d / "m.txt", ["is not a .py file"]),
        ("syntax error", lambda d: (d / "m.py").write_text("def f(:\n") and d / "m.py",
         ["syntax error at line 1", "fix the Python syntax"]),
        ("no protocol", lambda d: (d / "m.py").write_text("x = 1\n") and d / "m.py",
         ["defines no get_model() or Model class", "define get_model()"]),
    ],
)
def test_static_model_file_errors(tmp_path: Path, case, setup, needles):
    proc = profile(tmp_path, setup(tmp_path))
    assert_one_line_error(proc, 2, *needles)
    assert not (tmp_path / "out").exists()  # nothing was run, nothing written


def test_bad_set_syntax(tmp_path: Path):
    proc = profile(tmp_path, ROOT / "samples" / "linear_gelu.py", "--set", "batch_size")
    assert_one_line_error(proc, 2, "is not NAME=VALUE", "--set batch_size=64")


def test_unknown_set_name(tmp_path: Path):
    proc = profile(tmp_path, ROOT / "samples" / "linear_gelu.py", "--set", "bs=3")
    assert_one_line_error(proc, 2, "no module-level constant 'bs'", "batch_size")


def test_unknown_mode(tmp_path: Path):
    proc = profile(tmp_path, ROOT / "samples" / "linear_gelu.py", "--modes", "eager,fast")
    assert_one_line_error(proc, 2, "unknown mode 'fast'", "max-autotune")


def test_unknown_gemm_backend(tmp_path: Path):
    proc = profile(tmp_path, ROOT / "samples" / "linear_gelu.py", "--gemm-backends", "CUBLAS")
    assert_one_line_error(proc, 2, "unknown GEMM backend 'CUBLAS'", "NVGEMM")


def test_unsupported_dtype_option(tmp_path: Path):
    proc = profile(tmp_path, ROOT / "samples" / "linear_gelu.py", "--dtype", "int8")
    assert_one_line_error(proc, 2, "'int8' is not one of", "--help")


@pytest.mark.parametrize(("value", "needle"), [
    ("bogus", "ValueError: Invalid log settings: bogus"),
    ("", "AttributeError"),  # torch 2.14 fails to import with an empty TORCH_LOGS
])
def test_torch_logs_that_torch_rejects_is_refused_before_any_mode_runs(tmp_path: Path, value: str, needle: str):
    # Every worker inherits TORCH_LOGS and `import torch` raises with it: without this check each mode failed with
    # the same obscure error.
    proc = run_cli("profile", "samples/linear_gelu.py", "--device", "cpu", "--out", str(tmp_path / "out"),
                   env={"TORCH_LOGS": value})
    assert_one_line_error(proc, 2, f"TORCH_LOGS={value!r} is not a setting torch accepts", needle,
                          "unset TORCH_LOGS or fix it")
    assert not (tmp_path / "out").exists()  # refused before the output directory was made


@pytest.mark.slow
def test_a_valid_torch_logs_is_passed_through(tmp_path: Path):
    proc = run_cli("profile", str(tiny(tmp_path)), "--device", "cpu", "--modes", "eager", "--repeats", "3",
                   "--warmup", "1", "--processes", "1", "--out", str(tmp_path / "out"), env={"TORCH_LOGS": "+dynamo"})
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_output_dir_not_writable(tmp_path: Path):
    (tmp_path / "afile").write_text("x")
    proc = run_cli("profile", "samples/linear_gelu.py", "--out", str(tmp_path / "afile" / "sub"))
    assert_one_line_error(proc, 2, "is not writable", "--out")


def test_output_dir_is_a_file(tmp_path: Path):
    (tmp_path / "afile").write_text("x")
    proc = run_cli("profile", "samples/linear_gelu.py", "--out", str(tmp_path / "afile"))
    assert_one_line_error(proc, 2, "is a file", "--out")


def test_foreign_non_empty_output_dir_is_refused(tmp_path: Path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    proc = run_cli("profile", "samples/linear_gelu.py", "--out", str(out))
    assert_one_line_error(proc, 2, "not empty and was not written by kernelscope", "--force")
    assert (out / "thesis.tex").read_text() == "precious"


# --- model file: caught in the worker ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "kwargs", "code", "needles"),
    [
        ("import error", {"extra": "import not_a_module_xyz"}, 2,
         ["importing the model file in m.py (line 2) raised ModuleNotFoundError", "--debug"]),
        ("inputs not tensors", {"inputs": "[1, 'a']"}, 2, ["get_inputs() returned no tensor (int, str)"]),
        ("wrong arity", {"inputs": "[torch.randn(2), torch.randn(2)]"}, 2,
         ["returned 2 input(s) but the model's forward takes 1", "one entry per positional argument"]),
        ("zero-size input", {"inputs": "[torch.randn(0, 8)]"}, 2, ["input 0 is empty (shape (0, 8))"]),
    ],
)
@pytest.mark.slow
def test_model_errors_in_the_worker_stop_the_run(tmp_path: Path, case, kwargs, code, needles):
    proc = profile(tmp_path, tiny(tmp_path, **kwargs), "--modes", "eager,default")
    line = assert_one_line_error(proc, code, *needles)
    # the compiled mode is not run once the model file itself is broken, and a run that never loaded or built the
    # model writes no report: the error is said once, on the one error line
    assert not (tmp_path / "out" / "result.json").exists() and not (tmp_path / "out" / "report.html").exists()
    message = line.removeprefix("kernelscope: error: ").split(";")[0]
    assert (proc.stderr + proc.stdout).count(message) == 1, proc.stderr


@pytest.mark.slow
def test_a_forward_that_raises_is_a_run_failure_with_each_modes_error_in_result_json(tmp_path: Path):
    # The model builds, its forward raises: CI's artifacts must show why, so result.json and the
    # reports are written; the compiled mode, whose worker runs the same eager forward first, is not run.
    boom = "class Boom(torch.nn.Module):\n    def forward(self, x):\n        raise ValueError('bad shapes')"
    proc = profile(tmp_path, tiny(tmp_path, model="Boom()", extra=boom), "--modes", "eager,default")
    out = tmp_path / "out"
    assert_one_line_error(proc, 1, "the model's forward (eager) in m.py (line 4) raised ValueError: bad shapes",
                          f"every mode's error is in {out / 'result.json'} (report: {out / 'report.html'})")
    eager, default = json.loads((out / "result.json").read_text())["modes"]
    assert (eager["status"], eager["error_kind"]) == ("failed", "forward") and "bad shapes" in eager["error"]
    assert (default["status"], default["error_kind"]) == ("failed", "skipped")
    assert default["error"].startswith("not run: the model's forward (eager)") and "bad shapes" in default["error"]
    assert (out / "report.html").is_file() and (out / "summary.md").is_file()


def test_debug_shows_the_traceback(tmp_path: Path):
    proc = run_cli("profile", str(tmp_path / "nope.py"), "--debug")
    assert proc.returncode != 0 and "Traceback" in proc.stderr


@pytest.mark.slow
def test_cuda_requested_without_cuda(tmp_path: Path):
    proc = run_cli("profile", str(tiny(tmp_path)), "--device", "cuda", "--modes", "eager", "--out",
                   str(tmp_path / "out"))
    assert_one_line_error(proc, 2, "--device cuda but torch sees no CUDA device", "--device cpu")


# --- faults in one mode: the others keep their results --------------------------------------------------------

COMPILE_ONLY = ("    def forward(self, x):\n        if torch.compiler.is_compiling():\n{body}\n"
                "        return torch.relu(x)")


def compile_only_model(tmp_path: Path, body: str, extra: str = "") -> Path:
    cls = "class M(torch.nn.Module):\n" + COMPILE_ONLY.format(body=body)
    return tiny(tmp_path, model="M()", extra=extra + "\n" + cls)


def _report_has_modes(out: Path, names: list[str]) -> None:
    html = (out / "report.html").read_text()
    md = (out / "summary.md").read_text()
    for n in names:
        assert n in html and n in md


@pytest.mark.slow
def test_failure_in_one_mode_keeps_the_others(tmp_path: Path):
    # A real Dynamo failure: the custom op's fake (meta) kernel raises, which only tracing calls.
    # (A `raise` under torch.compiler.is_compiling() is no good: Dynamo falls back to eager and "succeeds".)
    extra = ("@torch.library.custom_op('kstest::boom', mutates_args=())\n"
             "def boom(x: torch.Tensor) -> torch.Tensor:\n    return x.relu()\n"
             "@boom.register_fake\n"
             "def _(x):\n    raise RuntimeError('no compile for you')\n"
             "class M(torch.nn.Module):\n    def forward(self, x):\n        return boom(x)\n")
    model = tiny(tmp_path, model="M()", extra=extra)
    proc = profile(tmp_path, model, "--modes", "eager,default")
    line = assert_one_line_error(proc, 1, "1 mode(s) did not finish: default (failed)", "report.html")
    out = tmp_path / "out"
    result = json.loads((out / "result.json").read_text())
    eager, default = result["modes"]
    assert eager["status"] == "ok" and eager["latency_ms"]["median"] > 0
    assert default["status"] == "failed" and "no compile for you" in default["error"]
    assert "log.txt" in default["error"]
    _report_has_modes(out, ["eager", "default"])
    assert "no compile for you" in (out / "modes" / "default" / "log.txt").read_text()
    assert "\n" not in line
    # one message per failure: the error is printed once (in the summary), not on the mode line too
    assert (proc.stdout + proc.stderr).count("no compile for you") == 1, proc.stdout + proc.stderr


@pytest.mark.slow
def test_hanging_mode_is_stopped_by_timeout_and_the_rest_continue(tmp_path: Path):
    model = compile_only_model(tmp_path, "            time.sleep(3600)", extra="import time")
    t0 = time.time()
    proc = profile(tmp_path, model, "--modes", "default,eager", "--timeout", "15")
    assert time.time() - t0 < 200
    assert_one_line_error(proc, 1, "default (timeout)")
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    default, eager = result["modes"]
    assert default["status"] == "timeout" and "--timeout 15 s" in default["error"]
    assert eager["status"] == "ok"
    # the killed worker left nothing behind
    ps = subprocess.run(["ps", "-eww", "-o", "args"], capture_output=True, text=True).stdout
    assert str(tmp_path / "out" / "modes" / "default" / "spec.json") not in ps


@pytest.mark.slow
def test_a_machine_without_a_cxx_compiler_fails_the_compiled_mode_with_the_fix(tmp_path: Path):
    # GIVEN a CPU machine where Inductor finds no C++ compiler (CXX names none), eager and default
    proc = run_cli("profile", str(tiny(tmp_path)), "--device", "cpu", "--modes", "eager,default", "--repeats", "3",
                   "--warmup", "1", "--processes", "1", "--out", str(tmp_path / "out"),
                   env={"CXX": str(tmp_path / "no-such-g++")})
    assert_one_line_error(proc, 1, "default (failed)")
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    eager, default = result["modes"]
    # THEN eager ran, and the compiled mode failed as the machine's failure, with the fix in the error
    assert eager["status"] == "ok"
    assert default["status"] == "failed" and default["error_kind"] == "toolchain", default["error"]
    assert "InvalidCxxCompiler" in default["error"] and "set CXX to one" in default["error"]
    # AND the advice is to install a compiler, not to keep eager for the model
    (group,) = result["failure_groups"]
    assert [a["code"] for a in group["advice"]] == ["hint-no-cxx-compiler"]
    assert "install one (e.g. apt install g++)" in " ".join(proc.stdout.split())


@pytest.mark.slow
def test_out_of_memory_in_one_mode(tmp_path: Path):
    # A real allocation failure, only when compiled: an extern GEMM needs its 2**61-byte operand materialised
    # (a reduction over torch.empty would be fused into a loop that allocates nothing).
    model = compile_only_model(tmp_path, "            return torch.mm(x, torch.empty(8, 2**56))")
    proc = profile(tmp_path, model, "--modes", "eager,default")
    assert_one_line_error(proc, 1, "default (failed)")
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert result["modes"][0]["status"] == "ok"
    d = result["modes"][1]
    assert d["status"] == "failed" and d["error_kind"] == "oom", d["error"]
    assert "lower the input sizes" in d["error"]


@pytest.mark.slow
def test_nan_and_inf_outputs_are_reported_not_crashed(tmp_path: Path):
    model = tiny(tmp_path, model="M()", extra="class M(torch.nn.Module):\n    def forward(self, x):\n"
                                               "        return x / torch.zeros_like(x)")
    proc = profile(tmp_path, model, "--modes", "eager")
    assert proc.returncode == 0, proc.stderr
    result = json.loads((tmp_path / "out" / "result.json").read_text())  # strict JSON: no NaN literals
    (m,) = result["modes"]
    assert any("NaN or Inf" in n for n in m["notes"])
    assert m["numerics"]["vs_eager"]["nonfinite"] == 32


# The compiled mode's first call starts a process in a session of its own (as torchrun starts each rank), then
# hangs in the compile: stopping the worker's process group alone would leave that process running.
HANG = ("import subprocess, sys, time\n"
        "@torch.compiler.disable\n"
        "def hang():\n"
        "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)', '{token}'], "
        "start_new_session=True)\n"
        "    time.sleep(3600)\n")


def pids_with(text: str) -> list[int]:
    """Processes whose command line holds ``text`` (a zombie's is empty: it no longer runs)."""
    found = []
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and text.encode() in (d / "cmdline").read_bytes():
                found.append(int(d.name))
        except OSError:
            pass
    return found


def wait_until(cond, proc: subprocess.Popen[str], what: str, seconds: float = 300) -> None:
    deadline = time.time() + seconds
    while not cond():
        assert proc.poll() is None, f"kernelscope ended before {what}: {proc.communicate()[1][-2000:]}"
        assert time.time() < deadline, f"no {what} after {seconds} s"
        time.sleep(0.3)


@pytest.mark.parametrize(("sig", "code", "processes", "torchrun"),
                         [(signal.SIGTERM, 143, 1, ()), (signal.SIGINT, 130, 2, ("--nproc", "2")),
                          (signal.SIGINT, 130, 2, ("--parallel-setup", "on"))],
                         ids=["SIGTERM", "SIGINT-torchrun-2-processes", "SIGINT-started-ahead-2-processes"])
@pytest.mark.slow
def test_a_signal_keeps_the_finished_modes_and_stops_every_worker(tmp_path: Path, sig: signal.Signals, code: int,
                                                                  processes: int, torchrun: tuple[str, ...]):
    # SIGTERM is a CI job's timeout or cancel, SIGINT a Ctrl-C; under torchrun each rank runs in a
    # session of its own, away from torchrun's process group; with --parallel-setup on every process of the run
    # has started (and waits) when default hangs.
    out = tmp_path / "out"
    token = f"kstest-{uuid.uuid4().hex}"
    model = compile_only_model(tmp_path, "            hang()", extra=HANG.format(token=token))
    proc = subprocess.Popen([sys.executable, "-m", "kernelscope", "profile", str(model), "--device", "cpu",
                             "--modes", "eager,default,max-autotune", "--repeats", "3", "--warmup", "1",
                             "--processes", str(processes), *torchrun, "--out", str(out)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # eager's first process finished and default hangs in its compile
        wait_until(lambda: pids_with(token), proc, "the hang")
        if processes == 1:  # eager finished: result.json is written as each mode finishes
            assert [m["status"] for m in json.loads((out / "result.json").read_text())["modes"]] == [
                "ok", "interrupted", "interrupted"]  # what the run is if it dies now
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, stderr[-2000:]
    assert stderr.splitlines()[-1] == (f"kernelscope: interrupted ({sig.name}) during default; kept eager in "
                                       f"{out / 'result.json'} (report: {out / 'report.html'})")
    assert "Traceback" not in stderr + stdout
    modes = json.loads((out / "result.json").read_text())["modes"]
    assert [(m["name"], m["status"]) for m in modes] == [
        ("eager", "ok"), ("default", "interrupted"), ("max-autotune", "interrupted")]
    assert modes[0]["latency_ms"]["median"] > 0
    if processes > 1:  # eager's later process never ran: kept with the one that did
        assert f"timed in 1 of 2 processes: the run was interrupted ({sig.name})" in [
            say(note_from(n)) for n in modes[0]["findings"]]
    assert modes[1]["error"] == f"interrupted ({sig.name}) while it ran"
    assert modes[2]["error"] == f"interrupted ({sig.name}) before it ran"
    # no worker left: not the default worker (its spec is under out/), nor the process it started in its own session
    deadline = time.time() + 10
    while pids_with(token) or pids_with(str(out)):
        assert time.time() < deadline, (pids_with(token), pids_with(str(out)))
        time.sleep(0.2)
    # the partial run renders, and says what did not finish
    rendered = run_cli("report", str(out), "--quiet")
    assert rendered.returncode == 0, rendered.stderr
    html = (out / "report.html").read_text()
    assert "interrupted" in html and "run it again to measure it" in html


@pytest.mark.slow
def test_an_interrupted_upgrade_check_keeps_each_sides_finished_modes(tmp_path: Path):
    out = tmp_path / "out"
    token = f"kstest-{uuid.uuid4().hex}"
    model = compile_only_model(tmp_path, "            hang()", extra=HANG.format(token=token))
    # jobs: eager before, eager after, default after (hangs), default before
    proc = subprocess.Popen([sys.executable, "-m", "kernelscope", "upgrade-check", str(model), "--before",
                             sys.executable, "--device", "cpu", "--modes", "eager,default", "--repeats", "3",
                             "--warmup", "1", "--processes", "1", "--no-tensorboard", "--out", str(out)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: (out / "after" / "result.json").exists() and pids_with(token), proc,
                   "both sides' eager and the hang")
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, stderr[-2000:]
    assert stderr.splitlines()[-1] == (
        f"kernelscope: interrupted (SIGTERM) during default (after); kept eager (before), eager (after) in "
        f"{out / 'before'} and {out / 'after'} (comparison: {out / 'compare.html'})")
    for side in ("before", "after"):
        modes = json.loads((out / side / "result.json").read_text())["modes"]
        assert [m["status"] for m in modes] == ["ok", "interrupted"], side
    assert json.loads((out / "compare.json").read_text())["modes"][0]["status"] == {"before": "ok", "after": "ok"}
    deadline = time.time() + 10
    while pids_with(token) or pids_with(str(out)):
        assert time.time() < deadline, (pids_with(token), pids_with(str(out)))
        time.sleep(0.2)


def test_a_second_signal_during_the_clean_up_stops_the_workers_and_exits_at_once(tmp_path: Path):
    # No torch: the signal handling itself, with a clean-up that would take an hour.
    token = f"kstest-{uuid.uuid4().hex}"
    # the worker starts a process in a session of its own (a torchrun rank); only that one's command line holds
    # "<token>-rank" (built at run time, so this script's text does not)
    tree = ("import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)', "
            "sys.argv[1] + '-rank'], start_new_session=True); time.sleep(3600)")
    script = (
        "import subprocess, sys, time\n"
        "from kernelscope.capture import signals\n"
        "with signals.handling():\n"
        f"    child = subprocess.Popen([sys.executable, '-c', {tree!r}, '{token}'], start_new_session=True)\n"
        "    with signals.live(child.pid):\n"
        "        try:\n"
        "            print('ready', flush=True)\n"
        "            time.sleep(3600)\n"
        "        except KeyboardInterrupt as exc:\n"
        "            print('cleaning up after', exc, flush=True)\n"
        "            time.sleep(3600)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        wait_until(lambda: pids_with(f"{token}-rank"), proc, "the worker's own-session child", 60)
        proc.send_signal(signal.SIGTERM)
        assert proc.stdout.readline() == "cleaning up after SIGTERM\n"
        t0 = time.time()
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert time.time() - t0 < 10
    assert proc.returncode == 143, stderr  # the signal that stopped the run
    assert "kernelscope: interrupted (SIGTERM), then SIGINT" in stderr
    deadline = time.time() + 10
    while pids_with(token):  # the worker and its child
        assert time.time() < deadline, pids_with(token)
        time.sleep(0.2)


@pytest.mark.slow
def test_rerun_into_the_same_directory_leaves_no_old_files(tmp_path: Path):
    out = tmp_path / "out"
    assert profile(tmp_path, tiny(tmp_path), "--modes", "eager").returncode == 0
    (out / "modes" / "stale-mode").mkdir()
    (out / "tb" / "stale-mode").mkdir()
    assert profile(tmp_path, tiny(tmp_path), "--modes", "eager").returncode == 0
    assert not (out / "modes" / "stale-mode").exists() and not (out / "tb" / "stale-mode").exists()
    assert len(list((out / "tb" / "eager").glob("*.pt.trace.json.gz"))) == 1
    assert not list(out.rglob("*.tmp"))


# --- traces given to `kernelscope analyze` ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "content", "name", "needles"),
    [
        ("empty", b"", "t.json", ["is empty"]),
        ("truncated", None, "t.json", ["not valid JSON", "truncated"]),
        ("not json", b"<html>", "t.json", ["not valid JSON"]),
        ("wrong shape", b'{"events": []}', "t.json", ["not a chrome trace", "export_chrome_trace"]),
        ("corrupt gzip", b"\x1f\x8b\x08\x00\x00\x00garbage", "t.json.gz", ["not a readable gzip file"]),
        ("no events", b"[1, 2, 3]", "t.json", ["holds no trace events", "torch.profiler trace"]),
        ("empty events", b'{"traceEvents": []}', "t.json", ["holds no trace events (an empty event list)"]),
    ],
)
def test_analyze_bad_traces(tmp_path: Path, case, content, name, needles):
    if content is None:
        content = gzip.decompress((DATA / "h200-torch2.11" / "seed-eager.trace.json.gz").read_bytes())[:5000]
    (tmp_path / name).write_bytes(content)
    proc = run_cli("analyze", str(tmp_path / name), "--out", str(tmp_path / "out"))
    assert_one_line_error(proc, 2, *needles)


def test_analyze_missing_trace_and_code(tmp_path: Path):
    assert_one_line_error(run_cli("analyze", str(tmp_path / "x.json"), "--out", str(tmp_path / "o")), 2,
                          "does not exist")
    trace = DATA / "h200-torch2.11" / "seed-default.trace.json.gz"
    assert_one_line_error(run_cli("analyze", str(trace), "--code", str(tmp_path / "c.py"), "--out",
                                  str(tmp_path / "o")), 2, "Inductor code file", "does not exist")


def test_analyze_iterations_that_do_not_divide(tmp_path: Path):
    trace = DATA / "h200-torch2.11" / "seed-eager.trace.json.gz"
    proc = run_cli("analyze", str(trace), "--iterations", "4", "--out", str(tmp_path / "o"))
    assert_one_line_error(proc, 2, "cannot be split into --iterations 4")


def test_analyze_events_with_missing_fields_and_non_utf8_and_hostile_names(tmp_path: Path):
    hostile = "</script><img src=x onerror=alert(1)>|[x](http://evil)"
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100, "pid": 1, "tid": 1},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 10, "dur": 1, "pid": 1, "tid": 1,
         "args": {"correlation": 7}},
        {"ph": "X", "cat": "kernel", "name": hostile, "ts": 20, "dur": 5, "pid": 0, "tid": 7,
         "args": {"correlation": 7}},
        {"ph": "X", "cat": "kernel", "ts": 30},
    ]
    raw = json.dumps({"traceEvents": events}).encode()
    raw = raw.replace(b'"dur": 5', b'"dur": 5, "extra": "\xff"')
    (tmp_path / "t.json").write_bytes(raw)
    proc = run_cli("analyze", str(tmp_path / "t.json"), "--out", str(tmp_path / "o"))
    assert proc.returncode == 0, proc.stderr
    result = json.loads((tmp_path / "o" / "result.json").read_text())
    assert result["modes"][0]["kernels"][0]["name"] == hostile
    assert {"code": "malformed-events-skipped", "args": {"events": 1}} in result["findings"]
    assert "1 malformed trace events were skipped" in [say(note_from(n)) for n in result["modes"][0]["findings"]]
    html = (tmp_path / "o" / "report.html").read_text()
    assert "<img src=x" not in html and "&lt;img src=x" in html
    md = (tmp_path / "o" / "summary.md").read_text()
    assert "](http://evil)" not in md


def test_check_on_a_directory_without_result(tmp_path: Path):
    assert_one_line_error(run_cli("check", str(tmp_path)), 2, "result.json")


def test_compare_on_missing_dirs(tmp_path: Path):
    assert_one_line_error(run_cli("compare", str(tmp_path / "a"), str(tmp_path / "b")), 2)


@pytest.mark.slow
def test_no_environment_variables_or_hostname_in_reports(cpu_run: Path):
    host = os.uname().nodename
    for name in ("result.json", "report.html", "summary.md"):
        text = (cpu_run / name).read_text()
        assert f'"{host}"' not in text and f" {host} " not in text
    for trace in (cpu_run / "tb").rglob("*.pt.trace.json.gz"):
        raw = gzip.decompress(trace.read_bytes())
        assert f'"{host}'.encode() not in raw and b'"hostname"' not in raw
    # TensorBoard's own event-file names carry the hostname (events.out.tfevents.<t>.<host>.<pid>...)
    assert not [p for p in (cpu_run / "tb").rglob("*") if f".{host}." in p.name]


@pytest.mark.slow
def test_killing_kernelscope_leaves_no_worker_behind(tmp_path: Path):
    # SIGKILL cannot be caught: the worker (in its own session) must still die with its parent.
    out = tmp_path / "out"
    model = compile_only_model(tmp_path, "            time.sleep(3600)", extra="import time")
    proc = subprocess.Popen([sys.executable, "-m", "kernelscope", "profile", str(model), "--device", "cpu",
                             "--modes", "default", "--out", str(out)], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    spec = out / "modes" / "default" / "spec.json"
    deadline = time.time() + 120
    while not spec.exists():
        assert time.time() < deadline and proc.poll() is None
        time.sleep(0.5)
    time.sleep(5)  # the worker is up and hanging in its compile
    assert str(spec) in subprocess.run(["ps", "-eww", "-o", "args"], capture_output=True, text=True).stdout
    proc.kill()
    proc.wait()
    deadline = time.time() + 30
    while str(spec) in subprocess.run(["ps", "-eww", "-o", "args"], capture_output=True, text=True).stdout:
        assert time.time() < deadline, "the worker outlived the killed kernelscope process"
        time.sleep(0.5)
