"""The GEMM analysis stays readable: no function (method and nested function included) over MAX_LINES lines under
kernelscope/analysis/gemm/, nor in the code readers it builds on. A longer one is split into named phases."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "kernelscope"
MAX_LINES = 120
CHECKED = sorted((ROOT / "analysis" / "gemm").rglob("*.py")) + [ROOT / "inductor_code.py", ROOT / "provenance.py"]


def function_lengths(source: str) -> Iterator[tuple[str, int, int]]:
    """(qualified name, first line, length in lines) of every function in ``source``, methods and nested functions
    included (a function's length counts its nested functions' lines too)."""

    def visit(node: ast.AST, prefix: str) -> Iterator[tuple[str, int, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                yield name, child.lineno, (child.end_lineno or child.lineno) - child.lineno + 1
                yield from visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from visit(child, prefix + child.name + ".")
            else:
                yield from visit(child, prefix)

    yield from visit(ast.parse(source), "")


def test_the_measure_sees_methods_and_nested_functions() -> None:
    src = "class A:\n    def m(self):\n        def inner():\n" + "            x = 1\n" * 130 + "        return 1\n"
    lengths = {name: n for name, _, n in function_lengths(src)}
    assert lengths == {"A.m": 133, "A.m.inner": 131}


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_function_over_the_limit(path: Path) -> None:
    long = [f"{name} (line {line}): {n} lines" for name, line, n in function_lengths(path.read_text(encoding="utf-8"))
            if n > MAX_LINES]
    assert not long, f"{path.relative_to(ROOT.parent)}: split into named phases (at most {MAX_LINES} lines): " + \
        "; ".join(long)
