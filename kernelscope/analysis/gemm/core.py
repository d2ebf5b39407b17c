"""The entry point: one mode's GEMMs. The compiled path when Inductor's output code is there (with the eager path
for graph breaks between compiled regions), the trace-only path for a compiled trace without code, the eager path
otherwise; iteration 0's GEMMs, checked against up to 64 evenly spaced iterations; module paths, identical-layer
groups and what unfused epilogues cost.

Verdicts never come from a kernel name when code is there: ``triton_poi_fused_addmm_gelu_2`` is a pointwise kernel
after the GEMM, and ``cutlass_fused_mm_t_*`` has no fused epilogue despite its name.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kernelscope import vocab
from kernelscope.analysis.gemm.align import _TraceIndex
from kernelscope.analysis.gemm.compiled import _from_code, code_regions, nested_gemm_calls
from kernelscope.analysis.gemm.coverage import (
    CODE_SOURCE,
    DISPATCH_SOURCE,
    OracleGemm,
    code_oracle,
    compiled_dispatch_oracle,
    dispatch_counted,
    dispatch_oracle,
    gemm_coverage,
)
from kernelscope.analysis.gemm.dataflow import code_gemms
from kernelscope.analysis.gemm.eager import _eager
from kernelscope.analysis.gemm.log import LogFacts, parse_log
from kernelscope.analysis.gemm.model import _Config, _Counted, _Found, _verdict_of
from kernelscope.analysis.gemm.modules import ModuleIndex
from kernelscope.analysis.gemm.summary import epilogue_cost, group_gemms, summarize
from kernelscope.analysis.gemm.trace_only import _trace_only
from kernelscope.analysis.kernels import KernelAnalysis
from kernelscope.inductor_code import (
    OutputCode,
)
from kernelscope.result import Evidence, GemmCoverage, GemmEpilogue, OpCost
from kernelscope.result import EvidenceRule as Rule
from kernelscope.trace import Trace


@dataclass(frozen=True, slots=True)
class GemmReport:
    """One mode's GEMM verdicts, their identical-layer groups and what the unfused epilogues cost."""

    gemms: tuple[GemmEpilogue, ...]
    summary: str
    groups: tuple[Any, ...] = ()
    cost: Any = None
    coverage: GemmCoverage | None = None


def analyze_gemms(
    ka: KernelAnalysis,
    trace: Trace,
    codes: Sequence[OutputCode],
    *,
    mode: str,
    mode_config: Mapping[str, Any],
    log_text: str | None = None,
) -> tuple[tuple[GemmEpilogue, ...], str]:
    """The GEMMs of one iteration (iteration 0, checked against the others) and the mode's summary line."""
    r = gemm_report(ka, trace, codes, mode=mode, mode_config=mode_config, log_text=log_text)
    return r.gemms, r.summary


