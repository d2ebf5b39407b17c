"""The compile log: max-autotune's AUTOTUNE tables (tied to a GEMM by the exact selection key) and
TORCH_LOGS=fusion's decisions, from a worker's stderr.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kernelscope import vocab
from kernelscope.result import Evidence, EvidenceRule, FusionBenchmark


@dataclass(frozen=True, slots=True)
class AutotuneTable:
    op: str  # "addmm"
    sizes: str  # "16x4096, 4096x4096, 4096"
    choices: tuple[tuple[str, float], ...]  # (choice name, ms), fastest first as printed
    line: int


@dataclass(frozen=True, slots=True)
class LogFacts:
    autotune: tuple[AutotuneTable, ...] = ()
    cannot_fuse: tuple[tuple[str, str, str, int], ...] = ()  # (node1, node2, reason, line)
    # Inductor's epilogue-fusion benchmark (max-autotune): (bufs1, bufs2, "1.2x slowdown" | "2.1x speedup", line);
    # a slowdown kept the two apart, a speedup fused them
    benchmark: tuple[
        tuple[tuple[str, ...], tuple[str, ...], str, int], ...
    ] = ()
    nvgemm_failed_choices: tuple[str, ...] = ()
    nvgemm_error: str | None = None
    nvgemm_error_line: int | None = None
    no_valid_choices: tuple[str, ...] = ()
    graphs: int = 0  # distinct Dynamo frames ("[0/0]") in the log
    present: bool = False  # a log was given at all
    # Indexes built once (every GEMM looks up its own lines: a scan of the whole log's decisions per GEMM grew with
    # the square of the model's layers): scheduler node number N (opN / bufN) -> positions in cannot_fuse where
    # the first node names it, and in benchmark where the buffer that decides it names it (a speedup's second
    # buffers, a slowdown's first ones).
    _cannot_by_first: dict[str, tuple[int, ...]] = field(init=False, repr=False, compare=False)
    _cannot_second: tuple[frozenset[str], ...] = field(init=False, repr=False, compare=False)
    _bench_by_deciding: dict[str, tuple[int, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        first: dict[str, list[int]] = {}
        second = []
        for i, (n1, n2, _, _) in enumerate(self.cannot_fuse):
            for n in set(_OP_NUMBER.findall(n1)):
                first.setdefault(n, []).append(i)
            second.append(frozenset(_OP_NUMBER.findall(n2)))
        bench: dict[str, list[int]] = {}
        for i, (b1, b2, text, _) in enumerate(self.benchmark):
            deciding = b2 if text.endswith("speedup") else b1 if text.endswith("slowdown") else ()
            for n in {x[3:] for x in deciding}:
                bench.setdefault(n, []).append(i)
        object.__setattr__(self, "_cannot_by_first", {n: tuple(v) for n, v in first.items()})
        object.__setattr__(self, "_cannot_second", tuple(second))
        object.__setattr__(self, "_bench_by_deciding", {n: tuple(v) for n, v in bench.items()})

    def cannot_fuse_about(self, firsts: set[str], seconds: set[str]) -> list[tuple[str, str, str, int]]:
        """The "cannot fuse" decisions (in log order) whose first node is one of the scheduler nodes ``firsts``
        (their numbers) and whose second node is one of ``seconds``."""
        at = sorted({i for n in firsts for i in self._cannot_by_first.get(n, ())})
        return [self.cannot_fuse[i] for i in at if self._cannot_second[i] & seconds]

    def benchmarks_deciding(self, bufs: set[str]) -> list[tuple[tuple[str, ...], tuple[str, ...], str, int]]:
        """The epilogue-fusion benchmarks (in log order) whose deciding buffers (a speedup's second, a slowdown's
        first) include one of ``bufs`` (their numbers)."""
        at = sorted({i for n in bufs for i in self._bench_by_deciding.get(n, ())})
        return [self.benchmark[i] for i in at]


_OP_NUMBER = re.compile(r"op(\d+)")


_LOG_PREFIX = re.compile(r"^[VIWEDC]\d{4} [\d:.]+ +\d+ \S+:\d+\] (?:\[[^\]]*\] )*")


_FRAME = re.compile(r"^[VIWEDC]\d{4} [\d:.]+ +\d+ \S+:\d+\] \[(\d+/\d+)\]")


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def log_line(raw: str) -> str:
    """A compile-log line as Inductor wrote it: without the glog prefix ("I0101 12:00:00.1 123 file.py:9] [0/0] ")
    and the ANSI colours, trailing space stripped."""
    return _LOG_PREFIX.sub("", _ANSI.sub("", raw)).rstrip()


_AUTOTUNE_HEAD = re.compile(r"^AUTOTUNE (\w+)\((.*)\)\s*$")


_AUTOTUNE_ROW = re.compile(r"^\s+(\S+) (inf|[\d.]+(?:e[-+]?\d+)?) ms\b")


_CANNOT_FUSE = re.compile(r"cannot fuse (\S+) with (\S+): (.*)$")


_BENCH_FUSE = re.compile(r"(?:can|cannot) fuse \(benchmark\): fusing (.*?) with (.*?) cause "
                         r"((?:inf|[\d.]+)x (?:slowdown|speedup))")


_NVGEMM_CHOICE = re.compile(r"for benchmark choice NVUniversalGemmCaller\(([^)]*)\)")


_DSL_ERROR = re.compile(r"error:\s*(.+)$")


_BUF = re.compile(r"buf\d+")


def parse_log(text: str | None) -> LogFacts:
    """Read the facts the why-not needs from a compile log (TORCH_LOGS=fusion plus autotune output)."""
    if not text:
        return LogFacts()
    tables: list[AutotuneTable] = []
    cannot: list[tuple[str, str, str, int]] = []
    bench: list[tuple[tuple[str, ...], tuple[str, ...], str, int]] = []
    nv_choices: list[str] = []
    nv_error: str | None = None
    nv_error_line: int | None = None
    no_valid: list[str] = []
    frames: set[str] = set()
    current: tuple[str, str, int] | None = None
    rows: list[tuple[str, float]] = []
    for i, raw in enumerate(text.splitlines(), start=1):
        fm = _FRAME.match(raw)
        if fm:
            frames.add(fm.group(1))
        line = log_line(raw)
        head = _AUTOTUNE_HEAD.match(line)
        if head:
            if current is not None and rows:
                tables.append(AutotuneTable(current[0], current[1], tuple(rows), current[2]))
            current, rows = (head.group(1), head.group(2), i), []
            continue
        if current is not None:
            row = _AUTOTUNE_ROW.match(line)
            if row:
                rows.append((row.group(1), float(row.group(2))))
                continue
            if line.startswith(("strides:", "dtypes:")):
                continue
            if rows:
                tables.append(AutotuneTable(current[0], current[1], tuple(rows), current[2]))
            current, rows = None, []
        bm = _BENCH_FUSE.search(line)
        if bm:
            bench.append((tuple(_BUF.findall(bm.group(1))), tuple(_BUF.findall(bm.group(2))), bm.group(3), i))
            continue
        cm = _CANNOT_FUSE.search(line)
        if cm:
            cannot.append((cm.group(1), cm.group(2), cm.group(3).strip(), i))
            continue
        nm = _NVGEMM_CHOICE.search(line)
        if nm:
            nv_choices.append(nm.group(1))
            continue
        em = _DSL_ERROR.search(line)
        if em and nv_error is None and ("arch" in em.group(1) or "sm_" in em.group(1)):
            nv_error, nv_error_line = em.group(1).strip(), i
            continue
        if (
            "NoValidChoicesError" in line
            or "No choices exist for backend" in line
            or "All choices failed" in line
        ):
            no_valid.append(line.strip()[:300])
    if current is not None and rows:
        tables.append(AutotuneTable(current[0], current[1], tuple(rows), current[2]))
    return LogFacts(
        autotune=tuple(tables),
        cannot_fuse=tuple(cannot),
        benchmark=tuple(bench),
        nvgemm_failed_choices=tuple(dict.fromkeys(nv_choices)),
        nvgemm_error=nv_error,
        nvgemm_error_line=nv_error_line,
        no_valid_choices=tuple(dict.fromkeys(no_valid)),
        graphs=len(frames),
        present=True,
    )


# A fusion-benchmark factor below this (fused 1.25x faster, or 1.25x slower) is "marginal": the decision may go
# the other way in another compile. Inductor times each side once, on kernels of a few microseconds, in the
# compiling process: four identical runs of samples/linear_gelu.py's max-autotune on one H200 logged 1.90x, 2.14x
# and 1.33x for the same fusion and, in the fourth, no benchmark and no fusion; one GEMM on torch 2.14.1 read
# 1.070x faster in one mode and 1.063x slower in another.
FUSION_MARGINAL = 0.25


def fusion_benchmark(entry: tuple[tuple[str, ...], tuple[str, ...], str, int]) -> FusionBenchmark:
    """One ``LogFacts.benchmark`` entry as the record a GEMM keeps."""
    b1, b2, text, line = entry
    value = text.split("x", 1)[0]
    factor = None if value == "inf" else float(value)
    return FusionBenchmark(fused=text.endswith("speedup"), factor=factor, text=text, buffers=(*b1, *b2),
                           log_line=line, marginal=factor is not None and factor < 1 + FUSION_MARGINAL)


def fusion_benchmark_facts(fb: FusionBenchmark) -> dict[str, Any]:
    """What a GEMM's evidence and why-not say of one epilogue-fusion benchmark: the benchmark's fields and the
    spread under which it counts as marginal."""
    return {"buffers": fb.buffers, "fused": fb.fused, "factor": fb.factor, "text": fb.text, "log_line": fb.log_line,
            "marginal": fb.marginal, "spread": 1 + FUSION_MARGINAL}


def fusion_benchmark_evidence(fb: FusionBenchmark) -> Evidence:
    return Evidence.of(EvidenceRule.FUSION_BENCHMARK, f"log:{fb.log_line}", **fusion_benchmark_facts(fb))


def table_shapes(sizes: str) -> list[tuple[int, ...]]:
    """'16x4096, 4096x4096, 4096' -> [(16, 4096), (4096, 4096), (4096,)]; symbolic sizes give no shape."""
    out = []
    for part in sizes.split(","):
        dims = part.strip().split("x")
        if dims and all(d.strip().isdigit() for d in dims):
            out.append(tuple(int(d) for d in dims))
    return out


def table_matches(op: str, sizes: str, gemm_op: str, m: int | None, n: int | None, k: int | None,
                  batch: int | None = None) -> bool:
    """Whether an AUTOTUNE table is this GEMM's, by the exact selection key: the lowering (mm, addmm, bmm,
    convolution; packed_linear on the CPU) and its operands in order: A [M, K] (with the batch for bmm) first,
    then B [K, N] (or [N, K] for a weight the template reads untransposed); addmm's bias comes before them. No
    substring matching: '2x128' is not '32x128'."""
    if m is None or n is None or k is None:
        return False
    t_op = {"bias_addmm": "addmm", "packed_linear": "linear"}.get(op, op)
    g_op = {"bias_addmm": "addmm", "_mkl_linear": "linear", "_linear_pointwise": "linear"}.get(gemm_op, gemm_op)
    if vocab.op_class(t_op) not in ("gemm", "conv") and t_op != "linear":
        return False
    if vocab.op_class(t_op) == "conv" or vocab.op_class(g_op) == "conv":
        if vocab.op_class(t_op) != "conv" or vocab.op_class(g_op) != "conv":
            return False
        shapes = table_shapes(sizes)
        if len(shapes) < 2 or len(shapes[1]) < 3:
            return False
        w = shapes[1]
        kk = 1
        for d in w[1:]:
            kk *= d
        return w[0] == n and kk == k
    if t_op != g_op and {t_op, g_op} - {"mm", "addmm", "linear"}:
        return False  # bmm's table is not an mm's
    shapes = table_shapes(sizes)
    if t_op in vocab.BIAS_OPS and len(shapes) >= 3:
        shapes = shapes[1:]  # the bias (or C) operand comes first
    mats = [s for s in shapes if len(s) >= 2]
    if len(mats) < 2:
        return False
    a, b = mats[0], mats[1]
    if t_op == "linear":  # packed_linear(x [M, K], packed weight, weight [N, K])
        a, b = mats[0], mats[-1]
    if batch is not None and len(a) == 3 and a[0] != batch:
        return False
    return a[-2:] == (m, k) and (b[-2:] == (k, n) or b[-2:] == (n, k))

