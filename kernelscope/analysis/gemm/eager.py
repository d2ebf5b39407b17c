"""The eager path: the trace's CPU op tree. A GEMM op's own kernels say what its call applied; the pointwise ops
that follow it on its output's shape are its epilogue, up to a boundary op (kernelscope/vocab.py).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernelscope import vocab
from kernelscope.analysis import patterns
from kernelscope.analysis.gemm.align import _Group, _TraceIndex, _when
from kernelscope.analysis.gemm.dataflow import _numel, bias_row
from kernelscope.analysis.gemm.labels import _eager_label
from kernelscope.analysis.gemm.library import (
    _dtype_from_types,
    _library_activation,
    _library_bias,
    _mnk_from_dims,
    conv_out_shape,
)
from kernelscope.analysis.gemm.model import (
    BIAS_OPS,
    EpilogueOp,
    _Config,
    _Counted,
    _Found,
    short_kernel_name,
    split_k_evidence,
)
from kernelscope.analysis.gemm.trace_only import _trace_only
from kernelscope.analysis.gemm.whynot import _why_from_trace
from kernelscope.analysis.kernels import KernelInstance
from kernelscope.provenance import FLOW_RANGE_PREFIX, parse_flow, short_source
from kernelscope.result import Evidence, GemmOp, Note
from kernelscope.result import EvidenceRule as Rule
from kernelscope.trace import CpuEvent

_EAGER_GEMMS = vocab.EAGER_GEMM_OPS
_EAGER_ELEMENTWISE = vocab.EAGER_ELEMENTWISE_OPS
_EAGER_VIEWS = vocab.EAGER_VIEW_OPS


@dataclass(slots=True)
class _OpTree:
    ops: list[CpuEvent]
    parent: list[int]
    children: list[list[int]]

    @staticmethod
    def build(events: Sequence[CpuEvent]) -> _OpTree:
        ops = sorted((e for e in events if e.cat == "cpu_op"), key=lambda e: (str(e.tid), e.ts, -e.dur))
        parent = [-1] * len(ops)
        children: list[list[int]] = [[] for _ in ops]
        stack: list[int] = []
        tid: object = object()
        for i, e in enumerate(ops):
            if e.tid != tid:
                stack, tid = [], e.tid
            while stack and e.ts >= ops[stack[-1]].end:
                stack.pop()
            if stack:
                parent[i] = stack[-1]
                children[stack[-1]].append(i)
            stack.append(i)
        return _OpTree(ops, parent, children)

    def subtree(self, i: int) -> list[int]:
        out, todo = [], [i]
        while todo:
            j = todo.pop()
            out.append(j)
            todo.extend(self.children[j])
        return out

    def anchor(self, i: int) -> int:
        """The outermost ATen-level ancestor of op i (aten::linear over aten::addmm)."""
        j = i
        while self.parent[j] >= 0 and _is_aten_level(self.ops[self.parent[j]].name):
            j = self.parent[j]
        return j


def _grouped_convolutions(tree: _OpTree) -> dict[int, int]:
    """Convolutions ATen runs group by group (a depthwise bf16 convolution on the CPU calls aten::convolution once
    per channel group inside the outer aten::_convolution): the innermost conv op of each group -> the outer call
    for the first group, -1 for the others, so the layer is one GEMM-class op, as the model wrote it (and as
    torch's dispatcher sees it) rather than one per group."""
    out: dict[int, int] = {}
    leaves_of: dict[int, list[int]] = defaultdict(list)
    for i, e in enumerate(tree.ops):
        if e.name not in _EAGER_GEMMS or vocab.op_class(e.name.split("::")[-1]) != "conv":
            continue
        top, j = i, tree.parent[i]
        while j >= 0 and vocab.op_class(tree.ops[j].name.split("::")[-1]) == "conv":
            top, j = j, tree.parent[j]
        if top != i:
            leaves_of[top].append(i)
    for top, leaves in leaves_of.items():
        inner = [i for i in leaves if not any(tree.ops[j].name in _EAGER_GEMMS for j in tree.subtree(i) if j != i)]
        if len(inner) > 1:
            inner.sort(key=lambda i: tree.ops[i].ts)
            out[inner[0]] = top
            out.update({i: -1 for i in inner[1:]})
    return out


def _is_aten_level(name: str) -> bool:
    return "::" in name and not name.startswith("## ")


def _bare_calls(tx: _TraceIndex, events: Sequence[CpuEvent], tree: _OpTree, calls: dict[object, list[int]]
                ) -> dict[int, frozenset[int]]:
    """The eager torch calls of the iteration (``kernelscope.flow:`` ranges) that ran no ATen op, each with the
    serials of the calls whose tensors it read. Such a call returns a tensor it was given (``.contiguous()`` of a
    contiguous tensor returns it before any dispatch) under a serial of its own, so the op that reads that serial
    reads what the call was given. Empty without eager dataflow."""
    if not tx.has_flow:
        return {}
    ran = {f[0] for lst in calls.values() for i in lst if (f := tx.flow_of(tree.ops[i])) is not None}
    n = len(FLOW_RANGE_PREFIX)
    out: dict[int, frozenset[int]] = {}
    for e in events:
        if e.cat == "user_annotation" and e.name.startswith(FLOW_RANGE_PREFIX):
            f = parse_flow(e.name[n:])
            if f is not None and f[0] not in ran:
                out[f[0]] = f[1]
    return out


# With eager dataflow, a chain is followed past calls that do not read it; this many in a row end the walk (a
# consumer further away is not an epilogue any compiler fuses, and it bounds the walk on large traces).
_FLOW_QUIET = 64
# How many calls without an ATen op in a row the chain is followed through (x.contiguous().contiguous() ...).
_BARE_DEPTH = 16


def _eager(tx: _TraceIndex, cfg: _Config, it: int, outside_regions: bool = False
           ) -> tuple[list[_Found], list[_Counted]]:
    """The GEMMs of iteration ``it``, and the GEMM-class ops it executed (attributed to a kernel or not); with
    ``outside_regions``, only those that ran between the compiled regions (graph breaks), whose kernels the
    compiled path does not read."""
    found, covered, counted = _eager_ops(tx, cfg, it, outside_regions)
    if outside_regions:
        return found, counted
    # GEMM kernels no GEMM-class op launched (cutlass.operators called directly, custom ops): read them as trace-
    # only, from their names (analysis/kernels.py already gave a GEMM-named kernel of another known op that op's
    # category, so none of those is among them).
    rest = [f for f in _trace_only(tx, cfg, it, skip=covered)]
    return found + rest, counted


@dataclass(frozen=True, slots=True)
class _EagerIteration:
    """One iteration's CPU op tree, the kernels each op launched, and each thread's top-level ATen calls in time
    order (the sequence an epilogue is read from)."""

    tx: _TraceIndex
    tree: _OpTree
    outside_regions: bool  # read only the ops that ran between the compiled regions
    kernels_by_ext: dict[int, list[KernelInstance]]
    kernels_by_key: dict[tuple[str, float], KernelInstance]  # CPU traces: a kernel is the op of its name and time
    calls: dict[object, list[int]]  # thread -> its top-level ATen calls
    place: dict[object, dict[int, int]]  # thread -> each call's place in its sequence
    grouped: dict[int, int]  # _grouped_convolutions
    bare: dict[int, frozenset[int]]  # _bare_calls: eager dataflow's calls that ran no ATen op

    @staticmethod
    def build(tx: _TraceIndex, it: int, outside_regions: bool) -> _EagerIteration:
        """Index iteration ``it``: its op tree, its kernels by launching op, its top-level calls per thread."""
        events = tx.cpu_in(it)
        tree = _OpTree.build(events)
        kernels_by_ext: dict[int, list[KernelInstance]] = defaultdict(list)
        kernels_by_key: dict[tuple[str, float], KernelInstance] = {}
        for ki in tx.ka.iteration(it):
            if ki.external_id is not None:
                kernels_by_ext[ki.external_id].append(ki)
            kernels_by_key[(ki.name, ki.ts)] = ki
        calls: dict[object, list[int]] = defaultdict(list)
        for i, e in enumerate(tree.ops):
            if _is_aten_level(e.name) and (
                tree.parent[i] < 0 or not _is_aten_level(tree.ops[tree.parent[i]].name)
            ):
                calls[e.tid].append(i)
        for lst in calls.values():
            lst.sort(key=lambda i: tree.ops[i].ts)
        # (a list.index per GEMM was quadratic in an iteration's calls)
        place = {tid: {i: p for p, i in enumerate(lst)} for tid, lst in calls.items()}
        return _EagerIteration(tx, tree, outside_regions, kernels_by_ext, kernels_by_key, calls, place,
                               _grouped_convolutions(tree), _bare_calls(tx, events, tree, calls))

    def kernels_of(self, indices: Sequence[int]) -> list[KernelInstance]:
        """The kernels the ops ``indices`` launched, in the order they ran."""
        out: list[KernelInstance] = []
        for j in indices:
            e = self.tree.ops[j]
            if self.tx.ka.device == "cpu":
                kk = self.kernels_by_key.get((e.name, e.ts))
                if kk is not None:
                    out.append(kk)
            elif e.external_id is not None:
                out.extend(self.kernels_by_ext.get(e.external_id, []))
        return sorted(dict.fromkeys(out), key=lambda k: (_when(k), k.ts))

    def excluded(self, e: CpuEvent) -> bool:
        """Whether op ``e`` ran inside a compiled region, which the compiled path reads instead."""
        return self.outside_regions and self.tx.regions_by_start.covers(e.ts)

    def through_bare(self, ins: frozenset[int], live: set[int]) -> list[int]:
        """The serials among ``ins`` (and the calls before them) of calls that ran no ATen op on the chain's data
        (``live``), directly or through other such calls: what they returned is a tensor they were given, so the
        chain goes on through them. Empty when none."""
        found: set[int] = set()

        def reaches(s: int, depth: int) -> bool:
            if s in live or s in found:
                return True
            ins_of = self.bare.get(s)
            if ins_of is None or depth > _BARE_DEPTH:
                return False
            if any(reaches(x, depth + 1) for x in ins_of):
                found.add(s)
                return True
            return False

        for s in ins:
            reaches(s, 0)
        return sorted(found)


@dataclass(frozen=True, slots=True)
class _EagerGemm:
    """One GEMM-class op of an iteration: the op, the kernels its call launched, those that compute its GEMM, and
    its shape."""

    i: int  # index in the op tree
    e: CpuEvent
    base: str  # the op's name without its namespace ("addmm")
    kind: str  # GemmOp's kind: the base name, or "convolution"
    kernels: tuple[KernelInstance, ...]  # every kernel the call launched (a grouped convolution: every group's)
    gemm: tuple[KernelInstance, ...]  # those that compute its GEMM
    anchor: int  # the outermost ATen-level call around it (aten::linear over aten::addmm)
    m: int | None
    n: int | None
    k: int | None


def _eager_ops(
    tx: _TraceIndex, cfg: _Config, it: int, outside_regions: bool
) -> tuple[list[_Found], set[tuple[str, float]], list[_Counted]]:
    """The GEMMs of iteration ``it`` read from its op tree, the kernels they cover (name, start), and every
    GEMM-class op it executed for the coverage self-check."""
    ei = _EagerIteration.build(tx, it, outside_regions)
    found: list[_Found] = []
    covered: set[tuple[str, float]] = set()
    counted: list[_Counted] = []
    for i in range(len(ei.tree.ops)):
        g = _gemm_of(ei, i)
        if g is None:
            continue
        if not g.gemm and tx.ka.device != "cpu":
            unattributed = _unattributed(ei, g)
            if unattributed is not None:
                counted.append(unattributed)
            continue
        covered |= {(kk.name, kk.ts) for kk in g.kernels}
        evidence, via_op = _launch_evidence(ei, g)
        counted.append(_Counted(GemmOp(g.e.name, g.kind), True, via_op, _inside_attention(ei.tree, i)))
        inner = _next_gemm_in_call(ei, g)
        if inner is None:
            ops, stops = _following_ops(ei, g, _in_call_ops(ei, g))
        else:
            # its result stays inside the call, where a later GEMM reads it: what follows the call is not its
            ops = _in_call_ops(ei, g, until=ei.tree.ops[inner].ts)
            stops = [Evidence.of(Rule.EAGER_SEQUENCE_NEXT_GEMM, op=ei.tree.ops[inner].name)]
        found.append(_found_of(ei, g, cfg, len(found), ops, evidence + stops))
    return found, covered, counted


def _gemm_of(ei: _EagerIteration, i: int) -> _EagerGemm | None:
    """Whether op ``i`` is a GEMM to read (the innermost GEMM-class op of a nest, a grouped convolution's first
    group; not one inside an excluded region), with what its call launched; None for any other op."""
    tree, e = ei.tree, ei.tree.ops[i]
    if e.name not in _EAGER_GEMMS or ei.excluded(e):
        return None
    sub = tree.subtree(i)
    if _in_grouped(tree, i):
        return None  # one group's GEMM inside a grouped GEMM call (ATen's CPU _grouped_mm): counted with the call
    if e.name.split("::")[-1] not in vocab.GROUPED_GEMM_OPS and any(
            tree.ops[j].name in _EAGER_GEMMS for j in sub if j != i):
        return None  # an outer GEMM op whose work is done by an inner one: one GEMM, counted once
    if i in ei.grouped:
        call = ei.grouped[i]
        if call < 0:
            return None  # a later group of a convolution ATen ran group by group: counted with its first
        sub = tree.subtree(call)  # one convolution: every group's kernels
    base = e.name.split("::")[-1]
    kind = "convolution" if vocab.op_class(base) == "conv" else base
    shaped = tree.ops[ei.grouped[i]] if i in ei.grouped else e  # a grouped convolution: the whole layer's shape
    m, n, k = _mnk_from_dims(shaped.name, shaped.input_dims, shaped)
    ks = ei.kernels_of(sub)
    # analysis/kernels.py decided what each kernel computes from the op that launched it: a GEMM-class op's
    # kernels are its GEMM, but for its helpers (layout transforms, padding) and ATen's elementwise kernels
    gk = [kk for kk in ks if not kk.is_memop and kk.category == "gemm"]
    if ei.tx.ka.device == "cpu" and not gk:
        gk = [kk for kk in ks if kk.name == e.name] or ks[:1]
    return _EagerGemm(i, e, base, kind, tuple(ks), tuple(gk), tree.anchor(i), m, n, k)


def _unattributed(ei: _EagerIteration, g: _EagerGemm) -> _Counted | None:
    """The coverage record of a GEMM-class op none of whose kernels computes a GEMM, with what it launched; None
    when an empty operand left it nothing to compute."""
    e, ks, tx = g.e, g.kernels, ei.tx
    if _computes_nothing(e):  # an empty operand: nothing to compute, nothing to attribute
        return None
    return _Counted(GemmOp(
        e.name, g.kind, tx.module_of(e), short_source(tx.source_of(e)) if tx.source_of(e) else "", g.m, g.n, g.k,
        _batch(e) if g.base in vocab.BATCHED_OPS else None,
        Note("launched-only", {"kernels": [short_kernel_name(kk.name) for kk in ks]}) if ks else
        Note("launched-no-kernel")), False)


def _launch_evidence(ei: _EagerIteration, g: _EagerGemm) -> tuple[list[Evidence], bool]:
    """The evidence of what the op launched, and whether it is the launching op (not the kernel's name) that says
    its kernel computes a GEMM."""
    e, gk = g.e, g.gemm
    evidence = [
        Evidence.of(Rule.EAGER_OP_LAUNCHED, op=e.name, external_id=e.external_id,
                    kernels=tuple(short_kernel_name(k.name) for k in gk))
        if gk
        else Evidence.of(Rule.EAGER_OP, op=e.name)
    ]
    # kernels whose names alone do not say GEMM (cuDNN's cutlass__5x_cudnn::Kernel<...fprop...>): the op that
    # launched them does
    by_op = [kk for kk in gk if ei.tx.ka.device != "cpu" and patterns.classify(kk.name)[0] != "gemm"]
    if by_op:
        evidence.append(Evidence.of(Rule.LAUNCHING_OP_GEMM, kernel=short_kernel_name(by_op[0].name),
                                    external_id=e.external_id, op=e.name))
    helpers = [kk for kk in g.kernels if not kk.is_memop and kk not in gk and vocab.gemm_helper(kk.name)]
    if helpers:
        evidence.append(Evidence.of(
            Rule.LAUNCHING_OP_HELPERS, op=e.name, count=len(helpers),
            kernels=tuple(dict.fromkeys(short_kernel_name(kk.name) for kk in helpers)),
            why=vocab.gemm_helper(helpers[0].name).why))  # type: ignore[union-attr]
    if any(vocab.is_split_k_reduce(k.name) for k in gk):
        evidence.append(split_k_evidence())
    return evidence, bool(by_op)


def _next_gemm_in_call(ei: _EagerIteration, g: _EagerGemm) -> int | None:
    """The GEMM-class op that runs next inside the same call as this GEMM, other than its siblings: then its result
    stays inside the call (that GEMM, or what runs before it, reads it) and the call's result is not this GEMM's.
    The call is the GEMM's top-level ATen op (a custom op running ``x @ w1 @ w2``, SDPA's math path running
    ``q @ k^T`` then ``probs @ v``, the native multi-head attention op) or the eager torch function it ran in
    (one ``kernelscope.flow`` range: ``F.multi_head_attention_forward`` runs the packed in-projection, the
    attention and out_proj in one call). Siblings, later GEMMs of the same K and N (a custom op's per-expert
    mm's, each over rows of its own), do not read this one's result. None when no other GEMM runs after it in
    the call (a Linear's one GEMM)."""
    tree, e, tx = ei.tree, g.e, ei.tx
    later: list[int] = []
    if g.anchor != g.i:
        later = sorted((j for j in tree.subtree(g.anchor)
                        if tree.ops[j].ts >= e.end and tree.ops[j].name in _EAGER_GEMMS and j != g.i),
                       key=lambda j: tree.ops[j].ts)
    flow0 = tx.flow_of(tree.ops[g.anchor])
    pos = ei.place.get(e.tid, {}).get(g.anchor, -1)
    if flow0 is not None and pos >= 0:
        for j in ei.calls.get(e.tid, [])[pos + 1:]:
            fl = tx.flow_of(tree.ops[j])
            if fl is None or fl[0] != flow0[0]:
                break  # past the torch call this GEMM ran in
            later += sorted((x for x in tree.subtree(j) if tree.ops[x].name in _EAGER_GEMMS),
                            key=lambda x: tree.ops[x].ts)
    for j in later:
        if ei.grouped.get(j) == -1 or any(tree.ops[x].name in _EAGER_GEMMS for x in tree.subtree(j) if x != j):
            continue  # a later group of this convolution; an outer GEMM op, whose inner op is the GEMM
        oj = tree.ops[j]
        _, n, k = _mnk_from_dims(oj.name, oj.input_dims, oj)
        if n is None or k is None or (n, k) != (g.n, g.k):
            return j
    return None


def _in_call_ops(ei: _EagerIteration, g: _EagerGemm, until: float | None = None) -> list[EpilogueOp]:
    """The epilogue ops the GEMM's own ATen call applies: a bias or activation the library call takes, then the
    elementwise ops that call runs after the GEMM (aten::linear -> matmul, then add_ for the bias); ``until``: the
    start of a later GEMM inside the call that reads the result (the call's ops from there on are not this one's)."""
    e, base, tree = g.e, g.base, ei.tree
    ops: list[EpilogueOp] = []
    group = _Group(e, g.kernels)
    if base in BIAS_OPS:
        ops.append(_library_bias(group, ei.tx, e.name))
    elif vocab.op_class(base) == "conv" and _conv_bias(e):
        # oneDNN (mkldnn_convolution) adds the bias in the convolution call: in the GEMM call, as addmm's
        # (vocab.FACTS["bias-in-call"]); cuDNN's path adds it with a separate add_ (read below)
        ops.append(EpilogueOp("bias", True, g.gemm[0].name if g.gemm else e.name,
                              Evidence.of(Rule.BIAS_CONV_OPERAND, op=e.name, shape=_conv_bias(e))))
    if base == "_addmm_activation":
        act = None
        ci = getattr(e, "concrete_inputs", None)  # record_shapes' use_gelu, where trace.py reads it
        if ci and len(ci) > 5 and str(ci[5]).strip():
            act = "gelu" if str(ci[5]).lower() in ("true", "1") else "relu"
        ops.append(_library_activation(group, act, e.name))
    inner_after: list[int] = []
    if g.anchor != g.i:
        # the outermost elementwise ops that start after the GEMM under a parent that started before it
        for j in tree.subtree(g.anchor):
            oj, parent = tree.ops[j], tree.parent[j]
            if (
                oj.ts >= e.end
                and (until is None or oj.ts < until)
                and ((oj.name in _EAGER_ELEMENTWISE
                      and vocab.op_class(oj.name) != "cast")  # a cast carries the value on, as in the chain below
                     or oj.name in vocab.EAGER_BIAS_OPS)
                and parent >= 0
                and tree.ops[parent].ts < e.end
            ):
                inner_after.append(j)
    anchor_name = tree.ops[g.anchor].name
    for j in sorted(inner_after, key=lambda j: tree.ops[j].ts):
        oj = tree.ops[j]
        kj = [kk for kk in ei.kernels_of(tree.subtree(j)) if not kk.is_memop]
        label = _eager_label(oj.name, getattr(oj, "concrete_inputs", None))
        if oj.name in vocab.EAGER_BIAS_OPS or (
                label == "add" and (anchor_name == "aten::linear" or vocab.op_class(anchor_name) == "conv")):
            label = "bias"  # linear's add_ after matmul, ATen's _convolution adding the bias after cuDNN
        ops.append(_separate(label, kj, oj.name, Rule.EAGER_OP_INSIDE, op=oj.name, anchor=anchor_name,
                             gemm_op=e.name))
    return ops


def _following_ops(ei: _EagerIteration, g: _EagerGemm, ops: list[EpilogueOp]
                   ) -> tuple[list[EpilogueOp], list[Evidence]]:
    """The epilogue: ``ops`` (the call's own), then the following top-level calls on the same thread that are
    elementwise on the GEMM's result, up to the op that ends the chain; with the evidence of where it ended and of
    the views and layout copies the value went through to reach each op."""
    tree, tx, e, anchor = ei.tree, ei.tx, g.e, g.anchor
    ops = list(ops)
    evidence: list[Evidence] = []
    anchor_name = tree.ops[anchor].name
    out_shape = _out_shape(tree.ops[anchor]) or _out_shape(e)
    if vocab.op_class(g.base) == "conv":
        out_shape = conv_out_shape(e) or conv_out_shape(tree.ops[anchor])
    seq = ei.calls.get(e.tid, [])
    pos = ei.place.get(e.tid, {}).get(anchor, -1)
    numel = _numel(out_shape) if out_shape else None
    # Eager dataflow (the worker's kernelscope.flow ranges): follow the calls that read the GEMM's result
    # (or an op of its chain), skip the others; without it, the call order decides.
    flow0 = tx.flow_of(tree.ops[anchor])
    live: set[int] | None = {flow0[0]} if flow0 is not None else None
    hop = _Hop(live is not None)
    quiet = 0
    track: list[tuple[EpilogueOp, int, frozenset[int], CpuEvent]] = []  # by dataflow: serial, inputs, event
    for j in seq[pos + 1 :] if pos >= 0 else []:
        oj = tree.ops[j]
        if ei.excluded(oj):
            break
        fl = tx.flow_of(oj) if live is not None else None
        if live is not None:
            bare = ei.through_bare(fl[1], live) if fl is not None else []
            if bare:
                live.update(bare)  # it reads what a call without an ATen op returned: the chain's own tensor
                hop.bare += len(bare)
            if fl is None or not (fl[1] & live):
                quiet += 1
                if quiet > _FLOW_QUIET:
                    break
                continue  # another call's data (the other GEMM of a SwiGLU, the next layer's input)
            quiet = 0
        subj = tree.subtree(j)
        if any(tree.ops[x].name in _EAGER_GEMMS for x in subj):
            hop.reach(evidence, oj.name)
            evidence.append(Evidence.of(Rule.EAGER_DATAFLOW_NEXT_GEMM if live is not None
                                        else Rule.EAGER_SEQUENCE_NEXT_GEMM, op=oj.name))
            break
        kj = [kk for kk in ei.kernels_of(subj) if not kk.is_memop]
        cls = vocab.op_class(oj.name)
        ci = getattr(oj, "concrete_inputs", None)
        if oj.name.endswith("::batch_norm") and ci and len(ci) > 5 and str(ci[5]).lower() in ("true", "1"):
            cls = "boundary"  # training-mode batch norm computes its statistics: a reduction
        if cls == "boundary":
            # an op whose result only feeds this reduction (x.pow(2) before RMSNorm's mean) is the norm's
            while ops and not ops[-1].fused and ops[-1].label in ("pow", "square", "mul_self") and \
                    vocab.op_class(oj.name) != "pointwise":
                dropped = ops.pop()
                evidence.append(Evidence.of(Rule.EAGER_SEQUENCE_NORM_FEEDER, op=dropped.label, reduction=oj.name))
            hop.reach(evidence, oj.name)
            evidence.append(Evidence.of(Rule.EAGER_SEQUENCE_BOUNDARY, op=oj.name))
            break
        if cls in ("view", "cast") or oj.name in _EAGER_VIEWS or (not kj and cls != "pointwise"):
            # a view, a layout copy (clone, contiguous, roll, cat, pad) or a cast carries the chain's values on,
            # as the compiled path follows them through (its kernels copy; they are not epilogue ops)
            if live is not None and fl is not None:
                live.add(fl[0])  # a view of the chain's data: who reads the view reads the chain
            hop.through(oj.name, copies=bool(kj))
            continue
        is_elem = cls == "pointwise" or (cls == "unknown" and kj and
                                         all(kk.category == "pointwise" for kk in kj))
        dims = [d for d in (oj.input_dims or ()) if isinstance(d, list) and d]
        # With eager dataflow the op reads the chain (checked above), whatever its shape: after a cat or a
        # broadcast (the rotary inv_freq @ position_ids, K = 1, then cat, cos and sin on [1, 512, 64]) the
        # GEMM's output shape is no longer the chain's. Without it, the shape is the only link.
        shape_ok = live is not None or (numel is not None and any(_numel(d) == numel for d in dims))
        hop.reach(evidence, oj.name)
        if not is_elem or not shape_ok:
            evidence.append(Evidence.of(Rule.EAGER_SEQUENCE_NOT_ELEMENTWISE, op=oj.name) if not is_elem else
                            Evidence.of(Rule.EAGER_SEQUENCE_SHAPE, op=oj.name, shape=out_shape))
            break
        label = _eager_label(oj.name, getattr(oj, "concrete_inputs", None))
        if label == "add" and numel and any(bias_row(n, g.n) and n < numel for d in dims if (n := _numel(d))):
            label = "bias"  # a row added to every row of the result (BART's final_logits_bias), as compiled says
        on = dims[0] if dims else "scalars"
        if live is not None and fl is not None:
            other = bool(fl[1] - live)
            live.add(fl[0])
            ops.append(_separate(label, kj, oj.name, Rule.EAGER_DATAFLOW_READS, op=oj.name, on=on,
                                 anchor=anchor_name, other=other))
            track.append((ops[-1], fl[0], fl[1], oj))
        else:
            ops.append(_separate(label, kj, oj.name, Rule.EAGER_SEQUENCE_AFTER, op=oj.name, on=on,
                                 anchor=anchor_name))
    return _gelu_tanh(ops, track), evidence


def _gelu_tanh(ops: list[EpilogueOp], tracked: list[tuple[EpilogueOp, int, frozenset[int], CpuEvent]]
               ) -> list[EpilogueOp]:
    """GELU's tanh form written out in ATen ops (GPT-2's ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 *
    x ** 3)))``) as one op, ``gelu-tanh``, the name compiled code gives it: a tanh whose argument the dataflow
    derives from the cube of a value x (``pow`` with the exponent 3) by muls and adds, then ``1 +`` it times
    ``x * 0.5``. The profiler records neither constant (they are 0-dim tensors): the cube under the tanh is the
    sign. ``tracked``: the ops the dataflow added, each with its flow serial, the serials it read and its event."""
    place = {id(op): i for i, op in enumerate(ops)}
    track = {place[id(op)]: (serial, ins, e) for op, serial, ins, e in tracked
             if id(op) in place and ops[place[id(op)]] is op}  # not one a later step dropped
    at = {serial: i for i, (serial, _, _) in track.items()}
    for t, (tanh, _, _) in track.items():
        if ops[t].label != "tanh":
            continue
        anc, _ = _upstream(track, at, track[t][1])
        cubes = [i for i in anc if ops[i].label == "pow" and _exponent(track[i][2]) == 3.0]
        if len(cubes) != 1 or len(track[cubes[0]][1]) != 1:
            continue
        (x,) = track[cubes[0]][1]
        inner = {i for i in anc if x in _upstream(track, at, track[i][1])[1]}
        plus = [i for i, (_, ins, _) in track.items() if tanh in ins and ops[i].label == "add"]
        if len(plus) != 1 or not all(ops[i].label in ("mul", "pow", "add") for i in inner):
            continue
        prod = [i for i, (_, ins, _) in track.items() if track[plus[0]][0] in ins and ops[i].label == "mul"]
        if len(prod) != 1:
            continue
        half = [at[s] for s in track[prod[0]][1] if s in at and ops[at[s]].label == "mul" and track[at[s]][1] == {x}]
        group = sorted(inner | {t, plus[0], prod[0], *half})
        if any(ops[i].fused for i in group):
            continue
        instances = tuple(k for i in group for k in ops[i].instances)
        times = [tu for i in group if (tu := ops[i].time_us) is not None]
        merged = EpilogueOp("gelu-tanh", False, ops[group[0]].kernel, Evidence.of(
            Rule.EAGER_DATAFLOW_GELU_TANH, ops=tuple(track[i][2].name for i in group), kernels=len(instances)),
            instances, sum(times) if times else None)
        rest = [op for i, op in enumerate(ops) if i not in group]
        return rest[:group[0]] + [merged] + rest[group[0]:]
    return ops


def _upstream(track: dict[int, tuple[int, frozenset[int], CpuEvent]], at: dict[int, int], serials: Iterable[int]
              ) -> tuple[set[int], set[int]]:
    """What values of flow ``serials`` were computed from: the tracked ops (their places) and every flow serial."""
    ops: set[int] = set()
    seen: set[int] = set()
    todo = list(serials)
    while todo:
        s = todo.pop()
        if s in seen:
            continue
        seen.add(s)
        i = at.get(s, -1)
        if i >= 0:
            ops.add(i)
            todo.extend(track[i][1])
    return ops, seen


def _exponent(e: CpuEvent) -> float | None:
    """aten::pow's scalar exponent, as record_shapes wrote it ('3.')."""
    ci = getattr(e, "concrete_inputs", None)
    try:
        return float(ci[1]) if ci and len(ci) > 1 and str(ci[1]).strip() else None
    except ValueError:
        return None


@dataclass(slots=True)
class _Hop:
    """The views and layout copies the chain's value went through since the last op that read it; said once the
    walk reaches the next op (an epilogue op or the op that ends the chain)."""

    flow: bool  # followed by eager dataflow (else by call order)
    ops: list[str] = field(default_factory=list)  # the views and layout copies, in call order
    copies: list[str] = field(default_factory=list)  # those of them that ran kernels (moved the data)
    bare: int = 0  # calls that ran no ATen op (they returned a tensor they were given)

    def through(self, op: str, *, copies: bool) -> None:
        self.ops.append(op)
        if copies:
            self.copies.append(op)

    def reach(self, evidence: list[Evidence], op: str) -> None:
        """Say the hop that ends at ``op`` (nothing when the value went straight to it), and start the next."""
        if self.ops or self.bare:
            rule = Rule.EAGER_DATAFLOW_THROUGH if self.flow else Rule.EAGER_SEQUENCE_THROUGH
            facts: dict[str, Any] = {"op": op, "through": tuple(self.ops),
                                     "copies": tuple(dict.fromkeys(self.copies))}
            if self.flow:
                facts["bare"] = self.bare
            evidence.append(Evidence.of(rule, **facts))
        self.ops, self.copies, self.bare = [], [], 0


def _found_of(ei: _EagerIteration, g: _EagerGemm, cfg: _Config, index: int, ops: list[EpilogueOp],
              evidence: list[Evidence]) -> _Found:
    """The GEMM's record: its backend, epilogue, why-not and source line (``index``: its place in the iteration)."""
    e, base, gk, tx = g.e, g.base, g.gemm, ei.tx
    backend = gk[0].backend if gk else patterns.classify(e.name, on_cpu=tx.ka.device == "cpu")[1]
    if backend == patterns.CUTLASS and tx.ka.device != "cpu" and vocab.op_class(base) in ("gemm", "conv"):
        # an ATen matmul calls cuBLAS, whatever its kernel's name says; cuDNN runs 1x1 convolutions on
        # cuBLAS's kernels too (cutlass::Kernel2<cutlass_80_tensorop_*gemm*>, one GEMM per image)
        backend = patterns.CUBLAS
    why, more = _why_from_trace(backend, ops, cfg, op=base, m=g.m, n=g.n, k=g.k)
    evidence = evidence + more
    where = tx.source_of(e)
    if where:
        evidence.append(Evidence.of(Rule.SOURCE, short_source(where), op=e.name, source=where))
    conv = vocab.op_class(base) == "conv"
    return _Found(
        key=("eager", e.tid, index),
        module=tx.module_of(e),
        source=short_source(where) if where else "",
        kind="conv" if conv else "gemm",
        batch=_batch(e) if base in vocab.BATCHED_OPS else None,
        op="convolution" if conv else base,
        kernels=tuple(kk.name for kk in gk) or (e.name,),
        backend=backend,
        m=g.m,
        n=g.n,
        k=g.k,
        dtype=_dtype_from_types(e.input_types, e.name),
        time_us=sum(kk.dur for kk in gk) if gk else e.dur,
        ops=tuple(ops),
        evidence=tuple(evidence),
        why_not=tuple(why),
        confidence="trace",
        order=_when(gk[0]) if gk else e.ts,
    )


def _in_grouped(tree: _OpTree, i: int) -> bool:
    """Whether op ``i`` runs inside a grouped GEMM call (vocab.GROUPED_GEMM_OPS)."""
    j = tree.parent[i]
    while j >= 0:
        if tree.ops[j].name.split("::")[-1] in vocab.GROUPED_GEMM_OPS:
            return True
        j = tree.parent[j]
    return False


def _inside_attention(tree: _OpTree, i: int) -> str:
    """The attention op a GEMM-class op runs inside (SDPA's math path: aten::scaled_dot_product_attention ->
    _scaled_dot_product_attention_math -> aten::matmul -> aten::bmm), outermost first; '' when none."""
    out, j = "", tree.parent[i]
    while j >= 0:
        base = tree.ops[j].name.split("::")[-1]
        if base in vocab.ATTENTION_OPS:
            out = base
        j = tree.parent[j]
    return out


def _computes_nothing(e: CpuEvent) -> bool:
    """Whether a GEMM-class op was called with an empty operand (a 0 in its recorded sizes)."""
    return any(isinstance(d, list) and d and all(isinstance(x, int) for x in d) and 0 in d
               for d in (e.input_dims or ()))


# Where a convolution op takes its bias (Input Dims position); cudnn_convolution takes none (ATen adds it after).
_CONV_BIAS_ARG = {"convolution": 2, "_convolution": 2, "conv1d": 2, "conv2d": 2, "conv3d": 2, "mkldnn_convolution": 2,
                  "_nnpack_spatial_convolution": 2, "miopen_convolution": 2, "conv_transpose1d": 2,
                  "conv_transpose2d": 2, "conv_transpose3d": 2, "cudnn_convolution_relu": 2,
                  "cudnn_convolution_add_relu": 4, "slow_conv2d_forward": 3, "_slow_conv2d_forward": 3,
                  "thnn_conv2d": 3}


def _conv_bias(e: CpuEvent) -> list[int] | None:
    """The bias shape a convolution op was called with (``[8]``), or None when it took none."""
    pos = _CONV_BIAS_ARG.get(e.name.split("::")[-1])
    dims = list(e.input_dims or ())
    if pos is None or pos >= len(dims):
        return None
    d = dims[pos]
    return list(d) if isinstance(d, list) and d else None


def _batch(e: CpuEvent) -> int | None:
    """A bmm-class op's batch count: the first dimension of its 3-D operand (as the compiled path reads it); a
    grouped GEMM has one only when its first operand is 3-D (a 2-D input over 3-D expert weights is one GEMM of its
    rows, split among the groups)."""
    dims = [d for d in (e.input_dims or ()) if isinstance(d, list) and len(d) == 3]
    first = next((d for d in (e.input_dims or ()) if isinstance(d, list) and d), None)
    if e.name.split("::")[-1] in vocab.GROUPED_GEMM_OPS and (first is None or len(first) != 3):
        return None
    return dims[0][0] if dims and isinstance(dims[0][0], int) else None


def _out_shape(e: CpuEvent) -> list[int] | None:
    dims = [d for d in (e.input_dims or ()) if isinstance(d, list)]
    base = e.name.split("::")[-1]
    try:
        if base == "linear" and len(dims) >= 2:
            return list(dims[0][:-1]) + [dims[1][0]]
        if base in ("matmul", "mm", "bmm", "_int_mm", "_scaled_mm") and len(dims) >= 2:
            a, b = dims[0], dims[1]
            return list(a[:-1]) + [b[-1]]
        if base in BIAS_OPS and len(dims) >= 3:
            a, b = dims[1], dims[2]
            return list(a[:-1]) + [b[-1]]
    except (IndexError, TypeError):
        return None
    return None


def _separate(label: str, kernels: Sequence[KernelInstance], op_name: str, rule: Rule, **facts: Any) -> EpilogueOp:
    """An eager op that ran as kernels of its own after the GEMM: unfused, with the time of those kernels; its
    evidence is ``rule``'s with the kernel it ran."""
    kname = kernels[0].name if kernels else op_name
    return EpilogueOp(label, False, kname, Evidence.of(rule, **facts, ran=short_kernel_name(kname)),
                      tuple((kk.name, kk.ts) for kk in kernels), sum(kk.dur for kk in kernels) if kernels else None)