def gemm_report(
    ka: KernelAnalysis,
    trace: Trace,
    codes: Sequence[OutputCode],
    *,
    mode: str,
    mode_config: Mapping[str, Any],
    log_text: str | None = None,
    log: LogFacts | None = None,
) -> GemmReport:
    """Verdicts, groups of identical layers and the cost of unfused epilogues for one mode. ``log``: the facts
    of ``log_text`` when the caller parsed it already (a real model's compile log runs to tens of MB)."""
    cfg = _Config.of(mode, mode_config, ka.device)
    log = parse_log(log_text) if log is None else log
    if cfg.max_autotune is None:
        # Not given: Triton kernels record it in their inductor_meta, and max-autotune prints AUTOTUNE tables.
        said = {k.get("max_autotune") for c in codes for k in c.kernels} - {None}
        known = True if ("True" in said or log.autotune) else False if said else None
        cfg = replace(cfg, max_autotune=known)
    root = str(mode_config.get("module_prefix") or "")  # an older capture's wrapper prefix (analysis/mode.py)
    tx = _TraceIndex.build(trace, ka, root)
    count = max(ka.iterations.count, 1)
    its = sample_iterations(count)
    codes = [c for c in codes if c.launches or c.kernels]
    compiled = cfg.compiled or bool(codes) or bool(tx.regions)
    per_iter: list[list[_Found]] = []
    counted: list[_Counted] = []  # iteration 0's GEMM-class CPU ops (eager, or between compiled regions)
    dispatch = mode_config.get("dispatch")
    dispatch = dispatch if isinstance(dispatch, Mapping) and dispatch_counted(dispatch) else None
    cache: dict[str, int] = {}
    if codes:
        # calls of other ops that run GEMMs inside them (a custom op): what the dispatch count saw inside them, and
        # GEMM-class ops of the trace no call site launched
        calls = nested_gemm_calls(codes, tx, (dispatch or {}).get("nested") or {}, cache)
        static = [code_gemms(c, calls[ci]) for ci, c in enumerate(codes)]
        for it in its:
            found = _from_code(codes, tx, cfg, log, it, static, cache)
            if tx.regions:  # graph breaks: GEMMs that ran eagerly between compiled regions
                between, ops = _eager(tx, replace(cfg, compiled=False), it, outside_regions=True)
                found += between
                counted = counted if per_iter else ops
            per_iter.append(found)
    elif compiled:
        per_iter = [_trace_only(tx, cfg, it) for it in its]
    else:
        for it in its:
            found, ops = _eager(tx, cfg, it)
            counted = counted if per_iter else ops
            per_iter.append(found)
    params = mode_config.get("param_names")
    modules = ModuleIndex.build(log_text, codes, params if isinstance(params, (list, tuple)) else None, root) \
        if codes else None
    gemms = _combine(per_iter, its, count, modules=modules)
    oracle, oracle_source = _oracle(codes, tx, its[0] if its else 0, cache, dispatch, compiled)
    coverage = gemm_coverage(sorted(per_iter[0], key=lambda f: f.order) if per_iter else [], gemms, counted,
                             with_code=bool(codes), modules=modules, oracle=oracle,
                             oracle_source=oracle_source) if (ka.instances or codes) and (
        codes or not compiled) else None  # a compiled trace without its code: nothing lists what should have run
    gemms, groups = group_gemms(gemms)
    inst, nbytes = unfused_instances(per_iter[0] if per_iter else [])
    # the share of the same iteration's kernel time (the instances are iteration 0's)
    it0 = sum(k.dur for k in ka.iteration(its[0] if its else 0) if not k.is_memop) if ka.instances else None
    cost = epilogue_cost(inst, total_time_us=it0 or ka.time_us_per_iter, kernels_per_iter=ka.kernels_per_iter,
                         bytes_per_iter=nbytes)
    return GemmReport(gemms, summarize(gemms), groups, cost, coverage)


def _oracle(codes: Sequence[OutputCode], tx: _TraceIndex, it: int, cache: dict[str, int],
            dispatch: Mapping[str, Any] | None, compiled: bool) -> tuple[list[OracleGemm] | None, str]:
    """The GEMMs the coverage oracle counts in iteration ``it``, and what it read (coverage.py): compiled, the output
    code's GEMM call sites in each call of its graphs, and what the compiled call's dispatch count adds; eager, the
    dispatch count. None where there is neither."""
    if codes:
        oracle = code_oracle(codes, code_regions(codes, tx, it, cache))
        if dispatch is None:
            return oracle, CODE_SOURCE
        externs = frozenset(codes[g.site[1]].launches[g.site[2]].qualified_op for g in oracle
                            if g.by == "extern call" and g.site is not None)
        return oracle + compiled_dispatch_oracle(dispatch, oracle, externs), f"{CODE_SOURCE} + {DISPATCH_SOURCE}"
    if dispatch is not None and not compiled:
        return dispatch_oracle(dispatch), DISPATCH_SOURCE
    return None, ""


MAX_CHECKED_ITERATIONS = 64


