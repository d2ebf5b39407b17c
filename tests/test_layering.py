"""The layers of STYLE.md point only down, no modules import each other in a circle, nothing after capture in the
data flow imports capture, private names stay inside their package, and reports derive no statistics or GEMM
pairings of their own.

Read from the source with ``ast`` (nothing is imported): every import anywhere in a module counts, at its top,
inside a function or under ``if TYPE_CHECKING:``. An import inside a function runs later but is a dependency all
the same, and one under TYPE_CHECKING names the other module's types: hiding an import from the interpreter is
how a cycle or an upward import stays unseen, not a way out of either.
"""

from __future__ import annotations

import ast
import graphlib
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "kernelscope"

# Lowest first. A module may import its own layer and the ones below it, never one above.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("kernelscope", "kernelscope.files", "kernelscope.fmt", "kernelscope.errors",
              "kernelscope.vocab", "kernelscope.provenance", "kernelscope.tolerance", "kernelscope.result",
              "kernelscope.outdir", "kernelscope.capture_record", "kernelscope.result_file", "kernelscope.sweep_plan",
              "kernelscope.mode_names")),
    ("modelfile", ("kernelscope.modelfile",)),
    ("capture", ("kernelscope.capture",)),
    ("trace model", ("kernelscope.trace", "kernelscope.inductor_code")),
    ("analysis", ("kernelscope.analysis",)),
    ("report", ("kernelscope.report",)),
    # a run: capture's workers in order, each mode analysed as it finishes (what profile and upgrade-check start)
    ("run", ("kernelscope.run",)),
    ("cli", ("kernelscope.commands", "kernelscope.cli", "kernelscope.__main__")),
)


def layer_of(module: str) -> int | None:
    """The index in LAYERS of a module: the longest prefix that names it (``kernelscope`` alone is the package)."""
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            matches = module == p if p == "kernelscope" else module == p or module.startswith(p + ".")
            if matches and (best is None or len(p) > best[0]):
                best = (len(p), i)
    return None if best is None else best[1]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(path: Path) -> str:
    """The package a file's own private names belong to: its folder (a package's __init__ is the package)."""
    return ".".join(path.relative_to(PACKAGE.parent).parts[:-1])


def is_module(name: str) -> bool:
    rel = Path(*name.split("."))
    return (PACKAGE.parent / rel).with_suffix(".py").is_file() or (PACKAGE.parent / rel / "__init__.py").is_file()


def parent_package(module: str) -> str:
    """The package whose private names a module holds: itself when it is a package, else its folder."""
    rel = Path(*module.split("."))
    return module if (PACKAGE.parent / rel / "__init__.py").is_file() else module.rpartition(".")[0]


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


SOURCES = sorted(PACKAGE.rglob("*.py"))


def imports(source: str, package: str) -> Iterator[tuple[int, str, str | None]]:
    """(line, imported module, imported name or None) for every kernelscope import in a file, at any depth.

    ``from kernelscope import fmt`` yields the module ``kernelscope.fmt``; ``from kernelscope.trace import Trace``
    yields ``kernelscope.trace`` with the name ``Trace``. Relative imports resolve against ``package``."""
    here = package.split(".")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "kernelscope":
                    yield node.lineno, a.name, None
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != "kernelscope":
                continue
            for a in node.names:
                if is_module(f"{target}.{a.name}"):
                    yield node.lineno, f"{target}.{a.name}", None
                else:
                    yield node.lineno, target, a.name


