"""The compiled path: each GEMM call site's chain (dataflow.py) matched to what ran in the trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kernelscope import vocab
from kernelscope.analysis import patterns
from kernelscope.analysis.gemm.align import _Group, _match_regions, _RegionMatch, _TraceIndex
from kernelscope.analysis.gemm.dataflow import CodeGemm, gemm_op_of_launch
from kernelscope.analysis.gemm.library import (
    _dtype_from_types,
    _library_activation,
    _library_bias,
    _mnk_from_dims,
)
from kernelscope.analysis.gemm.log import LogFacts, fusion_benchmark_evidence
from kernelscope.analysis.gemm.model import EpilogueOp, _Config, _Found, short_kernel_name, split_k_evidence
from kernelscope.analysis.gemm.whynot import _fusion_log_lines, _why_not, fusion_benchmarks_for
from kernelscope.inductor_code import (
    KernelKind,
    OutputCode,
)
from kernelscope.result import Evidence, WhyNot
from kernelscope.result import EvidenceRule as Rule


def _from_code(
    codes: Sequence[OutputCode],
    tx: _TraceIndex,
    cfg: _Config,
    log: LogFacts,
    it: int,
    static: list[list[CodeGemm]],
    cache: dict[str, int],
) -> list[_Found]:
    matches = _match_regions(codes, tx, it, cache) if tx.ka.instances else []
    out: list[_Found] = []
    single_graph = len(codes) == 1 and log.graphs <= 1
    matched_codes = {rm.code_index for rm in matches if rm.aligned}
    for rm in matches:
        code = codes[rm.code_index]
        traced = _Traced.of(rm)
        inner = inner_gemm_groups(code, rm) if any(cg.inside for cg in static[rm.code_index]) else {}
        for cg in static[rm.code_index]:
            if cg.inside:
                out += _inside_call(code, cg, inner.get(cg.launch.index, ()), rm, traced, tx, cfg, log, single_graph)
                continue
            gi = rm.aligned.get(cg.launch.index)
            group = rm.groups[gi] if gi is not None else None
            out.append(_found_from_code(code, cg, group, rm, traced, tx, cfg, log, single_graph))
    if not matched_codes and it == 0:
        # The trace shows none of the code's launches (or there is no trace data): report the code alone.
        for ci, code in enumerate(codes):
            rm = _RegionMatch(None, ci, ci, (), {})
            traced = _Traced.of(rm)
            for cg in static[ci]:
                if not cg.inside:  # (the GEMMs a call runs inside it are the trace's: none here)
                    out.append(_found_from_code(code, cg, None, rm, traced, tx, cfg, log, single_graph))
    return out


# ------------------------------------------------------------------------------------------------------------
# GEMMs that run inside a call of another op (a custom op such as transformers' grouped_mm_fallback, one mm per
# expert): no call site of the code launches them; the trace shows them between the launches around that call.


def _runs_gemm_op(group: _Group) -> bool:
    """A launch group of a GEMM-class ATen op (aten::mm and the kernels it launched)."""
    return group.op is not None and group.op.name in vocab.EAGER_GEMM_OPS and bool(group.gemm_kernels)


def inner_gemm_groups(code: OutputCode, rm: _RegionMatch) -> dict[int, tuple[int, ...]]:
    """The launch groups of one region that are GEMM-class ops no call site of the code launched, by the extern
    call they ran inside (launch index -> group indices, in order): the first call of another op (not a GEMM call
    site) between the launches aligned before and after them. Groups next to a GEMM call site that the trace did
    not show are left to it (its GEMM, under a name the alignment did not know), and so are those with no such
    call around them."""
    claimed = set(rm.aligned.values())
    order = sorted(rm.aligned.items(), key=lambda kv: kv[1])  # (launch index, group index) by group
    out: dict[int, list[int]] = {}
    for gi, group in enumerate(rm.groups):
        if gi in claimed or not _runs_gemm_op(group):
            continue
        before = [li for li, g in order if g < gi]
        after = [li for li, g in order if g > gi]
        lo = max(before) if before else -1
        hi = min(after) if after else len(code.launches)
        between = [L for L in code.launches if lo < L.index < hi]
        if any(gemm_op_of_launch(code, L) is not None for L in between):
            continue
        calls = [L for L in between if L.kind == "extern" and L.qualified_op]
        if calls:
            out.setdefault(calls[0].index, []).append(gi)
    return {li: tuple(gis) for li, gis in out.items()}


def nested_gemm_calls(codes: Sequence[OutputCode], tx: _TraceIndex, nested: Mapping[str, Any],
                      cache: dict[str, int]) -> list[dict[int, str]]:
    """Per code module, its calls of other ops that run GEMMs inside them (launch index -> the op as the
    profiler names it): those whose op the dispatch count saw GEMMs dispatched inside (``nested``: capture.json's
    ``dispatch.nested``), and those the trace shows GEMM-class ops inside (iteration 0)."""
    out: list[dict[int, str]] = [{} for _ in codes]
    for ci, code in enumerate(codes):
        for L in code.launches:
            if L.kind == "extern" and L.qualified_op in nested and gemm_op_of_launch(code, L) is None:
                out[ci][L.index] = L.qualified_op
    for rm in (_match_regions(codes, tx, 0, cache) if tx.ka.instances else []):
        code = codes[rm.code_index]
        for li in inner_gemm_groups(code, rm):
            out[rm.code_index].setdefault(li, code.launches[li].qualified_op)
    return out


def code_regions(codes: Sequence[OutputCode], tx: _TraceIndex, it: int, cache: dict[str, int]
                 ) -> list[tuple[int, int]]:
    """(ordinal, code index) of each call of a compiled graph in iteration ``it``, as ``_from_code`` reads them:
    every region the trace shows, and each code once when none of them matched the code (iteration 0)."""
    matches = _match_regions(codes, tx, it, cache) if tx.ka.instances else []
    alone = [(ci, ci) for ci in range(len(codes))] if not any(rm.aligned for rm in matches) and it == 0 else []
    return [(rm.ordinal, rm.code_index) for rm in matches] + alone


def _inside_call(code: OutputCode, cg: CodeGemm, groups: Sequence[int], rm: _RegionMatch, traced: _Traced,
                 tx: _TraceIndex, cfg: _Config, log: LogFacts, single_graph: bool) -> list[_Found]:
    """The GEMMs a call of another op ran inside it (``groups``: their launch groups), each with its own kernels
    and shape and the epilogue of the call's result."""
    out: list[_Found] = []
    L = cg.launch
    result = code.buffer(L.writes[0]) if L.writes else None
    width = result.shape[-1] if result is not None and result.shape else None  # the call result's last dimension
    for n, gi in enumerate(groups):
        group = rm.groups[gi]
        f = _found_from_code(code, cg, group, rm, traced, tx, cfg, log, single_graph)
        op = group.op
        assert op is not None  # (_runs_gemm_op)
        base = op.name.split("::")[-1]
        conv = vocab.op_class(base) == "conv"
        m, n_, k = _mnk_from_dims(op.name, op.input_dims, op)
        if not conv and isinstance(width, int) and n_ is not None and n_ != width:
            # its result is not (a slice of) the call's: another GEMM inside the call reads it (x @ w1 @ w2), and
            # the code does not show what; the call's epilogue is not its own
            f = replace(f, ops=(), why_not=(), opaque=True, evidence=f.evidence + (Evidence.of(
                Rule.CODE_GEMM_INSIDE_INNER, op=op.name, n=n_, width=width, inside=cg.inside),))
        out.append(replace(
            f, key=("inside", rm.ordinal, rm.code_index, L.index, n), op="convolution" if conv else base,
            kind="conv" if conv else "gemm", m=m, n=n_, k=k, batch=None,
            dtype=_dtype_from_types(op.input_types, op.name) or f.dtype, inside=cg.inside,
            # the call's source-node comment lists what fed it, whose last GEMM is another module's: its module is
            # the call's, from its provenance handle
            source_nodes=(),
            evidence=(Evidence.of(Rule.CODE_GEMM_INSIDE, code.where(L.line), op=op.name, inside=cg.inside,
                                  site=L.name, index=n + 1, count=len(groups)),) + f.evidence))
    return out