def sample_iterations(count: int, limit: int = MAX_CHECKED_ITERATIONS) -> list[int]:
    """The iterations whose GEMMs are derived: all of them, or ``limit`` evenly spaced ones (first and last
    included) on long traces. Kernels per iteration are still counted over every iteration (analysis/kernels.py);
    re-deriving the same verdict 47,000 times made `kernelscope analyze` of a 1M-event trace 4x slower."""
    if count <= limit:
        return list(range(count))
    return sorted({round(i * (count - 1) / (limit - 1)) for i in range(limit)})


_ELEM_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1,
               "float8_e4m3fn": 1, "float8_e5m2": 1, "int32": 4, "int64": 8}


def _combine(per_iter: list[list[_Found]], its: Sequence[int] | None = None, count: int | None = None,
             modules: Any = None) -> tuple[GemmEpilogue, ...]:
    """Iteration 0's GEMMs, with time averaged over the iterations that show the same GEMM, and a consistency
    note. ``modules``: provenance (module path, source line) of compiled GEMMs, by graph and source nodes."""
    if not per_iter:
        return ()
    its = list(its) if its is not None else list(range(len(per_iter)))
    count = count if count is not None else len(per_iter)
    first = sorted(per_iter[0], key=lambda f: f.order)
    # Each iteration's GEMMs by key (the first of a key, as a scan finds it): a scan of an iteration's GEMMs per
    # GEMM was quadratic in the GEMMs of an iteration.
    by_key: list[dict[Any, _Found]] = []
    for iteration in per_iter:
        keyed: dict[Any, _Found] = {}
        for found in iteration:
            keyed.setdefault(found.key, found)
        by_key.append(keyed)
    out: list[GemmEpilogue] = []
    for i, f in enumerate(first):
        times = [f.time_us] if f.time_us is not None else []
        differs: dict[int, str] = {}  # iteration -> what ran there instead
        for it, keyed_gemms in zip(its[1:], by_key[1:]):
            same = keyed_gemms.get(f.key)
            if same is None:
                differs[it] = "GEMM not found"
                continue
            g = same
            ops_f = tuple((o.label, o.fused) for o in f.ops)
            ops_g = tuple((o.label, o.fused) for o in g.ops)
            if g.kernels != f.kernels or _verdict_of(g) != _verdict_of(f) or ops_g != ops_f:
                what = ", ".join(f"{lab} {'fused' if fu else 'unfused'}" for lab, fu in ops_g) or "no epilogue"
                differs[it] = f"{' + '.join(g.kernels)} -> {_verdict_of(g)} ({what})"
            if g.time_us is not None:
                times.append(g.time_us)
        evidence = list(f.evidence)
        if len(per_iter) > 1:
            evidence.append(
                Evidence.of(Rule.ITERATIONS_SAME, checked=len(per_iter), of=count) if not differs else
                Evidence.of(Rule.ITERATIONS_DIFFER, checked=len(per_iter), of=count, differing=tuple(differs),
                            details=tuple(differs.values())))
        module, source = f.module, f.source
        if modules is not None and not module and (f.source_nodes or f.debug_handle):
            module, source, ev = modules.lookup(f.graph, f.source_nodes, f.debug_handle, inside=bool(f.inside))
            if ev is not None:
                evidence.append(ev)
        elif module:
            evidence.append(Evidence.of(Rule.MODULE_RANGE, op=f.op, module=module))
        ops = f.ops
        out.append(
            GemmEpilogue(
                id=f"gemm{i}",
                kernels=f.kernels,
                backend=f.backend,
                m=f.m,
                n=f.n,
                k=f.k,
                dtype=f.dtype,
                time_us_per_iter=round(sum(times) / len(times), 3) if times else 0.0,
                op=f.op,
                epilogue=tuple(o.label for o in ops),
                fused=tuple(o.label for o in ops if o.fused),
                unfused=tuple(o.label for o in ops if not o.fused),
                unfused_kernels=tuple(dict.fromkeys(o.kernel for o in ops if not o.fused and o.kernel)),
                prologue=f.prologue,
                verdict=_verdict_of(f),
                why_not=f.why_not,
                evidence=tuple(dict.fromkeys(tuple(evidence) + tuple(o.evidence for o in ops))),
                confidence=f.confidence,
                module=module,
                source=source,
                batch=f.batch,
                kind=f.kind,
                costs=_op_costs(f),
                fusion_benchmarks=f.fusion_benchmarks,
            )
        )
    if modules is not None:
        out = _modules_by_order(out, first, modules)
    return tuple(out)


