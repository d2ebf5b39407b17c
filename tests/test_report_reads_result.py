"""The reports read what analysis decided from the result and derive nothing: report/ calls no function of
kernelscope.analysis, result.json holds every fact the reports show, and every Note analysis makes has words.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
from pathlib import Path

import pytest

from kernelscope.analysis.facts import with_facts
from kernelscope.analysis.failures import ERROR_HINTS
from kernelscope.report.context import build_context
from kernelscope.report.markdown import render_markdown
from kernelscope.report.words import WORDS, recommendation_text, say
from kernelscope.result import SCHEMA, Note
from kernelscope.result_file import load_result, write_result
from tests.conftest_reports import DATA, seed_h200_211, seed_h200_2141

PACKAGE = Path(__file__).resolve().parent.parent / "kernelscope"
REPORT = sorted((PACKAGE / "report").glob("*.py"))
ANALYSIS = sorted((PACKAGE / "analysis").rglob("*.py"))
RESULTS = sorted(DATA.rglob("result.json"))


def analysis_names(source: str) -> list[tuple[int, str, str]]:
    """(line, module, name) for every name a source imports from kernelscope.analysis, at any depth; a module
    imported whole is named "*" (its functions would be reachable through it)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kernelscope.analysis"):
            for a in node.names:
                out.append((node.lineno, node.module or "", a.name))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, "*") for a in node.names if a.name.startswith("kernelscope.analysis")]
    return out


def derivations(source: str, where: str) -> list[str]:
    """What a report module takes from analysis that is neither a record type nor a constant: a function (or a
    whole module, through which its functions would be called)."""
    out = []
    for line, module, name in analysis_names(source):
        target = f"{module}.{name}" if name != "*" else module
        try:
            importlib.import_module(target)  # a module imported by name: "from kernelscope.analysis import stats"
            out.append(f"{where}:{line} imports the module {target}")
            continue
        except ImportError:
            pass
        obj = getattr(importlib.import_module(module), name)
        if not (inspect.isclass(obj) or not callable(obj)):
            out.append(f"{where}:{line} imports the function {target}: read the fact from the result instead")
    return out


@pytest.mark.parametrize("path", REPORT, ids=lambda p: p.name)
def test_reports_call_no_analysis_function(path: Path):
    # GIVEN a report module THEN what it takes from kernelscope.analysis is record types and constants only
    assert derivations(path.read_text(encoding="utf-8"), f"report/{path.name}") == []


@pytest.mark.parametrize(("source", "count"), [
    ("from kernelscope.analysis.speedup import speedup_vs\n", 1),
    ("def f():\n    from kernelscope.analysis.failures import failure_groups, fallback\n", 2),
    ("from kernelscope.analysis import numerics\n", 1),
    ("import kernelscope.analysis.sweep\n", 1),
    # allowed: record types and constants
    ("from kernelscope.analysis.compare import Comparison, GemmChange\n", 0),
    ("from kernelscope.analysis.speedup import EAGER\nfrom kernelscope.analysis.stats import RERUN_LOG_SD\n", 0),
])
def test_the_check_sees_what_it_looks_for(source: str, count: int):
    assert len(derivations(source, "x.py")) == count


def _note_codes(path: Path) -> set[str]:
    """Every code a source passes to Note(...) as a literal."""
    codes = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Note" and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            codes.add(node.args[0].value)
    return codes


def test_every_note_analysis_makes_has_words():
    codes = set().union(*(_note_codes(p) for p in ANALYSIS)) | {code for _, code in ERROR_HINTS}
    assert len(codes) > 40  # the scan finds them
    assert sorted(codes - set(WORDS)) == []
    # and a code no words know (a newer kernelscope's) reads as itself, never as an error
    assert say(Note("from-the-future", {"n": 3})) == "from-the-future (n 3)"


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: str(p.parent.relative_to(DATA)))
def test_every_recorded_result_holds_its_facts(path: Path):
    # GIVEN a committed result.json (schema /1 or /2) WHEN it is read THEN it is the current schema with every fact
    # derived
    result = load_result(path)
    assert result.schema == SCHEMA and result.tolerance is not None
    for m in (*result.modes, *(m for p in result.points for m in p.modes)):
        assert m.speedup is not None and m.numerics_verdict is not None
        assert bool(m.fallback) == (m.status != "ok")
        assert set(m.gemm_autotune) <= {g.id for g in m.gemms}
        assert {i for grp in m.gemm_groups for i in grp.members} == {g.id for g in m.gemms}
    assert [n for g in result.failure_groups for n in g.modes] == [m.name for m in result.modes if m.status != "ok"]
    assert (result.sweep_axis is not None) == (path.parent.name == "linear_gelu-sweep")
    # AND deriving again changes nothing: the same measurements give the same facts
    assert with_facts(result) == result


