"""profile's staged run analyses a mode's first-process files (trace, output code, compile log) while its later
processes compile (run/profile.py ``trace_ahead``), so that after the later timings only their latencies are
added: before, the analysis of every mode sat between the later timings and after the last one."""

from __future__ import annotations

import dataclasses
import io
import shutil
from pathlib import Path

from kernelscope.analysis.mode import build_mode_result, trace_fields
from kernelscope.capture.modes import parse_backends, parse_modes
from kernelscope.capture.runner import CaptureOptions
from kernelscope.capture_record import read_capture
from kernelscope.report.progress import Progress
from kernelscope.report.terminal import console_for
from kernelscope.report.words import say
from kernelscope.result import to_json
from kernelscope.run.profile import ModeRuns

from .conftest import DATA
from .zoo_fixtures import extract_run


def _run_dir(tmp_path: Path) -> Path:
    """A copy of a recorded compiled run (hf_llama, 4 layers, default mode; CPU), to move its files away."""
    run = tmp_path / "run"
    shutil.copytree(extract_run(DATA / "cpu-torch2.14.1" / "hf_llama-4-layers.tar.xz"), run)
    return run


def _runs(out: Path) -> ModeRuns:
    return ModeRuns(parse_modes("default", parse_backends(None)), [],
                    CaptureOptions(model="m.py", sets={}, dtype=None, device="cpu"), out, processes=2,
                    warm_compile=False, err=console_for(stderr=True), progress=Progress(io.StringIO(), tty=False),
                    dtype=None)


def test_a_mode_analysed_ahead_is_finished_without_reading_its_files_again(tmp_path: Path):
    # GIVEN a mode's first process recorded, and a second process that timed it too
    out = _run_dir(tmp_path)
    first = read_capture(out / "modes" / "default" / "capture.json")
    assert first is not None and first.latency_ms is not None
    later = dataclasses.replace(first, started_at=(first.started_at or 0) + 60)
    runs = _runs(out)
    runs.job_recs[0] = [first]

    # WHEN its files are analysed ahead, while the later process would compile, and moved away after
    runs.trace_ahead(0)
    expected = build_mode_result(out, first)  # (a fresh analysis, for the comparison below)
    for moved in ("modes/default/code", "modes/default/log.txt", "tb"):
        (out / moved).rename(tmp_path / moved.replace("/", "-"))
    runs.later[0].append([later])
    runs.finish(0)

    # THEN the mode's result has the files' analysis all the same: GEMM verdicts, kernels, iterations
    got = runs.results[0][0]
    assert got.status == "ok" and len(got.gemms) == 29 and got.kernels_per_iter == expected.kernels_per_iter
    assert to_json(got.gemms) == to_json(expected.gemms) and got.iterations == expected.iterations
    # AND the latency over both processes, which only finish() could add
    assert got.latency_ms is not None and got.latency_ms.processes == 2
    assert runs.traced == {}  # used once


def test_an_analysis_ahead_of_other_files_is_not_used(tmp_path: Path):
    # GIVEN an analysis made of one capture's files
    out = _run_dir(tmp_path)
    first = read_capture(out / "modes" / "default" / "capture.json")
    assert first is not None
    ahead = trace_fields(out, first)
    assert ahead.fields["gemms"] and not ahead.failed

    # WHEN a record of other files (another trace) is built with it
    other = dataclasses.replace(first, trace="tb/default/missing.pt.trace.json.gz")
    got = build_mode_result(out, other, traced=ahead)

    # THEN that record's own files are read (here: missing, and the report says so), not the other analysis
    assert not got.gemms and any("trace analysis failed" in say(n) for n in got.findings), got.findings


_PREPARED = """
import sys, time
from kernelscope.report import prepare
from kernelscope.report.html import environment
prepare(tensorboard={tb})
print(sorted(m for m in ("tensorboard", "kernelscope.report.html", "kernelscope.report.markdown",
                         "kernelscope.report.terminal") if m in sys.modules))
print("report.html.j2" in {{k[1] for k in environment().cache.keys()}} if environment().cache is not None else None)
print("torch" in sys.modules)
"""


def test_the_reports_code_is_ready_before_the_runs_last_seconds():
    # GIVEN a fresh process (as profile's parent): WHEN it prepares the reports while later processes compile
    import subprocess
    import sys

    for tb, want in ((True, ["kernelscope.report.html", "kernelscope.report.markdown", "kernelscope.report.terminal",
                             "tensorboard"]),
                     (False, ["kernelscope.report.html", "kernelscope.report.markdown",
                              "kernelscope.report.terminal"])):
        proc = subprocess.run([sys.executable, "-c", _PREPARED.format(tb=tb)], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        mods, compiled, torch_loaded = proc.stdout.strip().splitlines()[-3:]
        # THEN what write_reports and the summary import is imported, report.html's template compiled, and
        # TensorBoard's writer only when the run writes scalars; still no torch in the parent
        assert mods == repr(want) and compiled == "True" and torch_loaded == "False"


def test_a_staged_run_prepares_the_reports_once_and_survives_a_failure(tmp_path: Path):
    runs = _runs(tmp_path)
    calls: list[int] = []

    def prepare() -> None:
        calls.append(1)
        raise OSError("read-only bytecode cache")

    runs.prepare_reports = prepare
    runs._prepare_reports()
    runs._prepare_reports()
    assert calls == [1] and runs.prepare_reports is None
