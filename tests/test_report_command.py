"""`kernelscope report DIR` re-renders a run's reports from result.json; GitHub Actions gets the summary and
annotations; `check --expect-fused` keywords in any case; `analyze` of a trace alone reads like a trace report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kernelscope.cli import main
from kernelscope.report.github import error_annotation
from kernelscope.result import to_json
from tests.conftest import DATA, run_cli
from tests.conftest_reports import seed_h200_211

RUN = DATA / "h200-torch2.11-kernelscope-run" / "linear_gelu"


def cli(*args: str) -> int:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    return int(info.value.code or 0)


def test_report_rerenders_html_md_and_terminal_from_result_json(tmp_path: Path, capsys):
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    (run / "report.html").write_text("stale")
    before = (run / "result.json").read_bytes()
    assert cli("report", str(run)) == 0
    out = capsys.readouterr()
    html = (run / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "triton_tem_fused_addmm_gelu_t_0" in html
    assert "| GEMMs fused |" in (run / "summary.md").read_text()
    assert "2.23× slower" in out.out  # the terminal summary, read one way
    assert (run / "result.json").read_bytes() == before  # the source is not rewritten


def test_report_prints_groups_and_verbose_every_gemm(tmp_path: Path):
    # GIVEN a 16-layer Llama's result (3 modes, 336 GEMMs; layer 7's up_proj fused where the others are not)
    from kernelscope.result_file import write_result
    from tests.report_pages import llama_layers

    write_result(tmp_path / "result.json", llama_layers(16, differ=(7, "mlp.up_proj")))
    env = {"COLUMNS": "100"}
    short = run_cli("report", str(tmp_path), env=env)
    verbose = run_cli("report", str(tmp_path), "--verbose", env=env)
    assert short.returncode == verbose.returncode == 0, short.stderr + verbose.stderr
    # THEN the default summary has a line per group and the one layer that differs; --verbose every GEMM
    assert "mm layers.{0-6,8-15}.mlp.up_proj ×15," in short.stdout and "layers.7.mlp.up_proj" in short.stdout
    assert "layers.5.mlp.up_proj" not in short.stdout and "layers.5.mlp.up_proj" in verbose.stdout
    assert "(--verbose: each of the 332 GEMMs" in short.stdout
    assert len(short.stdout.splitlines()) < 160 < len(verbose.stdout.splitlines())
    for out in (short, verbose):  # and no line wider than COLUMNS, stdout and stderr alike
        assert max(len(ln) for ln in (out.stdout + out.stderr).splitlines()) <= 100
    assert (tmp_path / "summary.md").stat().st_size < 15_000
    assert (tmp_path / "report.html").stat().st_size < 1_500_000


@pytest.mark.parametrize("command", ["profile", "report", "analyze"])
def test_every_command_that_prints_the_summary_takes_verbose(command, capsys):
    assert cli(command, "--help") == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--verbose" in out and "list every GEMM under its group of identical layers" in out


@pytest.mark.parametrize(("content", "needle"), [
    ('{"schema": "kernelscope.result/9", "modes": []}', "has schema 'kernelscope.result/9'; this kernelscope reads"),
    ('{"modes": []}', "is not a kernelscope result"),
    ("not json", "cannot read"),
])
def test_report_refuses_what_it_cannot_read(tmp_path: Path, content: str, needle: str):
    (tmp_path / "result.json").write_text(content)
    proc = run_cli("report", str(tmp_path))
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("kernelscope: error: ") and needle in line
    assert not (tmp_path / "report.html").exists()


def test_github_actions_summary_and_annotations(tmp_path: Path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "result.json").write_text(json.dumps(to_json(seed_h200_211())))
    summary = tmp_path / "summary.md"
    summary.write_text("## earlier step\n")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    proc = run_cli("check", str(run), "--expect-fused", "ALL", env=env)
    assert proc.returncode == 1, proc.stderr
    errors = [ln for ln in proc.stdout.splitlines() if ln.startswith("::error ")]
    assert len(errors) == 2 and all("title=kernelscope check --expect-fused::" in e for e in errors)
    assert "default: GEMM" in errors[0]
    text = summary.read_text()
    assert text.startswith("## earlier step\n")  # appended, not replaced
    assert "### kernelscope check failed" in text and "- default: GEMM" in text
    # outside Actions: no annotations, no summary file touched
    clean = {"GITHUB_ACTIONS": "", "GITHUB_STEP_SUMMARY": ""}
    proc = run_cli("check", str(run), "--expect-fused", "None", "--mode", "eager", env=clean)
    assert proc.returncode == 1 and "::error" not in proc.stdout, proc.stdout + proc.stderr
    assert "expected no epilogue fusion" in proc.stdout  # "None" read as the keyword, not as a pattern


def test_annotation_escapes_what_the_workflow_command_syntax_needs():
    line = error_annotation("50% slower\nsecond line", title="a:b,c")
    assert line == "::error title=a%3Ab%2Cc::50%25 slower%0Asecond line"


def test_profile_appends_summary_md_in_actions(tmp_path: Path):
    summary = tmp_path / "step-summary.md"
    model = tmp_path / "m.py"
    model.write_text("import torch\ndef get_model():\n    return torch.nn.Linear(8, 8)\n"
                     "def get_inputs():\n    return [torch.randn(4, 8)]\n")
    proc = run_cli("profile", str(model), "--device", "cpu", "--modes", "eager", "--repeats", "3", "--warmup", "1",
                   "--out", str(tmp_path / "out"), env={"GITHUB_STEP_SUMMARY": str(summary), "COLUMNS": "90"},
                   timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert summary.read_text().strip() == (tmp_path / "out" / "summary.md").read_text().strip()
    # not a TTY: plain timestamped stage lines, and no line wider than COLUMNS
    assert any(" [1/1] eager: timing: " in ln for ln in proc.stderr.splitlines())
    assert max(len(ln) for ln in proc.stdout.splitlines()) <= 90
    md = summary.read_text()
    assert "CUDA" not in md.split("\n| Mode |")[0]  # the CPU summary claims no CUDA version
    assert "RSS growth" in md


def test_analyze_of_a_trace_alone(tmp_path: Path):
    trace = next((DATA / "h200-torch2.11-kernelscope" / "linear_gelu" / "tb" / "default").glob("*.gz"))
    proc = run_cli("analyze", str(trace), "--out", str(tmp_path / "o"), env={"COLUMNS": "120"})
    assert proc.returncode == 0, proc.stderr
    # the command line ends without the interpreter's teardown (os._exit): what it printed was flushed first
    assert "report: " in proc.stderr and "result: " in proc.stderr
    assert "recommendation" not in proc.stdout and "no working mode" not in proc.stdout
    assert proc.stdout.startswith("kernelscope: ")
    head = proc.stdout.split("\n┏")[0]
    assert "cuda" in head and "NVIDIA H200" in head and "CUDA 13.0" in head
    # Triton kernels in the trace: a compiled run, never explained as eager even without --code
    assert "eager: ATen" not in proc.stdout
    md = (tmp_path / "o" / "summary.md").read_text()
    assert "no working mode" not in md and "eager: ATen" not in md