@dataclass(frozen=True, slots=True)
class _Traced:
    """What ran for each aligned launch of a region (launch index -> its compute kernels' first name, instances
    and time): read once per region, not once per GEMM of the region."""

    name: dict[int, str]
    instances: dict[int, tuple[tuple[str, float], ...]]
    time: dict[int, float]

    @staticmethod
    def of(rm: _RegionMatch) -> _Traced:
        traced = _Traced({}, {}, {})
        for li, gi in rm.aligned.items():
            g = rm.groups[gi]
            compute = g.compute
            traced.name[li] = compute[0].name if compute else g.name
            traced.instances[li] = tuple((k.name, k.ts) for k in compute)
            traced.time[li] = sum(k.dur for k in compute)
        return traced


def _found_from_code(
    code: OutputCode,
    cg: CodeGemm,
    group: _Group | None,
    rm: _RegionMatch,
    traced: _Traced,
    tx: _TraceIndex,
    cfg: _Config,
    log: LogFacts,
    single_graph: bool,
) -> _Found:
    evidence = list(cg.evidence)
    region = rm.region.name if rm.region is not None else "the iteration"
    if group is not None:
        gk = group.gemm_kernels or group.compute
        kernels = tuple(k.name for k in gk)
        time_us = sum(k.dur for k in gk)
        backend = gk[0].backend if gk else _code_backend(cg, cfg)
        if cg.template is None and backend in (patterns.CUTLASS, patterns.TRITON, patterns.OTHER):
            # a library call (extern_kernels.addmm): cuBLAS runs some shapes with CUTLASS-built kernels of its
            # own; the backend is the call's, not the kernel name's (cuDNN's, for a convolution, unless it ran
            # one of those cuBLAS kernels: cuDNN calls cuBLAS for 1x1 convolutions)
            backend = patterns.CUBLAS if backend == patterns.CUTLASS and cg.kind == "conv" else \
                _code_backend(cg, cfg)
        evidence.append(Evidence.of(
            Rule.LAUNCH_ORDER_RAN_AS, code.where(cg.launch.line), site=cg.launch.name,
            kernels=tuple(short_kernel_name(x) for x in kernels), region=region,
            op=group.op.name if group.op is not None else None,
            external_id=group.op.external_id if group.op is not None else None))
        if any(vocab.is_split_k_reduce(k) for k in kernels):
            evidence.append(split_k_evidence())
        memsets = tuple(k.name for k in group.kernels if k.is_memop)
        if memsets:
            evidence.append(Evidence.of(Rule.LAUNCH_ORDER_MEMSETS, kernels=memsets))
        order = group.start
    else:
        kernels = (cg.launch.name,)
        time_us = None
        backend = _code_backend(cg, cfg)
        evidence.append(Evidence.of(Rule.LAUNCH_ORDER_NOT_FOUND, site=cg.launch.name, region=region))
        order = float(cg.launch.index)
    ops: list[EpilogueOp] = []
    if cg.bias == "extern" and group is not None and cg.launch.op in vocab.BIAS_OPS:
        # addmm's C operand: how the library applied it (a convolution or oneDNN linear takes its bias as an
        # operand of its own, which the [bias-in-call] evidence already names)
        bias = _library_bias(group, tx, cg.launch.name)
        evidence.append(bias.evidence)
    if cg.launch.op == "_addmm_activation":
        use_gelu = dict(cg.launch.kwargs).get("use_gelu")
        act = "gelu" if use_gelu == "True" else "relu"  # use_gelu defaults to False
        ops.append(_library_activation(group, act, cg.launch.name))
    trace_name, trace_inst, trace_time = traced.name, traced.instances, traced.time
    activation = ops[:]  # _addmm_activation's GELU/ReLU: applied after the bias
    ops = []
    for c in cg.chain:
        kernel = trace_name.get(c.launch, c.code_kernel)
        if c.launch == cg.launch.index and kernels:
            kernel = kernels[0]
        costly = not c.fused and not c.in_gemm
        ops.append(EpilogueOp(c.label, c.fused, kernel, c.evidence, trace_inst.get(c.launch, ()) if costly else (),
                              trace_time.get(c.launch) if costly else None, c.in_gemm))
        if c.launch == cg.launch.index and c.label == "bias" and activation:
            ops += activation
            activation = []
    ops = activation + ops
    unfused = [o for o in ops if not o.fused]
    why: list[WhyNot] = []
    unfused_launches = sorted({c.launch for c in cg.chain if not c.fused})
    benchmarks = fusion_benchmarks_for(log, code, cg, unfused_launches, single_graph)
    evidence += [fusion_benchmark_evidence(fb) for fb in benchmarks]
    if unfused:
        log_lines = _fusion_log_lines(log, code, cg, unfused_launches, single_graph)
        why, more = _why_not(
            backend, unfused, cfg, log, op=cg.op, m=cg.m, n=cg.n, k=cg.k, code_gemm=cg, log_ops=log_lines,
            benchmarks=benchmarks,
        )
        evidence += more
    m, n, k, dtype = cg.m, cg.n, cg.k, cg.dtype
    if group is not None and group.op is not None and None in (m, n, k, dtype):
        # Dynamic shapes leave symbols in the code (s77); the trace's record_shapes has the sizes that ran.
        tm, tn, tk = _mnk_from_dims(group.op.name, group.op.input_dims)
        m, n, k = (m if m is not None else tm), (n if n is not None else tn), (k if k is not None else tk)
        dtype = dtype or _dtype_from_types(group.op.input_types, group.op.name)
    return _Found(
        key=("code", rm.ordinal, rm.code_index, cg.launch.index, cg.node),
        kind=cg.kind,
        batch=cg.batch,
        source_nodes=cg.source_nodes,
        debug_handle=cg.launch.debug_handle,
        graph=rm.code_index,
        op=cg.op,
        kernels=kernels,
        backend=backend,
        m=m,
        n=n,
        k=k,
        dtype=dtype,
        time_us=time_us,
        ops=tuple(ops),
        prologue=cg.prologue,
        evidence=tuple(evidence),
        why_not=tuple(why),
        confidence="code",
        order=order,
        fusion_benchmarks=benchmarks,
        attributed=group is not None,
        site=cg.launch.name,
        site_where=code.where(cg.launch.line),
    )