def _modules_by_order(gemms: list[GemmEpilogue], found: Sequence[_Found], modules: Any) -> list[GemmEpilogue]:
    """GEMMs whose call site names no GEMM source node (C++ kernels carry no comment; a oneDNN conv's comment
    names only the ReLU folded into it) take the traced graph's remaining GEMM-class nodes in order, and only when
    the counts match exactly: Inductor keeps GEMMs in topological order."""
    by_graph: dict[int, list[int]] = defaultdict(list)
    for i, f in enumerate(found):
        if f.confidence == "code":
            by_graph[f.graph].append(i)
    for graph, idxs in by_graph.items():
        missing = [i for i in idxs if not gemms[i].module]
        if not missing or graph >= len(modules.graphs):
            continue
        nodes = [n for n in modules.graphs[graph].values() if vocab.is_gemm(str(getattr(n, "op", "")))]
        claimed = {gemms[i].module for i in idxs if gemms[i].module}
        free = [n for n in nodes if (getattr(n, "module", None) or "") not in claimed]
        if len(free) != len(missing):
            continue
        for i, n in zip(missing, free):
            mod = getattr(n, "module", None) or ""
            if not mod:
                continue
            ev = Evidence.of(Rule.PROVENANCE_BY_ORDER, op=gemms[i].op, index=missing.index(i) + 1, count=len(missing),
                             node=str(getattr(n, "name", "?")), node_op=str(getattr(n, "op", "?")), module=mod)
            gemms[i] = replace(gemms[i], module=mod, source=getattr(n, "source", None) or "",
                               evidence=gemms[i].evidence + (ev,))
    return gemms


def _op_costs(f: _Found) -> tuple[OpCost, ...]:
    """Per unfused op: the time of the kernels it ran in (shared when one kernel runs several), and the bytes of
    the round trip it forced: the GEMM's output written to memory and read back by that kernel."""
    el = _ELEM_BYTES.get(f.dtype or "")
    out_bytes = f.m * f.n * (f.batch or 1) * el if f.m and f.n and el else None
    costs = []
    for o in f.ops:
        if o.fused:
            continue
        kernels = tuple(dict.fromkeys(n for n, _ in o.instances)) or ((o.kernel,) if o.kernel else ())
        costs.append(OpCost(o.label, kernels, round(o.time_us or 0.0, 3), 2 * out_bytes if out_bytes else None))
    return tuple(costs)


def unfused_instances(found: Sequence[_Found]) -> tuple[dict[tuple[str, float], float], int | None]:
    """One iteration's kernel launches that ran unfused epilogue ops (each once, also when it served two GEMMs),
    with their time; and the bytes of the round trips those epilogues forced."""
    inst: dict[tuple[str, float], float] = {}
    total_bytes = 0
    known = False
    for f in found:
        ran = False
        for o in f.ops:
            if o.fused or not o.instances:
                continue
            share = (o.time_us or 0.0) / len(o.instances)
            for key in o.instances:
                inst.setdefault(key, share)
            ran = True
        el = _ELEM_BYTES.get(f.dtype or "")
        if ran and f.m and f.n and el:
            total_bytes += 2 * f.m * f.n * (f.batch or 1) * el
            known = True
    return inst, (total_bytes if known else None)

