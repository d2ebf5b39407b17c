"""The trace side of compiled modes: kernels cut into launch groups (one CPU call and what it launched), and the
wrapper's call sites aligned to them inside each ``## Call CompiledFxGraph ##`` region.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter

from kernelscope import vocab
from kernelscope.analysis import patterns
from kernelscope.analysis.gemm.model import GEMM_OPS, VENDOR_BACKENDS, _norm_op
from kernelscope.analysis.kernels import KernelAnalysis, KernelInstance, cpu_names, named
from kernelscope.inductor_code import (
    KernelKind,
    Launch,
    OutputCode,
)
from kernelscope.provenance import (
    FLOW_RANGE_PREFIX,
    MODULE_RANGE_PREFIX,
    SOURCE_RANGE_PREFIX,
    RangeIndex,
    module_index,
    parse_flow,
)
from kernelscope.trace import CpuEvent, StartIndex, Trace

_GRAPH_CALL = vocab.GRAPH_CALL
_BOOKKEEPING = vocab.BOOKKEEPING_RANGE
_RANGE_PREFIXES = (MODULE_RANGE_PREFIX, SOURCE_RANGE_PREFIX, FLOW_RANGE_PREFIX)


@dataclass(frozen=True, slots=True)
class _Group:
    """Kernels launched by one CPU call (an ATen op, a Triton kernel's op), or one kernel launched alone."""

    op: CpuEvent | None
    kernels: tuple[KernelInstance, ...]

    @property
    def name(self) -> str:
        if self.op is not None:
            return self.op.name
        return self.kernels[0].name if self.kernels else ""

    @property
    def compute(self) -> tuple[KernelInstance, ...]:
        return tuple(k for k in self.kernels if not k.is_memop)

    @property
    def gemm_kernels(self) -> tuple[KernelInstance, ...]:
        return tuple(k for k in self.compute if k.category == "gemm")

    @property
    def start(self) -> float:
        ts = [k.launch_ts if k.launch_ts is not None else k.ts for k in self.kernels]
        return min(ts) if ts else (self.op.ts if self.op else 0.0)


@dataclass(slots=True)
class _TraceIndex:
    """Lookups over one trace, built once."""

    trace: Trace
    ka: KernelAnalysis
    by_ext: dict[int, CpuEvent] = field(default_factory=dict)
    _cpu_by_key: dict[tuple[str, float], CpuEvent] | None = None  # CPU traces only, built on first use
    regions: tuple[CpuEvent, ...] = ()
    modules: RangeIndex | None = None
    sources: RangeIndex | None = None  # eager GEMM-class calls' source lines (kernelscope.source: ranges)
    flows: RangeIndex | None = None  # eager dataflow (kernelscope.flow: ranges)
    _flow_labels: dict[str, tuple[int, frozenset[int]] | None] = field(default_factory=dict)
    _copies: dict[object, tuple[list[float], list[CpuEvent]]] | None = None
    # Asked once per checked iteration or per op: bisects instead of scans, built on first use.
    _regions_by_start: StartIndex[CpuEvent] | None = None
    _cpu_by_start: StartIndex[CpuEvent] | None = None

    @staticmethod
    def build(trace: Trace, ka: KernelAnalysis, root: str = "") -> _TraceIndex:
        """``root``: a prefix of the eager module paths that the user's model lacks (an older capture's wrapper)."""
        idx = _TraceIndex(trace, ka)
        cpu = trace.cpu
        # Names repeat once per iteration: each distinct name is tested once, and the events are read again
        # only for the names that matter (most traces have no kernelscope ranges at all).
        names = cpu_names(trace)
        ranged = {n for n in names if n.startswith(_RANGE_PREFIXES)}
        ranges = named(cpu, ranged) if ranged else []
        idx.modules = module_index(ranges, MODULE_RANGE_PREFIX, root=root)
        idx.sources = module_index(ranges, SOURCE_RANGE_PREFIX)
        idx.flows = module_index(ranges, FLOW_RANGE_PREFIX)
        # External ids are unique per op; keep the first (outermost) if a tool wrote duplicates: read backwards,
        # the first one is written last.
        idx.by_ext = {e.external_id: e for e in reversed(cpu) if e.external_id is not None and e.cat == "cpu_op"}
        graph_calls = {n for n in names if _GRAPH_CALL.match(n)}
        idx.regions = tuple(sorted(named(cpu, graph_calls), key=attrgetter("ts"))) \
            if graph_calls else ()
        return idx

    @property
    def cpu_by_key(self) -> dict[tuple[str, float], CpuEvent]:
        """CPU events by (name, start): how a CPU trace's kernels (CPU ops themselves) find their op."""
        if self._cpu_by_key is None:
            self._cpu_by_key = {}
            for e in self.trace.cpu:
                self._cpu_by_key.setdefault((e.name, e.ts), e)
        return self._cpu_by_key

    def window(self, it: int) -> tuple[float, float]:
        if self.ka.windows and it < len(self.ka.windows):
            return self.ka.windows[it]
        inst = self.ka.iteration(it)
        if not inst:
            return (0.0, -1.0)
        return (min(_when(k) for k in inst), max(k.ts + k.dur for k in inst) + 1.0)

    @property
    def regions_by_start(self) -> StartIndex[CpuEvent]:
        """The compiled regions (``## Call CompiledFxGraph ##``) by start time."""
        if self._regions_by_start is None:
            self._regions_by_start = StartIndex(self.regions)
        return self._regions_by_start

    def regions_in(self, it: int) -> list[CpuEvent]:
        return self.regions_by_start.between(*self.window(it))

    def cpu_in(self, it: int) -> list[CpuEvent]:
        """The CPU events that start in iteration ``it``'s window, in trace order."""
        if self._cpu_by_start is None:
            self._cpu_by_start = StartIndex(self.trace.cpu)
        return self._cpu_by_start.between(*self.window(it))

    def nested_copies(self, op: CpuEvent) -> list[CpuEvent]:
        """The aten::copy_ records nested in a CPU op (the broadcast bias an addmm copies into its output)."""
        if self._copies is None:
            by_tid: dict[object, list[CpuEvent]] = {}
            for e in self.trace.cpu:
                if e.name in ("aten::copy_", "aten::expand_copy"):
                    by_tid.setdefault(e.tid, []).append(e)
            for lst in by_tid.values():
                lst.sort(key=lambda e: e.ts)
            self._copies = {t: ([e.ts for e in lst], lst) for t, lst in by_tid.items()}
        starts, lst = self._copies.get(op.tid, ([], []))
        i = bisect.bisect_left(starts, op.ts)
        out = []
        while i < len(lst) and lst[i].ts < op.end:
            out.append(lst[i])
            i += 1
        return out

    def module_of(self, e: CpuEvent) -> str:
        return (self.modules.of(e) or "") if self.modules is not None and self.modules.ranges else ""

    def source_of(self, e: CpuEvent) -> str:
        """The user's line that called the GEMM-class op (``/path/model.py:52``), from the eager worker's
        ``kernelscope.source:`` range around it; '' when the trace has none."""
        return (self.sources.of(e) or "") if self.sources is not None and self.sources.ranges else ""

    @property
    def has_flow(self) -> bool:
        return self.flows is not None and self.flows.ranges > 0

    def flow_of(self, e: CpuEvent) -> tuple[int, frozenset[int]] | None:
        """The eager torch call an ATen op ran in: (its serial, the serials of the calls whose tensors it
        read); None outside any (the op reads no tensor a GEMM-class call made, or the trace has no flow)."""
        if not self.has_flow:
            return None
        label = self.flows.of(e)  # type: ignore[union-attr]
        if label is None:
            return None
        if label not in self._flow_labels:
            self._flow_labels[label] = parse_flow(label)
        return self._flow_labels[label]

    def op_of(self, k: KernelInstance) -> CpuEvent | None:
        if self.ka.device == "cpu":
            return self.cpu_by_key.get((k.name, k.ts))
        return self.by_ext.get(k.external_id) if k.external_id is not None else None


def _when(k: KernelInstance) -> float:
    return k.launch_ts if k.launch_ts is not None else k.ts


def _groups(instances: Sequence[KernelInstance], tx: _TraceIndex) -> list[_Group]:
    """Cut kernels (in launch order) into launch groups."""
    out: list[_Group] = []
    if tx.ka.device == "cpu":
        # CPU "kernels" nest (aten::addmm holds aten::copy_): one group per outermost instance.
        end = float("-inf")
        for k in sorted(instances, key=lambda k: (k.ts, -k.dur)):
            if out and k.ts < end:
                g = out[-1]
                out[-1] = _Group(g.op, g.kernels + (k,))
                continue
            out.append(_Group(tx.op_of(k), (k,)))
            end = k.ts + k.dur
        return out
    key_prev: object = None
    for k in sorted(instances, key=lambda k: (_when(k), k.ts)):
        op = tx.op_of(k)
        if op is not None and not _BOOKKEEPING.match(op.name):
            key: object = ("op", k.external_id)
        else:
            # Launched from a bookkeeping range (NVGEMM's cudaLaunchKernelExC, a CUTLASS .so): its own group.
            op, key = None, ("solo", k.correlation, k.ts)
        # A split-K reduce belongs to the GEMM before it, even when a CUDA graph replay gives it no op of its
        # own.
        joins_gemm = vocab.is_split_k_reduce(k.name) and out and out[-1].gemm_kernels
        if out and (key == key_prev or joins_gemm):
            g = out[-1]
            out[-1] = _Group(g.op, g.kernels + (k,))
        else:
            out.append(_Group(op, (k,)))
            key_prev = key
    return out


def _compatible(launch: Launch, group: _Group, code: OutputCode) -> bool:
    if launch.kind == "kernel":
        kd = code.kernel(launch.name)
        if kd is None:
            return False
        names = {kd.name, *kd.profiler_names}
        gnames = [group.name] + [k.name for k in group.kernels]
        if group.op is not None and group.op.kernel_name:
            gnames.append(group.op.kernel_name)
        if any(g in names or g.endswith("_" + kd.name) for g in gnames):
            return True
        if kd.kind in (
            KernelKind.NV_UNIVERSAL_GEMM.value,
            KernelKind.CUTLASS_CPP.value,
            KernelKind.CUTEDSL.value,
            KernelKind.CUDA_CPP.value,
        ):
            # Different names in code and on the GPU: a GEMM kernel with no CPU op of its own.
            return group.op is None and any(
                k.category == "gemm" and k.backend in (patterns.NVGEMM, patterns.CUTLASS)
                for k in group.compute
            )
        return False
    op = _norm_op(launch.op or "")
    if not op:
        return False
    if group.op is None:
        # Replayed from a CUDA graph (reduce-overhead): no ATen op, but a vendor GEMM kernel where the extern
        # ran.
        return launch.op in GEMM_OPS and any(k.backend in VENDOR_BACKENDS for k in group.gemm_kernels)
    name = group.op.name
    if vocab.op_class(op) == "conv" or op == "_convolution_pointwise":
        # the kernel's CPU op is the innermost convolution (aten::cudnn_convolution under aten::convolution)
        return vocab.op_class(name) == "conv" or "convolution" in name
    return (
        name.endswith("::" + op) or name == op or (launch.op is not None and name.endswith("::" + launch.op))
    )


def _align(code: OutputCode, groups: Sequence[_Group]) -> dict[int, int]:
    """Launch index -> group index, matching the wrapper's order against the trace's launches in one region.
    """
    out: dict[int, int] = {}
    j = 0
    for launch in code.launches:
        for t in range(j, len(groups)):
            if _compatible(launch, groups[t], code):
                out[launch.index] = t
                j = t + 1
                break
    return out


@dataclass(frozen=True, slots=True)
class _RegionMatch:
    region: CpuEvent | None
    ordinal: int
    code_index: int
    groups: tuple[_Group, ...]
    aligned: dict[int, int]


def _match_regions(
    codes: Sequence[OutputCode], tx: _TraceIndex, it: int, cache: dict[str, int]
) -> list[_RegionMatch]:
    regions = tx.regions_in(it)
    inst = list(tx.ka.iteration(it))
    out: list[_RegionMatch] = []
    if not regions:
        groups = _groups(inst, tx)
        best = max(range(len(codes)), key=lambda c: (len(_align(codes[c], groups)), -c))
        return [_RegionMatch(None, 0, best, tuple(groups), _align(codes[best], groups))]
    by_launch = StartIndex(inst, start=_when)  # each region's kernels by a bisect, not a scan per region
    for ordinal, r in enumerate(regions):
        groups = _groups(by_launch.between(r.ts, r.end), tx)
        if r.name in cache and not r.name.endswith("None ##"):
            best = cache[r.name]
        else:
            scores = [(len(_align(c, groups)), -abs(ci - ordinal), ci) for ci, c in enumerate(codes)]
            best = max(scores)[2]
            cache[r.name] = best
        out.append(_RegionMatch(r, ordinal, best, tuple(groups), _align(codes[best], groups)))
    return out