def module_attributes(source: str) -> Iterator[tuple[int, str, str]]:
    """(line, module, attribute) for ``alias.attr`` where ``alias`` names a kernelscope module imported here."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "kernelscope":
                    aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else "kernelscope"
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "kernelscope":
            for a in node.names:
                if is_module(f"{node.module}.{a.name}"):
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        # kernelscope.trace._x: walk the dotted chain down to the name it starts from
        chain, value = [], node.value
        while isinstance(value, ast.Attribute):
            chain.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id in aliases:
            module = ".".join([aliases[value.id], *reversed(chain)])
            if is_module(module):
                yield node.lineno, module, node.attr


# result.json's reader brings an older file up to date by deriving the facts a newer one holds (the migration calls
# analysis/facts.py, inside the function): the one import from a lower layer into a higher one.
UPWARD_ALLOWED = frozenset({("kernelscope.result_file", "kernelscope.analysis.facts")})


def upward_imports(source: str, module: str, package: str) -> list[str]:
    mine = layer_of(module)
    assert mine is not None, f"{module} has no layer"
    out = []
    for line, target, _ in imports(source, package):
        theirs = layer_of(target)
        if theirs is None:
            out.append(f"{module}:{line} imports {target}, which has no layer")
        elif theirs > mine and (module, target) not in UPWARD_ALLOWED:
            out.append(f"{module}:{line} ({LAYERS[mine][0]}) imports {target} ({LAYERS[theirs][0]})")
    return out


def private_leaks(source: str, module: str, package: str) -> list[str]:
    out = []
    for line, target, name in imports(source, package):
        if name is not None and private(name) and parent_package(target) != package:
            out.append(f"{module}:{line} imports {name} from {target}")
        elif name is None and private(target.rpartition(".")[2]) and target.rpartition(".")[0] != package:
            out.append(f"{module}:{line} imports the private module {target}")
    for line, target, attr in module_attributes(source):
        if private(attr) and parent_package(target) != package:
            out.append(f"{module}:{line} reads {target}.{attr}")
    return out


# Data flows capture -> files -> trace/code model -> analysis -> report, but in LAYERS capture sits low (it imports
# only the base and modelfile; the commands start it), so "imports point down" alone let analysis/sweep.py import
# capture/sweep.py unseen. Everything after capture takes paths (STYLE.md: `analyze` and re-rendering run without
# torch, on a machine without a GPU): these layers import nothing of capture; what they share with it (a record, the
# sweep plan) lives in the base layer.
AFTER_CAPTURE = ("trace model", "analysis", "report")
CAPTURE = next(i for i, (name, _) in enumerate(LAYERS) if name == "capture")


def capture_imports(source: str, module: str, package: str) -> list[str]:
    mine = layer_of(module)
    if mine is None or LAYERS[mine][0] not in AFTER_CAPTURE:
        return []
    return [f"{module}:{line} ({LAYERS[mine][0]}) imports {target} (capture): move what both need to the base layer"
            for line, target, _ in imports(source, package) if layer_of(target) == CAPTURE]


# Reports print what analysis decided (STYLE.md: "they derive no facts of their own"): every latency ratio, interval
# and noise call (analysis/stats.py) and every pairing of GEMMs across two runs (analysis/pairing.py) is made in
# analysis/ and read off its records (Comparison, UpgradeComparison, Speedup). A report may name their record
# types (``Ratio``, ``GemmPair``), never call their functions.
DERIVATIONS = ("kernelscope.analysis.stats", "kernelscope.analysis.pairing")
REPORT = next(i for i, (name, _) in enumerate(LAYERS) if name == "report")


def derivations_in_reports(source: str, module: str, package: str) -> list[str]:
    if layer_of(module) != REPORT:
        return []
    out = []
    for line, target, name in imports(source, package):
        if target not in DERIVATIONS:
            continue
        if name is None or not name[:1].isupper():
            out.append(f"{module}:{line} imports {name or 'the module'} from {target}: ask analysis/ for the fact")
    return out


# A cycle between modules, even one an import inside a function keeps from failing at import time, means neither
# can be read, tested or moved without the other: the piece both need goes to a module they both import.
def import_graph(sources: Mapping[str, tuple[str, str]]) -> dict[str, dict[str, int]]:
    """module -> {a module of ``sources`` it imports: the line of the first such import}; ``sources`` maps each
    module to (its source, its package)."""
    graph: dict[str, dict[str, int]] = {}
    for module, (source, package) in sources.items():
        edges = graph.setdefault(module, {})
        for line, target, _ in imports(source, package):
            if target in sources and target != module:
                edges.setdefault(target, line)
    return graph


def import_cycle(graph: Mapping[str, Mapping[str, int]]) -> list[str]:
    """One cycle of the graph as ``a:12 imports b`` lines (empty when there is none)."""
    try:
        graphlib.TopologicalSorter({m: set(edges) for m, edges in graph.items()}).prepare()
    except graphlib.CycleError as exc:
        cycle = exc.args[1]  # [a, ..., a], each node importing the one before it (graphlib's predecessors)
        return [f"{b}:{graph[b][a]} imports {a}" for a, b in zip(cycle, cycle[1:])]
    return []


def _id(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


def test_every_module_has_a_layer():
    # GIVEN every module of the package THEN each has a layer: a new module is placed when it is added
    assert [module_name(p) for p in SOURCES if layer_of(module_name(p)) is None] == []


@pytest.mark.parametrize("path", SOURCES, ids=_id)
def test_imports_point_down(path: Path):
    # capture -> files -> trace/code model -> analysis -> report -> cli: nothing imports a layer above its own
    assert upward_imports(path.read_text(encoding="utf-8"), module_name(path), package_of(path)) == []


# A subcommand's module holds its options, calls into the layers below and turns their outcome into an exit: the
# run itself (which worker when, what is analysed after it) lives in run/, where a test can drive it without click.
COMMAND_LINES = 300


@pytest.mark.parametrize("path", sorted((PACKAGE / "commands").glob("*.py")), ids=_id)
def test_commands_are_thin(path: Path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= COMMAND_LINES, f"{_id(path)} has {lines} lines: move what is not the command's own to run/"


def test_no_import_cycle():
    sources = {module_name(p): (p.read_text(encoding="utf-8"), package_of(p)) for p in SOURCES}
    assert import_cycle(import_graph(sources)) == []


@pytest.mark.parametrize(("sources", "cycle"), [
    # an import inside a function closes the cycle
    ({"kernelscope.capture.rounds": "def stop():\n    from kernelscope.capture.runner import kill\n",
      "kernelscope.capture.runner": "from kernelscope.capture.rounds import Hold\n"}, 2),
    # so does one under TYPE_CHECKING, through a third module
    ({"kernelscope.report.context": "from kernelscope.report.ranks import ranks_views\n",
      "kernelscope.report.ranks": "from kernelscope.report.html import relative_href\n",
      "kernelscope.report.html": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                 "    from kernelscope.report.context import ReportContext\n"}, 3),
    # no cycle: both import a third module
    ({"kernelscope.capture.rounds": "from kernelscope.capture.signals import stop_worker\n",
      "kernelscope.capture.runner": "from kernelscope.capture.rounds import Hold\n"
                                    "from kernelscope.capture import signals\n",
      "kernelscope.capture.signals": "import os\n"}, 0),
])
def test_the_cycle_check_sees_what_it_looks_for(sources: dict[str, str], cycle: int):
    graph = import_graph({m: (s, m.rpartition(".")[0]) for m, s in sources.items()})
    assert len(import_cycle(graph)) == cycle


@pytest.mark.parametrize("path", SOURCES, ids=_id)
def test_nothing_after_capture_imports_capture(path: Path):
    assert capture_imports(path.read_text(encoding="utf-8"), module_name(path), package_of(path)) == []


@pytest.mark.parametrize("path", SOURCES, ids=_id)
def test_private_names_stay_in_their_package(path: Path):
    # A leading underscore means "this package's own": modules of one folder may share it; nothing outside the
    # folder imports it or reaches it through the module.
    assert private_leaks(path.read_text(encoding="utf-8"), module_name(path), package_of(path)) == []


@pytest.mark.parametrize("path", SOURCES, ids=_id)
def test_reports_derive_no_statistics_or_pairings(path: Path):
    assert derivations_in_reports(path.read_text(encoding="utf-8"), module_name(path), package_of(path)) == []


# (check, source, module, how many lines it reports): each rule sees what breaks it and passes what keeps it
@pytest.mark.parametrize(("check", "source", "module", "count"), [
    (derivations_in_reports, "from kernelscope.analysis.stats import latency_ratio\n", "kernelscope.report.compare", 1),
    (derivations_in_reports, "def f():\n    from kernelscope.analysis.pairing import match_gemms\n",
     "kernelscope.report.upgrade", 1),
    (derivations_in_reports, "from kernelscope.analysis import stats\n", "kernelscope.report.check", 1),
    # allowed: a record type in a report; the functions anywhere below the report layer
    (derivations_in_reports, "from kernelscope.analysis.pairing import GemmPair\n", "kernelscope.report.upgrade", 0),
    (derivations_in_reports, "from kernelscope.analysis.stats import latency_ratio\n", "kernelscope.analysis.compare",
     0),
    (derivations_in_reports, "from kernelscope.analysis.compare import compare_results\n",
     "kernelscope.commands.compare", 0),
    (capture_imports, "from kernelscope.capture.sweep import PointPlan\n", "kernelscope.analysis.sweep", 1),
    (capture_imports, "def f():\n    from kernelscope.capture import runner\n", "kernelscope.report.progress", 1),
    (capture_imports, "import kernelscope.capture.modes\n", "kernelscope.trace", 1),
    (capture_imports, "from ..capture.modes import ModeDef\n", "kernelscope.analysis.gemm", 1),
    # allowed: the base layer's records and plan; capture itself; the commands that start a capture
    (capture_imports, "from kernelscope.sweep_plan import PointPlan\n", "kernelscope.analysis.sweep", 0),
    (capture_imports, "from kernelscope.capture_record import CaptureRecord\n", "kernelscope.analysis.mode", 0),
    (capture_imports, "from kernelscope.capture.timing import DRIFT_LIMIT\n", "kernelscope.capture.runner", 0),
    (capture_imports, "from kernelscope.capture.runner import CaptureOptions\n", "kernelscope.commands.profile", 0),
])
def test_the_derivation_and_capture_checks_see_what_they_look_for(check, source: str, module: str, count: int):
    assert len(check(source, module, module.rpartition(".")[0])) == count


@pytest.mark.parametrize(("source", "module", "package", "upward", "leaks"), [
    ("from kernelscope.report import fmt\n", "kernelscope.analysis.recommend", "kernelscope.analysis", 1, 0),
    ("from kernelscope.report.io import load_result\n", "kernelscope.capture.worker", "kernelscope.capture", 1, 0),
    ("def f():\n    from kernelscope.analysis import numerics\n", "kernelscope.capture.worker",
     "kernelscope.capture", 1, 0),
    ("from ..report import context\n", "kernelscope.analysis.mode", "kernelscope.analysis", 1, 0),
    ("from kernelscope.trace import Trace, _gc\n", "kernelscope.analysis.kernels", "kernelscope.analysis", 0, 1),
    ("from kernelscope import modelfile\nmodelfile._check(1)\n", "kernelscope.capture.worker",
     "kernelscope.capture", 0, 1),
    ("import kernelscope.trace\nkernelscope.trace._x\n", "kernelscope.analysis.kernels", "kernelscope.analysis",
     0, 1),
    ("import kernelscope.trace as tr\ntr._x\n", "kernelscope.analysis.kernels", "kernelscope.analysis", 0, 1),
    ("from kernelscope.analysis.gemm import _x\n", "kernelscope.analysis.autotune", "kernelscope.analysis", 0, 1),
    # allowed: siblings share a package's private names; a report reads analysis; the package's __version__
    ("from kernelscope.analysis.gemm.align import _x\n", "kernelscope.analysis.gemm.core",
     "kernelscope.analysis.gemm", 0, 0),
    ("from kernelscope.analysis.gemm.log import _x\n", "kernelscope.analysis.gemm", "kernelscope.analysis.gemm", 0, 0),
    ("from kernelscope.analysis.speedup import speedup_vs\n", "kernelscope.report.context", "kernelscope.report", 0,
     0),
    ("from kernelscope import __version__, fmt\n", "kernelscope.outdir", "kernelscope", 0, 0),
])
def test_the_checks_see_what_they_look_for(source: str, module: str, package: str, upward: int, leaks: int):
    # GIVEN a line that breaks (or keeps) a rule THEN the check counts it, so an empty list above is not blindness
    assert len(upward_imports(source, module, package)) == upward
    assert len(private_leaks(source, module, package)) == leaks