def _code_backend(cg: CodeGemm, cfg: _Config) -> str:
    if cg.template is None:
        if cfg.device == "cpu":
            return (
                patterns.CPU_BLAS
                if cg.launch.op in ("_mkl_linear", "_linear_pointwise")
                else patterns.CPU_ATEN
            )
        if cg.kind == "conv":
            return patterns.CUDNN  # extern_kernels.convolution calls cuDNN (which may run cuBLAS's kernels)
        return patterns.CUBLASLT if cg.launch.op == "bias_addmm" else patterns.CUBLAS
    if cg.template.kind in (KernelKind.TRITON_POINTWISE.value, KernelKind.TRITON_REDUCTION.value,
                            KernelKind.TRITON_OTHER.value):
        return patterns.TRITON  # a Triton kernel that runs a dot without being a template (native matmul)
    return {
        KernelKind.TRITON_TEMPLATE.value: patterns.TRITON_TEMPLATE,
        KernelKind.NV_UNIVERSAL_GEMM.value: patterns.NVGEMM,
        KernelKind.CUTEDSL.value: patterns.NVGEMM,
        KernelKind.CUTLASS_CPP.value: patterns.CUTLASS,
        KernelKind.CPP_GEMM_TEMPLATE.value: patterns.INDUCTOR_CPP_TEMPLATE,
    }.get(cg.template.kind, patterns.OTHER)