def test_result_json_says_what_the_reports_show(tmp_path: Path):
    # GIVEN the torch 2.14.1 seed run (max-autotune ran, NVGEMM alone failed) written as result.json
    result = seed_h200_2141()
    data = json.loads(write_result(tmp_path, result).read_text())
    ctx = build_context(load_result(tmp_path))
    # THEN a CI reader of result.json finds the speedup, the numerics call and the advice the reports print
    for row, mode in zip(ctx.rows, data["modes"]):
        assert mode["speedup"]["call"] == row.speedup.call and mode["speedup"]["value"] == row.speedup.value
        assert mode["numerics_verdict"]["status"] == row.numerics.status
    (group,) = data["failure_groups"]
    assert group["modes"] == ["max-autotune-nvgemm"]
    assert [a["code"] for a in group["advice"]] == ["hint-no-valid-choices", "use-mode"]
    assert group["advice"][1]["args"]["mode"] == "max-autotune"
    assert ctx.failure_groups[0].recommendation.startswith("no GEMM choice of the requested backends compiled")
    assert data["tolerance"] == {"dtype": "float16", "atol": 0.01, "rtol": 0.01, "same_tol": 0.001}


def test_the_seed_runs_speedups_are_in_the_result():
    # GIVEN the seed model on the H200 (torch 2.11): eager 61.9 us, default 156 us, max-autotune 77.5 us
    modes = {m.name: m for m in seed_h200_211().modes}
    assert modes["eager"].speedup.call == "baseline"
    assert modes["default"].speedup.call == modes["max-autotune"].speedup.call == "slower"
    assert modes["default"].speedup.method == "bootstrap"
    assert modes["max-autotune"].speedup.value == pytest.approx(0.7984, abs=1e-4)


def test_a_schema_2_result_keeps_its_sentences_as_text_notes():
    # GIVEN a committed /2 result whose recommendation was written as one sentence
    path = DATA / "h100-torch2.11-quiet-host" / "run-1" / "result.json"
    raw = json.loads(path.read_text())
    assert raw["schema"] == "kernelscope.result/2"
    (rec,) = load_result(path).recommendation
    # THEN it reads as a text note that says the same words, and its candidates' reasons likewise
    assert [n.code for n in rec.reasons] == ["text"]
    assert recommendation_text(rec) == raw["recommendation"][0]["reason"]
    assert [c.why_not for c in rec.candidates] == [
        Note("text", {"text": c["why_not"]}) if c["why_not"] else None for c in raw["recommendation"][0]["candidates"]]
    # AND its summary says it as before
    assert recommendation_text(rec) in render_markdown(load_result(path))


def test_a_machine_without_a_cxx_compiler_is_told_to_install_one_not_to_keep_eager():
    # GIVEN a CPU run whose compiled mode failed because Inductor found no C++ compiler, eager ran
    from dataclasses import replace

    from kernelscope.analysis.failures import MACHINE_HINT, fallback

    eager, compiled = seed_h200_211().modes[:2]
    failed = replace(compiled, status="failed", error_kind="toolchain", latency_ms=None,
                     error="InductorError: InvalidCxxCompiler: No working C++ compiler found in "
                           "torch._inductor.config.cpp.cxx: (None, 'g++')")
    # THEN the advice is the machine's fix alone: the model is not what failed
    advice = fallback([eager, failed], failed)
    assert advice == (Note(MACHINE_HINT),)
    assert "install one" in say(advice[0]) and "CXX" in say(advice[0])
    # AND any other compile failure still says to keep eager
    other = replace(failed, error_kind="compile", error="InductorError: LoweringException: boom")
    assert fallback([eager, other], other) == (Note("keep-eager"),)
