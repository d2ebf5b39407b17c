"""One vocabulary: op names, bookkeeping ranges, kernel-name patterns and backend facts live in kernelscope/vocab.py.

GIVEN every module of the package but vocab.py, WHEN its source is scanned, THEN it defines no set/frozenset/tuple/
list literal of op names that vocab's tables hold, and spells no kernel name that vocab's patterns own.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kernelscope import vocab

PKG = Path(vocab.__file__).parent

# Every op name vocab's tables hold (ATen ops, CPU trace op names, kernel-body ops).
VOCAB_NAMES = frozenset().union(*(
    {n.removeprefix("aten::") for n in v} | set(v)
    for v in vars(vocab).values()
    if isinstance(v, (frozenset, tuple)) and v and all(isinstance(x, str) for x in v)
)) | frozenset(vocab.CPP_BODY_OPS)
# Table names that are not op names but share a word with one (backend requests like "CPP" are upper case, so
# they do not collide; these do).
NOT_OPS = frozenset({"default", "out", "self", "input", "index", "size", "stride"})

# Fragments of kernel / range names that only vocab.py may spell (in code: docstrings and comments may name them).
KERNEL_NAME_FRAGMENTS = ("splitKreduce", "nvjet_", "## Call CompiledFxGraph", "TorchDynamo Cache Lookup",
                         "cute_dsl_gemm", "kernel_cutlass_", "cpp_CppMicroGemm")


def _modules() -> list[Path]:
    return sorted(p for p in PKG.rglob("*.py") if p.name != "vocab.py")


def _docstrings(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _literal_strings(node: ast.AST) -> list[str] | None:
    """The strings of a set/tuple/list literal, or of frozenset({...}) / set((...)); None for anything else."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("frozenset", "set") \
            and len(node.args) == 1:
        node = node.args[0]
    if not isinstance(node, (ast.Set, ast.Tuple, ast.List)):
        return None
    return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]


def _tables(tree: ast.Module) -> list[ast.expr]:
    """The values of module- and class-level assignments: where a module defines a named table."""
    out: list[ast.expr] = []
    for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef))]:
        for stmt in scope.body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                    continue  # identifiers, not names
                out.append(stmt.value)
    return out


def op_tables(path: Path) -> list[tuple[int, list[str]]]:
    """(line, overlapping names) of each named table in ``path`` built from a literal holding two or more of
    vocab's names (op names, CPU op names, kernel-body ops, backend labels)."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for value in _tables(tree):
        strings = [s for node in ast.walk(value) for s in (_literal_strings(node) or ())]
        hits = sorted({s.removeprefix("aten::") for s in strings} & VOCAB_NAMES - NOT_OPS)
        if len(hits) >= 2:
            found.append((value.lineno, hits))
    return found


def kernel_name_spellings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    docs = _docstrings(tree)
    return [(node.lineno, frag) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
            for frag in KERNEL_NAME_FRAGMENTS if frag in node.value]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PKG)))
def test_no_op_table_outside_vocab(path: Path) -> None:
    assert op_tables(path) == [], f"{path}: op names belong in kernelscope/vocab.py"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PKG)))
def test_no_kernel_name_outside_vocab(path: Path) -> None:
    assert kernel_name_spellings(path) == [], f"{path}: kernel-name patterns belong in kernelscope/vocab.py"


def test_the_scan_finds_a_table(tmp_path: Path) -> None:
    # GIVEN a module with its own bias list and a split-K check THEN both scans report it (the scans are live).
    p = tmp_path / "m.py"
    p.write_text('BIAS = frozenset({"addmm", "baddbmm"})\n\ndef f(k):\n    return "splitKreduce" in k\n')
    assert op_tables(p) == [(1, ["addmm", "baddbmm"])]
    assert kernel_name_spellings(p) == [(4, "splitKreduce")]


def test_choice_backend_one_answer() -> None:
    # cute_dsl_gemm was ATen in the why-not module and NVGEMM in autotune's: one function answers now.
    from kernelscope.analysis import autotune
    from kernelscope.analysis.gemm import whynot

    assert autotune.choice_backend is whynot._choice_backend is vocab.choice_backend
    assert vocab.choice_backend("cute_dsl_gemm_0") == "NVGEMM"
    assert vocab.choice_backend("nv_universal_gemm_cutlass_3") == "NVGEMM"
    assert vocab.choice_backend("cutlass_3x_gemm_0") == "CUTLASS"
    assert vocab.choice_backend("triton_mm_4") == "Triton"
    assert vocab.choice_backend("bias_addmm") == "ATen"


def test_version_bound_patterns_say_where_seen() -> None:
    # Names that a torch / CUTLASS upgrade renames carry the version they were seen on.
    by_pattern = {r.pattern.pattern: r for r in vocab.GPU_RULES + vocab.CPU_RULES}
    for p in ("^nvjet_", "^kernel_cutlass_", "^nv_universal_gemm", vocab.SPLIT_K_REDUCE):
        assert "torch 2." in by_pattern[p].seen
    assert all(f.seen for f in vocab.FACTS.values())


def test_split_k() -> None:
    assert vocab.is_split_k_reduce("void cublasLt::splitKreduce_kernel<32, 16, int, float>(...)")
    assert not vocab.is_split_k_reduce("nvjet_sm90_tst_128x256_64x4_1x2_h_bz_coopA_TNT")
