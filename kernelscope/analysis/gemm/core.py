"""GEMM epilogue verdicts: which ops after each matrix multiply ran inside the GEMM kernel, with the evidence.

One entry point, :func:`analyze_gemms`, with three ways to answer, strongest first:

* compiled modes with Inductor output code (confidence ``"code"``): the dataflow comes from the code. A
  template kernel's "Graph fragment" lists the GEMM node and every node Inductor fused after it; other kernels
  read the GEMM's output as a ``PlaceHolder`` (Triton) or through the wrapper's buffers (C++ kernels, which
  carry no fragment). The ops that consume the GEMM's output, up to the next GEMM, reduction or graph output,
  are its epilogue; each is fused when it is computed in the GEMM's own kernel. The code is then aligned with
  the trace: the wrapper's launch order against the launches inside each ``## Call CompiledFxGraph ##`` region
  (NVGEMM and CUTLASS kernels have other names on the GPU than in the code, and NVGEMM's launch has no CPU op
  of its own).
* eager (confidence ``"trace"``): the trace's CPU op tree is what ran. A GEMM op's own kernels say whether
  cuBLASLt applied the bias (``nvjet_*_bias_*``) or ``_addmm_activation``'s GELU/ReLU; each following
  elementwise op on a tensor of the GEMM's output shape is an unfused epilogue op with its own kernel.
* a compiled trace without code (confidence ``"trace-only"``): kernel sequences and Inductor kernel names
  only. Names list origins, not dataflow (a template's name also lists prologue ops), so the verdict is weaker
  and says so.

Verdicts never come from a kernel name alone when code is there: ``triton_poi_fused_addmm_gelu_2`` is a
pointwise kernel after the GEMM, and ``cutlass_fused_mm_t_*`` has no fused epilogue despite its name.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kernelscope import vocab
from kernelscope.analysis import patterns
from kernelscope.analysis.kernels import KernelAnalysis, KernelInstance
from kernelscope.inductor_code import (
    CPP_OP_SIGNATURES,
    TEMPLATE_KINDS,
    FxNode,
    KernelDef,
    KernelKind,
    Launch,
    OutputCode,
    name_tokens,
    torch_dtype_name,
)
from kernelscope.analysis.gemm.dataflow import CodeGemm, code_gemms
from kernelscope.analysis.gemm.modules import ModuleIndex
from kernelscope.provenance import ModuleIndex as TraceModules
from kernelscope.provenance import module_index
from kernelscope.analysis.gemm.summary import evidence as evidence_of
from kernelscope.analysis.gemm.summary import epilogue_cost, group_gemms, summarize
from kernelscope.result import GemmEpilogue, OpCost, Verdict
from kernelscope.trace import CpuEvent, Trace

# ------------------------------------------------------------------------------------------------------------
# Vocabulary

# The op vocabulary lives in kernelscope/vocab.py (one table for every path and module).
GEMM_OPS = vocab.GEMM_OPS
BIAS_OPS = vocab.BIAS_OPS
REDUCTION_OPS = vocab.BOUNDARY_OPS  # everything that ends an epilogue chain without being a GEMM
VIEW_OPS = vocab.VIEW_OPS
CAST_OPS = vocab.CAST_OPS
# Backends whose GEMM is a library call: Inductor cannot put its own epilogue into them.
VENDOR_BACKENDS = frozenset(
    {patterns.CUBLAS, patterns.CUBLASLT, patterns.CPU_BLAS, patterns.CPU_ATEN, patterns.ATEN}
)
# max_autotune_gemm_backends entries that produce kernels Inductor can fuse an epilogue into.
_FUSIBLE_BACKENDS = frozenset({"TRITON", "CUTLASS", "NVGEMM", "CPP", "CUTEDSL", "CK", "CKTILE"})

_GRAPH_CALL = re.compile(r"^## Call CompiledFxGraph .* ##$")
_CPP_GEMM_NAME = re.compile(r"gemm_m(\d+)n(\d+)k(\d+)")
_BOOKKEEPING = re.compile(
    r"^(TorchDynamo Cache Lookup|Torch-Compiled Region|Pregraph bytecode|AOTDispatcher|## |ProfilerStep#|"
    r"PyTorch Profiler|CompiledFunction|autograd::)"
)
_VERDICT_ORDER = (Verdict.FUSED, Verdict.PARTIAL, Verdict.UNFUSED, Verdict.NONE, Verdict.UNKNOWN)


@dataclass(frozen=True, slots=True)
class EpilogueOp:
    """One op of a GEMM's epilogue chain and where it ran."""

    label: str
    fused: bool
    kernel: str | None  # the kernel it ran in (trace name when matched, else the code name)
    evidence: str
    # the kernel instances it ran in this iteration: ((name, ts), ...) and their GPU (CPU-kernel) time
    instances: tuple[tuple[str, float], ...] = ()
    time_us: float | None = None
    in_gemm: bool = False  # ran in another GEMM's template (SwiGLU's silu in up_proj's epilogue)


# ------------------------------------------------------------------------------------------------------------
# Logs: TORCH_LOGS=fusion and max-autotune's AUTOTUNE tables, from the worker's stderr.


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
    benchmark: tuple[
        tuple[tuple[str, ...], tuple[str, ...], str, int], ...
    ] = ()  # (bufs1, bufs2, "1.2x slowdown", line)
    nvgemm_failed_choices: tuple[str, ...] = ()
    nvgemm_error: str | None = None
    nvgemm_error_line: int | None = None
    no_valid_choices: tuple[str, ...] = ()
    graphs: int = 0  # distinct Dynamo frames ("[0/0]") in the log
    present: bool = False  # a log was given at all


_LOG_PREFIX = re.compile(r"^[VIWEDC]\d{4} [\d:.]+ +\d+ \S+:\d+\] (?:\[[^\]]*\] )*")
_FRAME = re.compile(r"^[VIWEDC]\d{4} [\d:.]+ +\d+ \S+:\d+\] \[(\d+/\d+)\]")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_AUTOTUNE_HEAD = re.compile(r"^AUTOTUNE (\w+)\((.*)\)\s*$")
_AUTOTUNE_ROW = re.compile(r"^\s+(\S+) (inf|[\d.]+(?:e[-+]?\d+)?) ms\b")
_CANNOT_FUSE = re.compile(r"cannot fuse (\S+) with (\S+): (.*)$")
_BENCH_FUSE = re.compile(r"cannot fuse \(benchmark\): fusing (.*?) with (.*?) cause ((?:inf|[\d.]+)x slowdown)")
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
        line = _LOG_PREFIX.sub("", _ANSI.sub("", raw)).rstrip()
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


# ------------------------------------------------------------------------------------------------------------
# Mode configuration


@dataclass(frozen=True, slots=True)
class _Config:
    mode: str
    compiled: bool
    max_autotune: bool | None  # None: not said (kernelscope analyze on a bare trace)
    gemm_backends: tuple[str, ...] | None
    device: str
    capability: tuple[int, int] | None
    freezing: bool

    @staticmethod
    def of(mode: str, cfg: Mapping[str, Any], device: str) -> _Config:
        backends = cfg.get("gemm_backends")
        if isinstance(backends, str):
            backends = [b for b in backends.split(",") if b.strip()]
        cap = cfg.get("capability")
        capability = None
        if isinstance(cap, str) and re.match(r"^\d+\.\d+$", cap.strip()):
            major, minor = cap.strip().split(".")
            capability = (int(major), int(minor))
        elif isinstance(cap, (tuple, list)) and len(cap) == 2:
            capability = (int(cap[0]), int(cap[1]))
        return _Config(
            mode=mode,
            compiled=bool(cfg.get("compiled", mode not in ("eager", ""))),
            max_autotune=bool(cfg["max_autotune"]) if cfg.get("max_autotune") is not None else None,
            gemm_backends=tuple(str(b).strip().upper() for b in backends) if backends else None,
            device=str(cfg.get("device") or device),
            capability=capability,
            freezing=bool(cfg.get("freezing", False)),
        )

    @property
    def sm(self) -> str | None:
        return f"sm{self.capability[0]}{self.capability[1]}" if self.capability else None


# ------------------------------------------------------------------------------------------------------------
# Internal per-GEMM finding (one iteration)


@dataclass(frozen=True, slots=True)
class _Found:
    key: tuple[Any, ...]  # identity across iterations
    op: str
    kernels: tuple[str, ...]
    backend: str
    m: int | None
    n: int | None
    k: int | None
    dtype: str | None
    time_us: float | None  # None: not seen in the trace
    ops: tuple[EpilogueOp, ...]
    prologue: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    why_not: tuple[str, ...] = ()
    confidence: str = "code"
    order: float = 0.0  # launch time, to sort GEMMs in the order they ran
    opaque: bool = False  # trace-only: the GEMM kernel's name cannot say what it fused
    kind: str = "gemm"
    batch: int | None = None
    source_nodes: tuple[str, ...] = ()  # Dynamo source nodes (compiled) for the module path
    module: str = ""  # module path (eager: the enclosing kernelscope.module range)
    source: str = ""
    graph: int = 0  # index of the compiled graph (output-code module) it belongs to
    op_kernels: tuple[tuple[str, tuple[str, ...]], ...] = ()  # unfused op -> kernels it ran in


def _verdict_of(f: _Found) -> str:
    if f.opaque and not any(o.fused for o in f.ops):
        # Nothing after it and a name that lists no ops: it may or may not have fused something.
        return Verdict.UNKNOWN.value if not f.ops else _verdict(f.ops)
    return _verdict(f.ops)


def short_kernel_name(name: str, limit: int = 90) -> str:
    """A readable name for text: C++ kernel names run to thousands of characters of template arguments."""
    n = name.removeprefix("void ")
    if len(n) <= limit:
        return n
    depth = 0
    for i, ch in enumerate(n):  # drop the parameter list (the first "(" outside template brackets)
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            n = n[:i]
            break
    if len(n) <= limit:
        return n
    head, _, rest = n.partition("<")
    m = re.search(r"\w*(?:CUDAKernelImpl|Functor|launch_\w+)", rest) or re.search(r"[A-Za-z_]\w+", rest)
    inner = m.group(0) if m else ""
    if inner in (
        "int",
        "float",
        "double",
        "long",
        "bool",
        "char",
        "unsigned",
        "half",
        "__half",
        "__nv_bfloat16",
    ):
        inner = ""
    text = f"{head}<{inner}...>" if inner else f"{head}<...>"
    return text if len(text) <= limit + 20 else text[: limit + 17] + "..."


def _verdict(ops: Sequence[EpilogueOp]) -> str:
    if not ops:
        return Verdict.NONE.value
    fused = sum(1 for o in ops if o.fused)
    if fused == len(ops):
        return Verdict.FUSED.value
    return Verdict.PARTIAL.value if fused else Verdict.UNFUSED.value


# ------------------------------------------------------------------------------------------------------------
# Trace helpers


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
    cpu_by_key: dict[tuple[str, float], CpuEvent] = field(default_factory=dict)
    regions: tuple[CpuEvent, ...] = ()
    modules: TraceModules | None = None

    @staticmethod
    def build(trace: Trace, ka: KernelAnalysis) -> _TraceIndex:
        idx = _TraceIndex(trace, ka)
        idx.modules = module_index(trace.cpu)
        for e in trace.cpu:
            if e.external_id is not None and e.cat == "cpu_op":
                # External ids are unique per op; keep the first (outermost) if a tool wrote duplicates.
                idx.by_ext.setdefault(e.external_id, e)
            idx.cpu_by_key.setdefault((e.name, e.ts), e)
        idx.regions = tuple(sorted((e for e in trace.cpu if _GRAPH_CALL.match(e.name)), key=lambda e: e.ts))
        return idx

    def window(self, it: int) -> tuple[float, float]:
        if self.ka.windows and it < len(self.ka.windows):
            return self.ka.windows[it]
        inst = self.ka.iteration(it)
        if not inst:
            return (0.0, -1.0)
        return (min(_when(k) for k in inst), max(k.ts + k.dur for k in inst) + 1.0)

    def regions_in(self, it: int) -> list[CpuEvent]:
        lo, hi = self.window(it)
        return [r for r in self.regions if lo <= r.ts < hi]

    def module_of(self, e: CpuEvent) -> str:
        return (self.modules.of(e) or "") if self.modules is not None and self.modules.ranges else ""

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
        joins_gemm = "splitKreduce" in k.name and out and out[-1].gemm_kernels
        if out and (key == key_prev or joins_gemm):
            g = out[-1]
            out[-1] = _Group(g.op, g.kernels + (k,))
        else:
            out.append(_Group(op, (k,)))
            key_prev = key
    return out


def _in_region(k: KernelInstance, r: CpuEvent) -> bool:
    return r.ts <= _when(k) < r.end


# ------------------------------------------------------------------------------------------------------------
# Labels


def _eager_label(name: str, concrete: Sequence[str] | None = None) -> str:
    base = name.split("::")[-1]
    if base.endswith("_") and not base.startswith("_"):
        base = base[:-1]
    if base in CAST_OPS:
        return "cast"
    if base == "gelu" and concrete and any(str(c).strip("'\"") == "tanh" for c in concrete):
        return "gelu-tanh"
    if base in ("clamp_min",):
        return "relu" if concrete and len(concrete) > 1 and str(concrete[1]) in ("0", "0.0") else "clamp_min"
    if base == "threshold":
        return "relu"
    return base


_ATEN_KERNEL_LABELS = (
    (re.compile(r"Gelu", re.IGNORECASE), "gelu"),
    (re.compile(r"silu", re.IGNORECASE), "silu"),
    (re.compile(r"sigmoid", re.IGNORECASE), "sigmoid"),
    (re.compile(r"mish", re.IGNORECASE), "mish"),
    (re.compile(r"hardtanh", re.IGNORECASE), "hardtanh"),
    (re.compile(r"leaky_relu", re.IGNORECASE), "leaky_relu"),
    (re.compile(r"tanh", re.IGNORECASE), "tanh"),
    (re.compile(r"clamp|threshold", re.IGNORECASE), "clamp"),
    (re.compile(r"Add|add_kernel", re.IGNORECASE), "add"),
    (re.compile(r"Mul", re.IGNORECASE), "mul"),
    (re.compile(r"Div", re.IGNORECASE), "div"),
    (re.compile(r"copy", re.IGNORECASE), "copy"),
)


def _kernel_name_labels(name: str, *, in_gemm: bool) -> list[str]:
    """Op labels from a kernel's name alone (trace-only): Inductor names list origins; ATen names the functor.
    """
    tokens = name_tokens(name)
    if tokens:
        out = []
        for t in tokens:
            if t in GEMM_OPS:
                if t in BIAS_OPS:
                    out.append("bias")
                continue
            if t in VIEW_OPS:
                continue
            out.append("cast" if t in CAST_OPS else t)
        return list(dict.fromkeys(out))
    if in_gemm:
        return []
    for rx, label in _ATEN_KERNEL_LABELS:
        if rx.search(name):
            return [label]
    return ["pointwise"]


def _signature_label(nodes: Sequence[FxNode]) -> str | None:
    ops = [n.aten_op for n in nodes]
    args = " ".join(n.args for n in nodes)
    if "erf" in ops:
        return "gelu"
    if "tanh" in ops and ("0.044715" in args or "0.7978845608" in args):
        return "gelu-tanh"
    if "sigmoid" in ops and "mul" in ops:
        return "silu"
    # sigmoid decomposed as 1 / (1 + exp(-x)); times x it is SiLU
    if "exp" in ops and "neg" in ops and ("div" in ops or "reciprocal" in ops):
        # x / (1 + exp(-x)) is SiLU; 1 / (1 + exp(-x)) is the sigmoid
        divs = [n for n in nodes if n.aten_op == "div"]
        numerator_is_x = any(n.args.strip().startswith("%") for n in divs)
        return "silu" if numerator_is_x or "mul" in ops else "sigmoid"
    if "sigmoid" in ops:
        return "sigmoid"
    if "tanh" in ops and ("log1p" in ops or "softplus" in ops or "exp" in ops):
        return "mish"
    if "clamp_min" in ops and "clamp_max" in ops:
        return "hardtanh"
    if "where" in ops and "gt" in ops and "mul" in ops:
        return "leaky_relu"
    return None


def _label_groups(kd: KernelDef, groups: list[list[FxNode]], gemm_sources: set[str]) -> list[str | None]:
    """Name each group of FX nodes (nodes of one source op in one kernel) as the user-level op it came from.
    """
    candidates = [o for o in kd.origin_ops if o not in GEMM_OPS and o not in VIEW_OPS]
    labels: list[str | None] = []
    for nodes in groups:
        ops = [n.aten_op for n in nodes if n.aten_op not in VIEW_OPS]
        if not ops:
            labels.append(None)
            continue
        compute = [o for o in ops if o not in CAST_OPS]
        if not compute:
            labels.append("cast")
            continue
        src = kd.source_of(nodes[0].name)
        if src is not None and src in gemm_sources and set(compute) <= {"add"}:
            labels.append("bias")  # addmm decomposed into mm + add (Inductor's unfuse-bias pass)
        elif src is not None and src in candidates:
            labels.append(src)
        elif (sig := _signature_label(nodes)) is not None:
            labels.append(sig)
        elif len(set(compute)) == 1:
            labels.append(compute[0])
        else:
            labels.append("")  # decided below from the origins nobody claimed
    claimed = {lab for lab in labels if lab}
    left = [c for c in dict.fromkeys(candidates) if c not in claimed]
    for i, lab in enumerate(labels):
        if lab == "":
            compute = [n.aten_op for n in groups[i] if n.aten_op not in VIEW_OPS | CAST_OPS]
            labels[i] = left[0] if len(left) == 1 else "+".join(dict.fromkeys(compute))
    for i, lab in enumerate(labels):
        if lab == "gelu" and any(n.aten_op == "tanh" for n in groups[i]):
            labels[i] = "gelu-tanh"
    return labels


# ------------------------------------------------------------------------------------------------------------
# Code: GEMMs and their epilogue chains (static, per module)


@dataclass(frozen=True, slots=True)
class _ChainOp:
    label: str
    launch: int  # launch index where it runs
    code_kernel: str  # code name of that kernel (or the extern callee)
    fused: bool
    evidence: str
    nodes: tuple[str, ...] = ()  # the FX nodes it stands for, when the code has a graph fragment


@dataclass(frozen=True, slots=True)
class _CodeGemm:
    launch: Launch
    op: str
    node: str | None  # FX node name of the GEMM, when known
    template: KernelDef | None  # the kernel when the GEMM is a template (Triton, NVGEMM, CUTLASS, C++)
    m: int | None
    n: int | None
    k: int | None
    dtype: str | None
    chain: tuple[_ChainOp, ...]
    prologue: tuple[str, ...]
    # "" (no bias operand) | "template" (in the template) | "extern" (decided from the trace) | "none"
    bias: str
    evidence: tuple[str, ...]
    chain_launches: tuple[int, ...]


def _is_gemm_node(n: FxNode) -> bool:
    return not n.is_placeholder and n.aten_op in GEMM_OPS


def _mnk_from_node(kd: KernelDef, node: FxNode) -> tuple[int | None, int | None, int | None]:
    ins = [kd.node(i) for i in node.inputs]
    mats = [x for x in ins if x is not None and x.shape is not None and len(x.shape) >= 2]
    if node.aten_op in BIAS_OPS and len(ins) == 3 and ins[0] is not None and ins[0] in mats:
        mats = [x for x in mats if x is not ins[0]]
    a = mats[0] if mats else None
    out = node.shape
    m = _int(out[-2]) if out and len(out) >= 2 else (_int(a.shape[-2]) if a else None)
    n = _int(out[-1]) if out else None
    k = _int(a.shape[-1]) if a else None
    return m, n, k


def _int(v: object) -> int | None:
    return v if isinstance(v, int) else None


def _extern_mnk(code: OutputCode, launch: Launch) -> tuple[int | None, int | None, int | None, str | None]:
    # Shapes of the positional arguments: a reinterpret_tensor(...) argument carries its own (the transposed
    # weight).
    pos_shapes: list[tuple[int | str, ...] | None] = []
    for a in launch.args:
        m = re.match(r"reinterpret_tensor\((\w+), \(([^)]*)\)", a)
        if m:
            dims = [x.strip() for x in m.group(2).split(",") if x.strip()]
            pos_shapes.append(tuple(int(x) if x.isdigit() else x for x in dims))
            continue
        b = code.buffer(a.strip()) if re.match(r"^\w+$", a.strip()) else None
        pos_shapes.append(b.shape if b else None)
    op = launch.op or ""
    mats = pos_shapes[1:3] if op in BIAS_OPS and len(pos_shapes) >= 3 else pos_shapes[:2]
    out_name = launch.writes[0] if launch.writes else None
    out_buf = code.buffer(out_name) if out_name else None
    a = mats[0] if mats else None
    b = mats[1] if len(mats) > 1 else None
    m = _int(a[-2]) if a and len(a) >= 2 else None
    k = _int(a[-1]) if a else None
    n = None
    if out_buf and out_buf.shape:
        n = _int(out_buf.shape[-1])
    elif b and len(b) >= 2:
        n = _int(b[-1])
    if op == "_mkl_linear" and len(launch.args) >= 3:
        w = code.buffer(launch.args[2].strip())
        if w and w.shape and len(w.shape) == 2:
            n = _int(w.shape[0])
    dtype = out_buf.dtype if out_buf else None
    return m, n, k, dtype


def _norm_op(op: str) -> str:
    return {"bias_addmm": "addmm"}.get(op, op)


def _code_gemms(code: OutputCode) -> list[_CodeGemm]:
    """Every GEMM launch of a module with its epilogue chain, from the code's dataflow."""
    produced: set[str] = {n.name for kd in code.kernels for n in kd.computed_here}
    inputs = set(code.graph_inputs) | set(code.constants)
    gemm_sources: set[str] = set()
    for kd in code.kernels:
        for n in kd.computed_here:
            if _is_gemm_node(n):
                src = kd.source_of(n.name)
                if src:
                    gemm_sources.add(src)
    out: list[_CodeGemm] = []
    claimed: set[str] = set()  # FX names already resolved as an earlier extern GEMM's output
    for launch in code.launches:
        if launch.kind == "kernel":
            kd = code.kernel(launch.name)
            if kd is None:
                continue
            nodes = [n for n in kd.computed_here if _is_gemm_node(n)]
            if nodes:
                for node in nodes:
                    out.append(_chain_for(code, launch, kd, node, produced, inputs, gemm_sources, claimed))
            elif KernelKind(kd.kind) in TEMPLATE_KINDS and not kd.fragment:
                gemm_tokens = [t for t in kd.name_ops if t in GEMM_OPS]
                if gemm_tokens or kd.kind in (
                    KernelKind.CPP_GEMM_TEMPLATE.value,
                    KernelKind.NV_UNIVERSAL_GEMM.value,
                    KernelKind.CUTLASS_CPP.value,
                ):
                    out.append(_chain_for(code, launch, kd, None, produced, inputs, gemm_sources, claimed))
        elif launch.op in GEMM_OPS:
            out.append(_chain_for(code, launch, None, None, produced, inputs, gemm_sources, claimed))
    return _latest_gemm_claims(out)


def _op_keys(c: _ChainOp) -> tuple[object, ...]:
    return c.nodes if c.nodes else ((c.launch, c.label),)


def _latest_gemm_claims(gemms: list[_CodeGemm]) -> list[_CodeGemm]:
    """An op that reads two GEMMs' results (a residual add after the second GEMM, SwiGLU's mul) is in the
    epilogue
    of the later one: only a GEMM that has already run can take it. Drop it from the earlier GEMM's chain."""
    owner: dict[object, int] = {}
    for g in gemms:
        for c in g.chain:
            for key in _op_keys(c):
                owner[key] = max(owner.get(key, -1), g.launch.index)
    out = []
    for g in gemms:
        keep = [c for c in g.chain if all(owner[key] == g.launch.index for key in _op_keys(c))]
        if len(keep) == len(g.chain):
            out.append(g)
            continue
        dropped = [c for c in g.chain if c not in keep]
        note = (
            f"[dataflow] {', '.join(c.label for c in dropped)} in "
            f"{', '.join(dict.fromkeys(c.code_kernel for c in dropped))}"
            " also read(s) a later GEMM's result: counted in that GEMM's epilogue"
        )
        out.append(replace(g, chain=tuple(keep), evidence=g.evidence + (note,)))
    return out


def _chain_for(
    code: OutputCode,
    launch: Launch,
    kd: KernelDef | None,
    node: FxNode | None,
    produced: set[str],
    inputs: set[str],
    gemm_sources: set[str],
    claimed: set[str],
) -> _CodeGemm:
    evidence: list[str] = []
    chain: list[_ChainOp] = []
    prologue: list[str] = []
    where = code.where
    gemm_name = node.name if node is not None else None
    if node is not None and kd is not None:
        op = node.aten_op
        m, n, k = _mnk_from_node(kd, node)
        dtype = node.dtype
        evidence.append(
            f"[code-gemm] %{node.name} = {op}({', '.join('%' + i for i in node.inputs)}) is computed inside "
            f"{kd.name} ({kd.kind}, {where(node.line)})"
        )
        prologue = _prologue(kd, node, gemm_sources)
        if prologue:
            evidence.append(
                f"[prologue] {kd.name} also computes {', '.join(prologue)} on the GEMM's inputs (prologue "
                "fusion): "
                "not epilogue"
            )
        bias = "template" if op in BIAS_OPS else ""
    elif kd is not None:  # a template without a graph fragment (Inductor's C++ GEMM template)
        tokens = kd.name_ops
        op = next((t for t in tokens if t in GEMM_OPS), "mm")
        m = _int_or_none(kd.get("m"))
        n = _int_or_none(kd.get("n"))
        k = _int_or_none(kd.get("k"))
        dtype = kd.get("dtype")
        evidence.append(
            f"[code-gemm] {kd.name} ({kd.kind}, {where(kd.line)}) is a GEMM template"
            + (f" recorded in the trace as {', '.join(kd.profiler_names)}" if kd.profiler_names else "")
            + "; it has no graph fragment, so its ops are read from its name (Inductor's sorted original "
            "ATen ops)"
        )
        # The C++ template adds a bias in its epilogue, reading it as an extra input (in_ptr*) beside X and W.
        bias = (
            "template"
            if (op in BIAS_OPS and kd.get("epilogue_code") != "False" and kd.get("epilogue_inputs") != "0")
            else ""
        )
    else:
        # A library op (mkl._mkl_linear) stands for the ATen GEMM named in the wrapper comment's origins.
        origin_gemms = [o.split(".")[-1] for o in launch.origins if o.split(".")[-1] in GEMM_OPS]
        op = _norm_op(launch.op or "mm")
        if op not in ("mm", "addmm", "bmm", "baddbmm") and origin_gemms:
            op = origin_gemms[0]
        m, n, k, dtype = _extern_mnk(code, launch)
        evidence.append(
            f"[extern-gemm] {launch.name} ({where(launch.line)}) calls a library GEMM: it takes no Inductor "
            "epilogue"
        )
        bias = "extern" if launch.op in BIAS_OPS else ""
        if launch.op == "_mkl_linear":
            bias = "none" if len(launch.args) > 3 and launch.args[3].strip() == "None" else "extern"
        if launch.op == "_linear_pointwise":
            bias = "none" if len(launch.args) > 2 and launch.args[2].strip() == "None" else "extern"
    if bias == "template":
        chain.append(
            _ChainOp(
                "bias",
                launch.index,
                launch.name,
                True,
                f"[template-epilogue] {op}'s bias is added inside {launch.name} "
                f"({where(node.line if node is not None else launch.line)})",
            )
        )
    if launch.op == "_linear_pointwise":
        attrs = [a for a in launch.literals if a and a != "none"]
        for a in attrs[:1]:
            chain.append(
                _ChainOp(
                    a,
                    launch.index,
                    launch.name,
                    True,
                    f"[onednn-post-op] {launch.name} applies '{a}' as a oneDNN post-op "
                    f"({where(launch.line)})",
                )
            )

    # Fused ops: nodes inside the GEMM's own kernel that depend on the GEMM node.
    live: set[str] = set()
    tainted: set[str] = set()
    seen: set[str] = set()  # FX nodes already placed: a node recomputed in a later kernel counts once
    if kd is not None and node is not None:
        live.add(node.name)
        deps, stops = _dependents(kd, live, tainted, after=node)
        chain += _chain_ops(kd, deps, launch, True, gemm_sources, code)
        live |= {d.name for d in deps}
        seen |= {d.name for d in deps}
        evidence += stops
    elif kd is not None:
        labels, dropped = _name_labels(kd, in_reduction=False)
        if kd.get("epilogue_code") == "False":
            if labels or dropped:
                evidence.append(
                    f"[name-origins] {kd.name}'s name lists {', '.join(labels + dropped)}, but the template "
                    "has no "
                    "epilogue code after its micro-GEMM: origins, not ops it runs"
                )
        else:
            for label in labels:
                if label == "bias":
                    continue  # decided below from the template's inputs
                chain.append(
                    _ChainOp(
                        label,
                        launch.index,
                        launch.name,
                        True,
                        f"[name-origins] {kd.name} ({where(kd.line)}) lists '{label}' in its name and "
                        "its epilogue code (after the micro-GEMM) computes it before storing Y",
                    )
                )
            for d in dropped:
                evidence.append(
                    f"[name-origins] {kd.name}'s name lists '{d}' but its code has no {d}: not run there"
                )

    # Unfused ops: later launches that read the GEMM's result (buffers) or its FX values (placeholders).
    chain_launches = {launch.index}
    last_writer: dict[str, int] = {}
    for L in code.launches:
        if L.index > launch.index:
            reads_chain = any(last_writer.get(code.storage(r)) in chain_launches for r in L.reads)
            ckd = code.kernel(L.name) if L.kind == "kernel" else None
            if ckd is not None and ckd.fragment:
                if gemm_name is None and reads_chain:
                    names = _resolve_extern_name(ckd, launch, produced, inputs, claimed)
                    if names:
                        gemm_name = names[0]
                        live.update(names)
                        claimed.update(names)
                        node = ckd.node(gemm_name)
                        at = f" ({where(node.line)})" if node is not None else ""
                        bufs = [r for r in L.reads if last_writer.get(code.storage(r)) in chain_launches]
                        evidence.append(
                            f"[dataflow] the output of {launch.name} is %{gemm_name} in {ckd.name}'s graph "
                            "fragment"
                            f"{at}, read through buffer {', '.join(bufs)}"
                        )
                if any(_is_gemm_node(n) for n in ckd.computed_here):
                    # The next GEMM's kernel: what it computes from our result is its prologue, reported
                    # there.
                    if reads_chain or set(_placeholder_names(ckd)) & live:
                        evidence.append(
                            f"[dataflow] chain stops at {ckd.name} ({where(L.line)}): the next GEMM"
                        )
                    continue
                deps, stops = _dependents(ckd, live, tainted)
                evidence += stops
                live |= {d.name for d in deps}
                fresh = [d for d in deps if d.name not in seen]
                if len(fresh) < len(deps):
                    again = sorted({d.name for d in deps} & seen)
                    evidence.append(f"[dataflow] {ckd.name} recomputes %{', %'.join(again)}: counted once")
                seen |= {d.name for d in fresh}
                if fresh:
                    chain += _chain_ops(ckd, fresh, L, False, gemm_sources, code)
                if deps:
                    chain_launches.add(L.index)
            elif reads_chain and ckd is not None:
                if KernelKind(ckd.kind) in TEMPLATE_KINDS:
                    evidence.append(f"[dataflow] chain stops at {ckd.name} ({where(L.line)}): the next GEMM")
                else:
                    reductions = [t for t in ckd.name_ops if t in REDUCTION_OPS]
                    labels, dropped = _name_labels(ckd, in_reduction=bool(reductions))
                    read = [r for r in L.reads if last_writer.get(code.storage(r)) in chain_launches]
                    for label in labels:
                        chain.append(
                            _ChainOp(
                                label,
                                L.index,
                                ckd.name,
                                False,
                                f"[dataflow] {ckd.name} ({where(L.line)}) reads the GEMM result "
                                f"({', '.join(read)}) in a "
                                f"separate kernel; '{label}' from its name (no graph fragment for "
                                f"{ckd.kind})",
                            )
                        )
                    if dropped:
                        evidence.append(
                            f"[name-origins] {ckd.name}'s name also lists {', '.join(dropped)}: "
                            + ("part of its reduction, or " if reductions else "")
                            + "not found in its code"
                        )
                    if reductions:
                        evidence.append(
                            f"[dataflow] chain stops in {ckd.name}: reduction {', '.join(reductions)}"
                        )
                    else:
                        chain_launches.add(L.index)
            elif reads_chain and L.kind == "extern":
                if L.op in GEMM_OPS:
                    evidence.append(f"[dataflow] chain stops at {L.name} ({where(L.line)}): the next GEMM")
                elif L.op is not None and L.op not in VIEW_OPS and L.op not in REDUCTION_OPS:
                    chain.append(
                        _ChainOp(
                            _eager_label(L.op),
                            L.index,
                            L.name,
                            False,
                            f"[dataflow] {L.name} ({where(L.line)}) reads the GEMM result",
                        )
                    )
                    chain_launches.add(L.index)
        for w in L.writes:
            last_writer[code.storage(w)] = L.index
    outputs = {code.storage(o) for o in code.outputs}
    final = [i for i in chain_launches if any(code.storage(w) in outputs for w in code.launches[i].writes)]
    if final:
        evidence.append(f"[dataflow] the chain ends at the graph output (return {', '.join(code.outputs)})")
    return _CodeGemm(
        launch=launch,
        op=op,
        node=gemm_name,
        template=kd,
        m=m,
        n=n,
        k=k,
        dtype=dtype,
        chain=tuple(chain),
        prologue=tuple(prologue),
        bias=bias,
        evidence=tuple(evidence),
        chain_launches=tuple(sorted(chain_launches)),
    )


# In a kernel that also reduces (softmax, layer norm), its name's pointwise origins are mostly the reduction's
# own
# decomposition (x - max, abs/eq/ne NaN checks); only these can be an epilogue before the reduction.
_BEFORE_REDUCTION = frozenset(
    {"add", "mul", "div", "addmm", "bias_addmm", "convert_element_type", "_to_copy"}
)


def _name_labels(kd: KernelDef, *, in_reduction: bool) -> tuple[list[str], list[str]]:
    """(labels, dropped tokens) of a fragment-less kernel: read from its name, checked on its code."""
    code_ops = kd.get("code_ops")
    verified = set(code_ops.split(",")) if code_ops else set()
    labels: list[str] = []
    dropped: list[str] = []
    for t in kd.name_ops:
        if t in VIEW_OPS or t in REDUCTION_OPS or (t in GEMM_OPS and t not in BIAS_OPS):
            continue
        if in_reduction and t not in _BEFORE_REDUCTION:
            dropped.append(t)
            continue
        if code_ops is not None and t in CPP_OP_SIGNATURES and t not in verified:
            dropped.append(t)
            continue
        labels.append("bias" if t in BIAS_OPS else "cast" if t in CAST_OPS else t)
    labels = list(dict.fromkeys(labels))
    if "bias" in labels:  # the bias add comes straight after the GEMM, whatever the name's sort order says
        labels.remove("bias")
        labels.insert(0, "bias")
    return labels, dropped


def _int_or_none(v: str | None) -> int | None:
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def _placeholder_names(kd: KernelDef) -> list[str]:
    return [p.name for p in kd.placeholders]


def _resolve_extern_name(
    kd: KernelDef, launch: Launch, produced: set[str], inputs: set[str], claimed: set[str]
) -> list[str]:
    """The names an extern GEMM's output has in a consumer's graph fragment: values no kernel computes.

    Usually a PlaceHolder named after the FX node (``%addmm``); some versions name the placeholder after the
    buffer (``%buf1``) while the nodes still read the FX name (``%mm_1``), which then appears only as an
    input. When a kernel reads several extern results (a residual add of two GEMMs), the one read by nodes of
    the extern call's own source op (``linear_3 => view_9`` reading ``%addmm_3``) is it; names an earlier
    extern took are not.
    """
    defined = {n.name for n in kd.fragment}
    dangling = [i for n in kd.computed_here for i in n.inputs if i not in defined]
    cands = list(dict.fromkeys([p.name for p in kd.placeholders] + dangling))
    cands = [c for c in cands if c not in produced and c not in inputs and c not in claimed]
    if launch.source_nodes:
        own = {
            i for n in kd.computed_here if kd.source_of(n.name) in launch.source_nodes for i in n.inputs
        } & set(cands)
        if len(own) == 1:
            return list(own)
    op = _norm_op(launch.op or "")
    named = [c for c in cands if re.sub(r"_\d+$", "", c) == op or re.sub(r"_default(_\d+)?$", "", c) == op]
    if len(named) == 1:
        return named
    if len(cands) == 1:
        return cands
    bufs = [c for c in cands if re.fullmatch(r"buf\d+", c)]
    rest = [c for c in cands if c not in bufs and c in dangling]
    return bufs[:1] + rest if len(bufs) == 1 and len(rest) == 1 else []


def _reduction_sources(kd: KernelDef) -> set[str]:
    """Source ops whose nodes include a reduction (``layer_norm => ..., var_mean``): softmax, norms. Their
    elementwise parts (x - mean, exp(x - max)) are the reduction's, not an epilogue."""
    out = set()
    for src, nodes in kd.node_mapping:
        if any(re.sub(r"_\d+$", "", n) in REDUCTION_OPS for n in nodes):
            out.add(src)
    return out


def _dependents(kd: KernelDef, live: set[str], tainted: set[str], after: FxNode | None = None):
    """Nodes ``kd`` computes that depend on ``live`` names, stopping at GEMMs and reductions (which taint)."""
    deps: list[FxNode] = []
    stops: list[str] = []
    dep_names: set[str] = set()
    reducing = _reduction_sources(kd)
    started = after is None
    for n in kd.computed_here:
        if not started:
            started = n is after
            continue
        ins = set(n.inputs)
        if ins & tainted:
            tainted.add(n.name)
            continue
        if not ins & (live | dep_names):
            continue
        src = kd.source_of(n.name)
        if n.aten_op in GEMM_OPS or n.aten_op in REDUCTION_OPS or src in reducing:
            tainted.add(n.name)
            if n.aten_op in GEMM_OPS:
                stops.append(
                    f"[dataflow] chain stops at %{n.name} = {n.aten_op}(...) in {kd.name} (line {n.line}): "
                    "GEMM"
                )
            else:
                what = f"%{n.name} = {n.aten_op}(...)" if src not in reducing else f"{src} (%{n.name})"
                stops.append(f"[dataflow] chain stops at {what} in {kd.name} (line {n.line}): a reduction")
            continue
        deps.append(n)
        dep_names.add(n.name)
    return deps, list(dict.fromkeys(stops))


def _prologue(kd: KernelDef, gemm: FxNode, gemm_sources: set[str]) -> list[str]:
    """Ops inside the template that the GEMM node depends on (prologue fusion), views excluded."""
    wanted = set(gemm.inputs)
    nodes: list[FxNode] = []
    for n in reversed(kd.computed_here):
        if n is gemm:
            continue
        if n.name in wanted:
            wanted |= set(n.inputs)
            if n.aten_op not in VIEW_OPS:
                nodes.append(n)
    nodes.reverse()
    if not nodes:
        return []
    groups = _group_by_source(kd, nodes)
    return [lab for lab in _label_groups(kd, groups, set()) if lab]


def _group_by_source(kd: KernelDef, nodes: Sequence[FxNode]) -> list[list[FxNode]]:
    """Nodes of one source op (``gelu => add, erf, mul...``) form one user-level op; nodes with no source
    (backward
    graphs list none) form one group per kernel."""
    groups: dict[str, list[FxNode]] = {}
    for n in nodes:
        src = kd.source_of(n.name) or "#unmapped"
        groups.setdefault(src, []).append(n)
    return list(groups.values())


def _chain_ops(
    kd: KernelDef,
    deps: Sequence[FxNode],
    launch: Launch,
    fused: bool,
    gemm_sources: set[str],
    code: OutputCode,
) -> list[_ChainOp]:
    groups = _group_by_source(kd, deps)
    labels = _label_groups(kd, groups, gemm_sources)
    out: list[_ChainOp] = []
    for nodes, label in zip(groups, labels):
        if not label:
            continue
        first = nodes[0]
        text = f"%{first.name} = {first.aten_op}({', '.join('%' + i for i in first.inputs)})"
        if fused:
            ev = (
                f"[template-epilogue] {label}: {text} is computed inside {kd.name} ({code.where(first.line)})"
            )
        else:
            ev = f"[dataflow] {label}: {text} runs in {kd.name} ({code.where(first.line)}), a separate kernel"
        out.append(_ChainOp(label, launch.index, kd.name, fused, ev))
    return out


# ------------------------------------------------------------------------------------------------------------
# Code <-> trace alignment


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
    inst = [k for k in tx.ka.iteration(it)]
    out: list[_RegionMatch] = []
    if not regions:
        groups = _groups(inst, tx)
        best = max(range(len(codes)), key=lambda c: (len(_align(codes[c], groups)), -c))
        return [_RegionMatch(None, 0, best, tuple(groups), _align(codes[best], groups))]
    for ordinal, r in enumerate(regions):
        groups = _groups([k for k in inst if _in_region(k, r)], tx)
        if r.name in cache and not r.name.endswith("None ##"):
            best = cache[r.name]
        else:
            scores = [(len(_align(c, groups)), -abs(ci - ordinal), ci) for ci, c in enumerate(codes)]
            best = max(scores)[2]
            cache[r.name] = best
        out.append(_RegionMatch(r, ordinal, best, tuple(groups), _align(codes[best], groups)))
    return out


# ------------------------------------------------------------------------------------------------------------
# Bias of a library GEMM, from its kernels


def _library_bias(group: _Group | None, tx: _TraceIndex, callee: str) -> EpilogueOp:
    """Where a library GEMM's bias went: cuBLASLt's bias epilogue (``nvjet_*_bias_*``), or a copy of the
    broadcast bias into the output before a beta=1 GEMM. Either way the bias is fused into the GEMM call
    (vocab.FACTS["bias-in-call"]: one reading in every path); the evidence says how, and a copy kernel's time
    counts in the GEMM's time."""
    if group is None:
        return EpilogueOp(
            "bias",
            True,
            callee,
            f"[beta-accumulate] {callee} takes the bias as its C operand (beta=1); not seen in the trace",
        )
    gk = group.gemm_kernels
    with_bias = [k for k in gk if "bias" in k.name.lower()]
    if with_bias:
        return EpilogueOp(
            "bias",
            True,
            with_bias[0].name,
            "[cublaslt-bias-epilogue] the bias is applied in cuBLASLt's epilogue: "
            f"{short_kernel_name(with_bias[0].name)}",
        )
    if tx.ka.device == "cpu":
        # A CPU op's own kernels are its nested ops: aten::addmm -> aten::copy_ (the broadcast bias), then
        # BLAS.
        copies = [k for k in group.kernels if k.name in ("aten::copy_", "aten::expand_copy")]
    else:
        copies = [k for k in group.compute if k.category != "gemm"]
    if copies:
        return EpilogueOp(
            "bias",
            True,
            copies[0].name,
            f"[bias-in-call] {group.name} copies the broadcast bias into the output "
            f"({short_kernel_name(copies[0].name)}) and the GEMM accumulates onto it (beta=1): the bias is "
            "applied by the GEMM call",
        )
    return EpilogueOp(
        "bias",
        True,
        gk[0].name if gk else group.name,
        f"[beta-accumulate] {group.name} passes the bias to the GEMM as its C operand (beta=1); no "
        "separate kernel seen",
    )


def _library_activation(group: _Group | None, act: str | None, callee: str) -> EpilogueOp:
    """torch._addmm_activation: cuBLASLt applies GELU/ReLU in its epilogue, or ATen falls back to a separate
    kernel.
    """
    if group is None:
        label = act or "activation"
        return EpilogueOp(
            label,
            True,
            callee,
            f"[addmm-activation] {callee} applies {label} in the GEMM call; not seen in the trace",
        )
    gk = group.gemm_kernels
    if act is None:  # the use_gelu argument is not in this trace: cuBLASLt's kernel name says it
        named = [a for a in ("gelu", "relu") if any(a in k.name.lower() for k in gk)]
        act = named[0] if named else "activation"
    # the fallback's own kernel: the activation (aten::gelu_ on the CPU), not the bias copy before the GEMM
    extra = [k for k in group.compute if k.category == "pointwise" and not re.search(r"copy|fill", k.name)]
    if extra:
        return EpilogueOp(
            act,
            False,
            extra[0].name,
            f"[addmm-activation] {group.name} fell back to a separate {act} kernel "
            f"{short_kernel_name(extra[0].name)}",
        )
    shown = " + ".join(short_kernel_name(k.name) for k in gk) or group.name
    return EpilogueOp(
        act,
        True,
        gk[0].name if gk else group.name,
        f"[addmm-activation] {group.name} launched only {shown}: {act} applied in the cuBLASLt epilogue",
    )


def _ints(v: Any) -> list[int] | None:
    if isinstance(v, (list, tuple)) and all(isinstance(x, int) for x in v):
        return list(v)
    if isinstance(v, str):
        xs = re.findall(r"-?\d+", v)
        return [int(x) for x in xs] if xs else None
    return None


def conv_out_shape(e: CpuEvent) -> list[int] | None:
    """A convolution op's output shape from its recorded input sizes and its stride/padding/dilation."""
    dims = [d for d in (e.input_dims or ()) if isinstance(d, list)]
    if len(dims) < 2 or len(dims[0]) < 3 or len(dims[1]) < 3:
        return None
    x, w = dims[0], dims[1]
    ci = list(getattr(e, "concrete_inputs", None) or ())
    base = e.name.split("::")[-1]
    # (input, weight, bias, stride, padding, dilation, ...) for conv2d/convolution/_convolution;
    # (input, weight, padding, stride, dilation, ...) for cudnn_convolution / mkldnn_convolution (bias at 2)
    order = {"cudnn_convolution": (3, 2, 4), "mkldnn_convolution": (4, 3, 5)}.get(base, (3, 4, 5))
    nsp = len(x) - 2

    def arg(i: int, default: int) -> list[int]:
        v = _ints(ci[i]) if i < len(ci) else None
        if not v:
            return [default] * nsp
        return v * nsp if len(v) == 1 else v

    stride, pad, dil = arg(order[0], 1), arg(order[1], 0), arg(order[2], 1)
    if len(stride) != nsp or len(pad) != nsp or len(dil) != nsp:
        return None
    sp = [(x[2 + i] + 2 * pad[i] - dil[i] * (w[2 + i] - 1) - 1) // stride[i] + 1 for i in range(nsp)]
    return [x[0], w[0], *sp]


def _mnk_from_dims(name: str, dims: Sequence[Any] | None, e: CpuEvent | None = None
                   ) -> tuple[int | None, int | None, int | None]:
    if not dims:
        return None, None, None
    shapes = [d for d in dims if isinstance(d, list) and d and all(isinstance(x, int) for x in d)]
    base = name.split("::")[-1]
    if vocab.op_class(base) == "conv" or base == "_convolution_pointwise":
        out = conv_out_shape(e) if e is not None else None
        if out is None or len(shapes) < 2:
            return None, None, None
        w = shapes[1]
        k = 1
        for d in w[1:]:
            k *= d
        m = out[0]
        for d in out[2:]:
            m *= d
        return m, w[0], k
    if base == "_mkl_linear" and len(shapes) >= 3:  # (x, packed weight, original weight [N, K], bias?, batch)
        x, w = shapes[0], shapes[2]
        return x[-2], w[0], x[-1]
    if base in ("linear", "_linear_pointwise") and len(shapes) >= 2:
        x, w = shapes[0], shapes[1]
        return (x[-2] if len(x) >= 2 else 1), w[0], x[-1]
    if base in BIAS_OPS:
        shapes = shapes[1:] if len(shapes) >= 3 else shapes
    mats = [s for s in shapes if len(s) >= 2]
    if len(mats) >= 2:
        a, b = mats[0], mats[1]
        if a[-1] == b[-2]:
            return a[-2], b[-1], a[-1]
        if a[-1] == b[-1]:  # a template's B operand given as the untransposed weight [N, K]
            return a[-2], b[-2], a[-1]
    return None, None, None


def _dtype_from_types(types: Sequence[str] | None, name: str) -> str | None:
    if not types:
        return None
    ts = [t for t in types if t and t not in ("Scalar", "ScalarList", "")]
    if name.split("::")[-1] in BIAS_OPS and len(ts) >= 2:
        return torch_dtype_name(ts[1])
    return torch_dtype_name(ts[0]) if ts else None


# ------------------------------------------------------------------------------------------------------------
# Why not


def _why_not(
    backend: str,
    unfused: Sequence[EpilogueOp],
    cfg: _Config,
    log: LogFacts,
    *,
    op: str,
    m: int | None,
    n: int | None,
    k: int | None,
    code_gemm: _CodeGemm | None,
    log_ops: Sequence[str],
) -> tuple[list[str], list[str]]:
    """(why-not sentences, evidence) for a GEMM whose epilogue is not all fused."""
    why: list[str] = []
    ev: list[str] = []
    labels = ", ".join(dict.fromkeys(o.label for o in unfused))
    kernels = ", ".join(dict.fromkeys(short_kernel_name(o.kernel) for o in unfused if o.kernel))
    table = _autotune_for(log, op, m, n, k)
    backends = cfg.gemm_backends
    if backend in VENDOR_BACKENDS:
        lib = "MKL/oneDNN" if cfg.device == "cpu" else "cuBLAS/cuBLASLt"
        if not cfg.compiled and cfg.device == "cpu":
            why.append(
                f"eager: ATen runs {labels} as separate ops ({kernels}); the CPU GEMM call applies no "
                "epilogue"
            )
        elif not cfg.compiled:
            why.append(
                f"eager: ATen runs {labels} as separate kernels ({kernels}); a {lib} GEMM call only takes a "
                "bias "
                "(cuBLASLt epilogue) or, through torch._addmm_activation, a GELU/ReLU"
            )
        elif cfg.max_autotune is None:
            why.append(
                f"Inductor called the ATen/{lib} GEMM, which cannot take an Inductor epilogue; {labels} ran in "
                f"{kernels} (whether max-autotune was on is not known)"
            )
        elif not cfg.max_autotune:
            why.append(
                f"max-autotune is off, so Inductor called the ATen/{lib} GEMM, which cannot take an Inductor "
                "epilogue; "
                f"{labels} ran in {kernels}"
            )
        else:
            if table is not None:
                winner = table.choices[0]
                fusible = next((c for c in table.choices if _choice_backend(c[0]) != "ATen"), None)
                library = next((c for c in table.choices if _choice_backend(c[0]) == "ATen"), None)
                if _choice_backend(winner[0]) == "ATen":
                    text = f"the library GEMM {winner[0]} ({winner[1]:.4f} ms) won the autotune"
                    if fusible is not None:
                        text += f" over {fusible[0]} ({fusible[1]:.4f} ms)"
                else:
                    # identical layers share one table per selection key; this GEMM still ran the library call
                    text = (f"the library GEMM ran although the autotune table for these sizes ranked {winner[0]} "
                            f"({winner[1]:.4f} ms) first" + (f" and {library[0]} at {library[1]:.4f} ms"
                                                             if library else ""))
                why.append(
                    text + f"; a library GEMM cannot take an Inductor epilogue, so {labels} ran in {kernels}"
                )
                ev.append(
                    f"[autotune-log] AUTOTUNE {table.op}({table.sizes}) at log line {table.line}: "
                    + ", ".join(f"{c} {t:.4f} ms" for c, t in table.choices[:4])
                )
            elif backends is not None and not set(backends) & _FUSIBLE_BACKENDS:
                why.append(
                    f"max_autotune_gemm_backends={','.join(backends)} offers no template that can take an "
                    f"epilogue; {labels} ran in {kernels}"
                )
            else:
                why.append(
                    f"the autotuner picked the ATen/{lib} GEMM, which cannot take an Inductor epilogue; "
                    f"{labels} ran in {kernels}"
                )
            if cfg.device == "cpu" and not cfg.freezing and (backends is None or "CPP" in backends):
                why.append(
                    "Inductor's C++ GEMM template needs constant weights (freezing=True), which was off"
                )
    elif backend == patterns.NVGEMM:
        if cfg.capability is not None and cfg.capability[0] < 10:
            why.append(
                f"NVGEMM on {cfg.sm}: cutlass.operators has no epilogue-fusion-capable operator for this GPU "
                "(those "
                f"target SM100), so {labels} ran in {kernels}"
            )
        else:
            why.append(f"the NVGEMM kernel was generated without an epilogue; {labels} ran in {kernels}")
        if (
            code_gemm is not None
            and code_gemm.template is not None
            and code_gemm.template.get("has_epilogue")
        ):
            t = code_gemm.template
            ev.append(
                f"[code-gemm] {t.name} runs {t.get('operator')} with has_epilogue={t.get('has_epilogue')}"
            )
    elif backend == patterns.CUTLASS:
        why.append(
            "Inductor's CUTLASS C++ GEMM carries no epilogue (EVT epilogue fusion is off unless "
            f"CUTLASS_EPILOGUE_FUSION=1); {labels} ran in {kernels}"
        )
    else:
        inside = [o for o in unfused if o.in_gemm]
        if inside and len(inside) == len(unfused):
            why.append(f"{labels} ran in the next GEMM's template ({kernels}), which reads this GEMM's result "
                       "back from memory: fused there, not here")
        else:
            why.append(f"{labels} left in a separate kernel ({kernels})")
        if not log.present:
            why.append(
                "no fusion log was captured to say why (TORCH_LOGS=fusion shows Inductor's fusion decisions)"
            )
    if backends is not None and "NVGEMM" in backends and backend != patterns.NVGEMM:
        if log.nvgemm_failed_choices:
            arch = f"{cfg.sm}a".replace("sm", "sm_") if cfg.sm else "the GPU's arch"
            err = f": {log.nvgemm_error}" if log.nvgemm_error else ""
            why.append(
                f"every NVGEMM choice failed to compile in the autotune workers "
                f"({len(log.nvgemm_failed_choices)} choices{err}); set CUTE_DSL_ARCH={arch}"
            )
            ev.append(
                f"[nvgemm-log] {len(log.nvgemm_failed_choices)} NVUniversalGemmCaller choices failed"
                + (f" (log line {log.nvgemm_error_line}: {log.nvgemm_error})" if log.nvgemm_error else "")
            )
        elif op in BIAS_OPS and cfg.capability is not None and cfg.capability[0] < 10:
            why.append(
                f"NVGEMM offers no choice for {op} on {cfg.sm}: its bias needs an epilogue-capable "
                "operator, and cutlass.operators has those for SM100 only"
            )
    if backend == patterns.TRITON_TEMPLATE and table is not None:
        ev.append(
            f"[autotune-log] AUTOTUNE {table.op}({table.sizes}) at log line {table.line}: "
            + ", ".join(f"{c} {t:.4f} ms" for c, t in table.choices[:4])
        )
    reasons: list[str] = []
    for line in log_ops:
        if ": benchmark: " in line:
            slower = line.rsplit(": ", 1)[-1]
            if slower.startswith("inf"):
                # Inductor prints inf when no config of the fused kernel could run (e.g. out of shared memory)
                why.append(f"benchmark_epilogue_fusion rejected the fused template: none of its configs ran ({slower})")
            else:
                why.append(f"benchmark_epilogue_fusion judged the fused template slower ({slower})")
        else:
            reasons.append(line.split(": ", 1)[-1])  # "cannot fuse op15 with op16: no shared data"
        ev.append(f"[fusion-log] {line}")
    if reasons:
        why.append("Inductor's fusion log: " + "; ".join(dict.fromkeys(reasons)))
    return why, ev


def _choice_backend(name: str) -> str:
    n = name.lower()
    if n.startswith("triton") or "decompose_k" in n:
        return "Triton"
    if "cutlass" in n:
        return "CUTLASS"
    if "nv_universal" in n or "nvgemm" in n or "cutedsl" in n:
        return "NVGEMM"
    if n.startswith("cpp"):
        return "C++"
    return "ATen"


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


def _autotune_for(
    log: LogFacts, op: str, m: int | None, n: int | None, k: int | None
) -> AutotuneTable | None:
    for t in log.autotune:
        if table_matches(t.op, t.sizes, op, m, n, k):
            return t
    return None


def _fusion_log_lines(
    log: LogFacts, code: OutputCode, cg: _CodeGemm, unfused_launches: Sequence[int], single_graph: bool
) -> list[str]:
    """Fusion-log lines about this GEMM and the kernels its epilogue ran in (scheduler node opN writes bufN).
    """
    if not single_graph:
        return []

    def nums(launch_ids: Sequence[int]) -> set[str]:
        out: set[str] = set()
        for i in launch_ids:
            for w in code.launches[i].writes:
                # Scheduler node opN writes bufN: the buffer's own name (a reuse alias names the new buffer).
                out |= set(re.findall(r"^buf(\d+)$", w))
        return out

    g = nums([cg.launch.index])
    e = nums(unfused_launches)
    lines: list[str] = []
    said: set[tuple[str, str, str]] = set()  # each fusion round repeats the same verdicts
    for n1, n2, reason, ln in log.cannot_fuse:
        a = set(re.findall(r"op(\d+)", n1))
        b = set(re.findall(r"op(\d+)", n2))
        if a & g and b & e and (n1, n2, reason) not in said:
            said.add((n1, n2, reason))
            lines.append(f"log line {ln}: cannot fuse {n1} with {n2}: {reason}")
    for b1, b2, text, ln in log.benchmark:
        if {x[3:] for x in b1} & g and {x[3:] for x in b2} & e:
            lines.append(f"log line {ln}: benchmark: fusing {list(b1)} with {list(b2)}: {text}")
    return lines


# ------------------------------------------------------------------------------------------------------------
# The three paths


def _from_code(
    codes: Sequence[OutputCode],
    tx: _TraceIndex,
    cfg: _Config,
    log: LogFacts,
    it: int,
    static: list[list[_CodeGemm]],
    cache: dict[str, int],
) -> list[_Found]:
    matches = _match_regions(codes, tx, it, cache) if tx.ka.instances else []
    out: list[_Found] = []
    single_graph = len(codes) == 1 and log.graphs <= 1
    matched_codes = {rm.code_index for rm in matches if rm.aligned}
    for rm in matches:
        code = codes[rm.code_index]
        for cg in static[rm.code_index]:
            gi = rm.aligned.get(cg.launch.index)
            group = rm.groups[gi] if gi is not None else None
            out.append(_found_from_code(code, cg, group, rm, tx, cfg, log, single_graph))
    if not matched_codes and it == 0:
        # The trace shows none of the code's launches (or there is no trace data): report the code alone.
        for ci, code in enumerate(codes):
            rm = _RegionMatch(None, ci, ci, (), {})
            for cg in static[ci]:
                out.append(_found_from_code(code, cg, None, rm, tx, cfg, log, single_graph))
    return out


def _found_from_code(
    code: OutputCode,
    cg: _CodeGemm,
    group: _Group | None,
    rm: _RegionMatch,
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
        how = (
            "launch order"
            if group.op is None
            else (f"its CPU op {group.op.name} (External id {group.op.external_id})")
        )
        evidence.append(
            f"[launch-order] {cg.launch.name} ({code.where(cg.launch.line)}) ran as "
            f"{' + '.join(short_kernel_name(x) for x in kernels)} in {region}, "
            f"matched by {how}"
        )
        if any("splitKreduce" in k for k in kernels):
            evidence.append("[split-k] cublasLt::splitKreduce_kernel belongs to the GEMM launched before it")
        memsets = [k.name for k in group.kernels if k.is_memop]
        if memsets:
            evidence.append(f"[launch-order] the GEMM call also launched {', '.join(memsets)}")
        order = group.start
    else:
        kernels = (cg.launch.name,)
        time_us = None
        backend = _code_backend(cg, cfg)
        evidence.append(
            f"[launch-order] {cg.launch.name} was not found among the trace's launches in {region}"
        )
        order = float(cg.launch.index)
    ops: list[EpilogueOp] = []
    if cg.bias == "extern" and group is not None:
        how = _library_bias(group, tx, cg.launch.name)
        evidence.append(how.evidence)
    if cg.launch.op == "_addmm_activation":
        use_gelu = dict(cg.launch.kwargs).get("use_gelu")
        act = "gelu" if use_gelu == "True" else "relu"  # use_gelu defaults to False
        ops.append(_library_activation(group, act, cg.launch.name))
    trace_name: dict[int, str] = {}
    trace_inst: dict[int, tuple[tuple[str, float], ...]] = {}
    trace_time: dict[int, float] = {}
    for li, gi in rm.aligned.items():
        g = rm.groups[gi]
        names = [k.name for k in g.compute] or [g.name]
        trace_name[li] = names[0]
        trace_inst[li] = tuple((k.name, k.ts) for k in g.compute)
        trace_time[li] = sum(k.dur for k in g.compute)
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
    why: list[str] = []
    if unfused:
        unfused_launches = sorted({c.launch for c in cg.chain if not c.fused})
        log_lines = _fusion_log_lines(log, code, cg, unfused_launches, single_graph)
        why, more = _why_not(
            backend, unfused, cfg, log, op=cg.op, m=cg.m, n=cg.n, k=cg.k, code_gemm=cg, log_ops=log_lines
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
    )


def _code_backend(cg: _CodeGemm, cfg: _Config) -> str:
    if cg.template is None:
        if cfg.device == "cpu":
            return (
                patterns.CPU_BLAS
                if cg.launch.op in ("_mkl_linear", "_linear_pointwise")
                else patterns.CPU_ATEN
            )
        return patterns.CUBLASLT if cg.launch.op == "bias_addmm" else patterns.CUBLAS
    return {
        KernelKind.TRITON_TEMPLATE.value: patterns.TRITON_TEMPLATE,
        KernelKind.NV_UNIVERSAL_GEMM.value: patterns.NVGEMM,
        KernelKind.CUTEDSL.value: patterns.NVGEMM,
        KernelKind.CUTLASS_CPP.value: patterns.CUTLASS,
        KernelKind.CPP_GEMM_TEMPLATE.value: patterns.INDUCTOR_CPP_TEMPLATE,
    }.get(cg.template.kind, patterns.OTHER)


# --- eager --------------------------------------------------------------------------------------------------

_EAGER_GEMMS = frozenset(
    "aten::" + n
    for n in (
        "mm",
        "addmm",
        "bmm",
        "baddbmm",
        "_addmm_activation",
        "_scaled_mm",
        "_int_mm",
        "_grouped_mm",
        "_scaled_grouped_mm",
        "addmv",
        "mv",
    )
) | frozenset({"mkl::_mkl_linear", "mkldnn::_linear_pointwise"}) | frozenset(
    # convolutions are GEMM-class (implicit GEMMs); the innermost one of aten::conv2d -> convolution ->
    # _convolution -> cudnn_convolution / mkldnn_convolution is the op that launches the work
    "aten::" + n for n in ("convolution", "_convolution", "conv1d", "conv2d", "conv3d", "cudnn_convolution",
                           "mkldnn_convolution", "_nnpack_spatial_convolution", "_slow_conv2d_forward",
                           "slow_conv2d_forward", "thnn_conv2d", "miopen_convolution", "conv_transpose2d",
                           "cudnn_convolution_relu", "cudnn_convolution_add_relu")
) | frozenset({"mkldnn::_convolution_pointwise"})
_EAGER_ELEMENTWISE = frozenset(
    "aten::" + n
    for n in [
        "add",
        "add_",
        "sub",
        "sub_",
        "mul",
        "mul_",
        "div",
        "div_",
        "relu",
        "relu_",
        "gelu",
        "gelu_",
        "silu",
        "silu_",
        "sigmoid",
        "sigmoid_",
        "tanh",
        "tanh_",
        "hardtanh",
        "hardtanh_",
        "leaky_relu",
        "leaky_relu_",
        "mish",
        "mish_",
        "clamp",
        "clamp_",
        "clamp_min",
        "clamp_min_",
        "clamp_max",
        "clamp_max_",
        "elu",
        "elu_",
        "hardswish",
        "hardswish_",
        "hardsigmoid",
        "hardsigmoid_",
        "threshold",
        "threshold_",
        "_to_copy",
        "to",
        "type_as",
        "where",
        "maximum",
        "minimum",
        "pow",
        "exp",
        "softplus",
        "selu",
        "celu",
        "rsub",
        "neg",
        "abs",
        "square",
        "sqrt",
        "rsqrt",
        "addcmul",
        "erf",
    ]
)
_EAGER_VIEWS = frozenset("aten::" + n for n in VIEW_OPS) | frozenset(
    {"aten::dropout", "aten::feature_dropout"}
)


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


def _is_aten_level(name: str) -> bool:
    return "::" in name and not name.startswith("## ")


def _eager(tx: _TraceIndex, cfg: _Config, it: int, exclude: Sequence[CpuEvent] = ()) -> list[_Found]:
    found, covered = _eager_ops(tx, cfg, it, exclude)
    if exclude:
        return found
    # GEMM kernels no ATen op launched (cutlass.operators called directly, custom ops): read them as trace-
    # only.
    rest = [f for f in _trace_only(tx, cfg, it, skip=covered)]
    return found + rest


def _eager_ops(
    tx: _TraceIndex, cfg: _Config, it: int, exclude: Sequence[CpuEvent]
) -> tuple[list[_Found], set[tuple[str, float]]]:
    lo, hi = tx.window(it)
    events = [e for e in tx.trace.cpu if lo <= e.ts < hi]
    tree = _OpTree.build(events)
    inst = tx.ka.iteration(it)
    kernels_by_ext: dict[int, list[KernelInstance]] = defaultdict(list)
    kernels_by_key: dict[tuple[str, float], KernelInstance] = {}
    for k in inst:
        if k.external_id is not None:
            kernels_by_ext[k.external_id].append(k)
        kernels_by_key[(k.name, k.ts)] = k

    def kernels_of(indices: Sequence[int]) -> list[KernelInstance]:
        out: list[KernelInstance] = []
        for j in indices:
            e = tree.ops[j]
            if tx.ka.device == "cpu":
                kk = kernels_by_key.get((e.name, e.ts))
                if kk is not None:
                    out.append(kk)
            elif e.external_id is not None:
                out.extend(kernels_by_ext.get(e.external_id, []))
        return sorted(dict.fromkeys(out), key=lambda k: (_when(k), k.ts))

    def excluded(e: CpuEvent) -> bool:
        return any(r.ts <= e.ts < r.end for r in exclude)

    # Top-level ATen calls in time order, per thread: the sequence an epilogue is read from.
    calls: dict[object, list[int]] = defaultdict(list)
    for i, e in enumerate(tree.ops):
        if _is_aten_level(e.name) and (
            tree.parent[i] < 0 or not _is_aten_level(tree.ops[tree.parent[i]].name)
        ):
            calls[e.tid].append(i)
    for lst in calls.values():
        lst.sort(key=lambda i: tree.ops[i].ts)

    found: list[_Found] = []
    covered: set[tuple[str, float]] = set()
    for i, e in enumerate(tree.ops):
        if e.name not in _EAGER_GEMMS or excluded(e):
            continue
        sub = tree.subtree(i)
        if any(tree.ops[j].name in _EAGER_GEMMS for j in sub if j != i):
            continue  # an outer GEMM op whose work is done by an inner one
        ks = kernels_of(sub)
        gk = [k for k in ks if not k.is_memop and k.category == "gemm"]
        if tx.ka.device == "cpu" and not gk:
            gk = [k for k in ks if k.name == e.name] or ks[:1]
        if not gk and tx.ka.device != "cpu":
            continue  # a GEMM op that launched nothing (e.g. an empty tensor)
        covered |= {(kk.name, kk.ts) for kk in ks}
        base = e.name.split("::")[-1]
        m, n, k = _mnk_from_dims(e.name, e.input_dims, e)
        dtype = _dtype_from_types(e.input_types, e.name)
        backend = gk[0].backend if gk else patterns.classify(e.name, on_cpu=tx.ka.device == "cpu")[1]
        evidence = [
            f"[eager-op] {e.name} (External id {e.external_id}) launched "
            f"{' + '.join(short_kernel_name(k.name) for k in gk)}"
            if gk
            else f"[eager-op] {e.name}"
        ]
        if any("splitKreduce" in k.name for k in gk):
            evidence.append("[split-k] cublasLt::splitKreduce_kernel belongs to the GEMM launched before it")
        ops: list[EpilogueOp] = []
        group = _Group(e, tuple(ks))
        if base in BIAS_OPS:
            ops.append(_library_bias(group, tx, e.name))
        inner_after: list[int] = []
        if base == "_addmm_activation":
            act = None
            ci = getattr(e, "concrete_inputs", None)  # record_shapes' use_gelu, where trace.py reads it
            if ci and len(ci) > 5 and str(ci[5]).strip():
                act = "gelu" if str(ci[5]).lower() in ("true", "1") else "relu"
            ops.append(_library_activation(group, act, e.name))
        anchor = tree.anchor(i)
        # Ops after the GEMM inside the same ATen call (aten::linear -> matmul, then add_ for the bias).
        if anchor != i:
            # the outermost elementwise ops that start after the GEMM under a parent that started before it
            for j in tree.subtree(anchor):
                oj, parent = tree.ops[j], tree.parent[j]
                if (
                    oj.ts >= e.end
                    and oj.name in _EAGER_ELEMENTWISE
                    and parent >= 0
                    and tree.ops[parent].ts < e.end
                ):
                    inner_after.append(j)
        anchor_name = tree.ops[anchor].name
        for j in sorted(inner_after, key=lambda j: tree.ops[j].ts):
            oj = tree.ops[j]
            kj = [kk for kk in kernels_of(tree.subtree(j)) if not kk.is_memop]
            label = _eager_label(oj.name, getattr(oj, "concrete_inputs", None))
            if anchor_name == "aten::linear" and label == "add":
                label = "bias"
            kname = kj[0].name if kj else oj.name
            ops.append(
                EpilogueOp(
                    label,
                    False,
                    kname,
                    f"[eager-op] {oj.name} inside {anchor_name} after {e.name} ran "
                    f"{short_kernel_name(kname)}",
                    tuple((kk.name, kk.ts) for kk in kj),
                    sum(kk.dur for kk in kj) if kj else None,
                )
            )
        # Following top-level calls on the same thread that are elementwise on the GEMM's output shape.
        out_shape = _out_shape(tree.ops[anchor]) or _out_shape(e)
        if vocab.op_class(base) == "conv":
            out_shape = conv_out_shape(e) or conv_out_shape(tree.ops[anchor])
        seq = calls.get(e.tid, [])
        pos = seq.index(anchor) if anchor in seq else -1
        numel = _numel(out_shape) if out_shape else None
        for j in seq[pos + 1 :] if pos >= 0 else []:
            oj = tree.ops[j]
            if excluded(oj):
                break
            subj = tree.subtree(j)
            if any(tree.ops[x].name in _EAGER_GEMMS for x in subj):
                evidence.append(f"[eager-sequence] chain stops at {oj.name}: the next GEMM")
                break
            kj = [kk for kk in kernels_of(subj) if not kk.is_memop]
            cls = vocab.op_class(oj.name)
            ci = getattr(oj, "concrete_inputs", None)
            if oj.name.endswith("::batch_norm") and ci and len(ci) > 5 and str(ci[5]).lower() in ("true", "1"):
                cls = "boundary"  # training-mode batch norm computes its statistics: a reduction
            if cls == "boundary":
                # an op whose result only feeds this reduction (x.pow(2) before RMSNorm's mean) is the norm's
                while ops and not ops[-1].fused and ops[-1].label in ("pow", "square", "mul_self") and \
                        vocab.op_class(oj.name) != "pointwise":
                    dropped = ops.pop()
                    evidence.append(f"[eager-sequence] {dropped.label} only feeds {oj.name}: part of that "
                                    "reduction, not the epilogue")
                evidence.append(f"[eager-sequence] chain stops at {oj.name}: not pointwise (the epilogue ends at "
                                "a reduction, norm, pooling or attention)")
                break
            if cls == "view" or oj.name in _EAGER_VIEWS or (not kj and cls != "pointwise"):
                continue
            is_elem = cls == "pointwise" or (cls == "unknown" and kj and
                                             all(kk.category == "pointwise" for kk in kj))
            dims = [d for d in (oj.input_dims or ()) if isinstance(d, list) and d]
            shape_ok = numel is not None and any(_numel(d) == numel for d in dims)
            if not is_elem or not shape_ok:
                why = "not elementwise" if not is_elem else f"no input of the GEMM's output shape {out_shape}"
                evidence.append(f"[eager-sequence] chain stops at {oj.name}: {why}")
                break
            label = _eager_label(oj.name, getattr(oj, "concrete_inputs", None))
            kname = kj[0].name if kj else oj.name
            ops.append(
                EpilogueOp(
                    label,
                    False,
                    kname,
                    f"[eager-sequence] {oj.name} on {dims[0]} after {anchor_name} ran "
                    f"{short_kernel_name(kname)}",
                    tuple((kk.name, kk.ts) for kk in kj),
                    sum(kk.dur for kk in kj) if kj else None,
                )
            )
        why, more = _why_from_trace(backend, ops, cfg, op=base, m=m, n=n, k=k)
        evidence += more
        found.append(
            _Found(
                key=("eager", e.tid, len(found)),
                module=tx.module_of(e),
                kind="conv" if vocab.op_class(base) == "conv" else "gemm",
                op="convolution" if vocab.op_class(base) == "conv" else base,
                kernels=tuple(kk.name for kk in gk) or (e.name,),
                backend=backend,
                m=m,
                n=n,
                k=k,
                dtype=dtype,
                time_us=sum(kk.dur for kk in gk) if gk else e.dur,
                ops=tuple(ops),
                evidence=tuple(evidence),
                why_not=tuple(why),
                confidence="trace",
                order=_when(gk[0]) if gk else e.ts,
            )
        )
    return found, covered


def _why_from_trace(backend: str, ops: Sequence[Any], cfg: Any, *, op: str, m: int | None, n: int | None,
                    k: int | None) -> tuple[list[str], list[str]]:
    """(why-not, evidence) for a GEMM known from the trace alone (eager op tree or kernel sequence): no output
    code and no log facts to draw on."""
    unfused = [o for o in ops if not o.fused]
    if not unfused:
        return [], []
    why, more = _why_not(backend, unfused, cfg, LogFacts(), op=op, m=m, n=n, k=k, code_gemm=None, log_ops=())
    return list(why), list(more)


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


def _numel(shape: Sequence[Any]) -> int | None:
    total = 1
    for x in shape:
        if not isinstance(x, int):
            return None
        total *= x
    return total


# --- trace only ---------------------------------------------------------------------------------------------


def _trace_only(
    tx: _TraceIndex, cfg: _Config, it: int, skip: set[tuple[str, float]] | None = None
) -> list[_Found]:
    groups = _groups(tx.ka.iteration(it), tx)
    found: list[_Found] = []
    i = 0
    while i < len(groups):
        g = groups[i]
        gk = g.gemm_kernels
        if not gk or (skip and any((kk.name, kk.ts) in skip for kk in gk)):
            i += 1
            continue
        # A split-K reduce launched on its own belongs to the GEMM before it.
        while (
            i + 1 < len(groups)
            and groups[i + 1].compute
            and all("splitKreduce" in kk.name for kk in groups[i + 1].compute)
        ):
            i += 1
            gk = gk + groups[i].compute
        first = gk[0]
        evidence = [
            f"[trace-only] GEMM kernel(s) {' + '.join(short_kernel_name(k.name) for k in gk)} (no Inductor "
            "code: "
            "verdict read from kernel names and their order, which list origins, not dataflow)"
        ]
        if any("splitKreduce" in k.name for k in gk):
            evidence.append("[split-k] cublasLt::splitKreduce_kernel belongs to the GEMM launched before it")
        ops: list[EpilogueOp] = []
        op_name = g.op.name if g.op is not None else first.name
        base = op_name.split("::")[-1]
        if base in BIAS_OPS:
            ops.append(_library_bias(g, tx, op_name))
        for label in _kernel_name_labels(first.name, in_gemm=True):
            if label == "bias" and any(o.label == "bias" for o in ops):
                continue
            ops.append(
                EpilogueOp(
                    label,
                    True,
                    first.name,
                    f"[trace-only] '{label}' is in the GEMM kernel's name {first.name} (a name also "
                    "lists prologue ops)",
                )
            )
        if not ops and any("bias" in k.name.lower() for k in gk):
            ops.append(_library_bias(g, tx, op_name))
        dims_op = g.op
        m, n, k = (
            _mnk_from_dims(dims_op.name, dims_op.input_dims) if dims_op is not None else (None, None, None)
        )
        if m is None and dims_op is not None and dims_op.input_dims and first.name.startswith("triton_"):
            m, n, k = _mnk_template(dims_op.input_dims)
        cpp = _CPP_GEMM_NAME.search(first.name)
        if m is None and cpp:
            m, n, k = (int(x) for x in cpp.groups())
        gemm_tokens = [t for t in name_tokens(first.name) if t in GEMM_OPS]
        if base not in GEMM_OPS and gemm_tokens:
            base = _norm_op(gemm_tokens[0])
        opaque = first.backend in (
            patterns.INDUCTOR_CPP_TEMPLATE,
            patterns.NVGEMM,
            patterns.CUTLASS,
        ) and not name_tokens(first.name)
        dtype = _dtype_from_types(dims_op.input_types, dims_op.name) if dims_op is not None else None
        j = i + 1
        while j < len(groups):
            h = groups[j]
            comp = h.compute
            if not comp:
                j += 1
                continue
            if not all(kk.category == "pointwise" for kk in comp):
                evidence.append(f"[trace-only] chain stops at {comp[0].name} ({comp[0].category})")
                break
            for kk in comp:
                for label in _kernel_name_labels(kk.name, in_gemm=False):
                    ops.append(
                        EpilogueOp(
                            label,
                            False,
                            kk.name,
                            f"[trace-only] {short_kernel_name(kk.name)} runs after the GEMM as its own "
                            f"kernel ('{label}' from its name)",
                            ((kk.name, kk.ts),),
                            kk.dur,
                        )
                    )
            j += 1
        backend = first.backend
        why, more = _why_from_trace(backend, ops, cfg, op=base, m=m, n=n, k=k)
        evidence += more
        found.append(
            _Found(
                key=("trace", len(found)),
                op=base if base in GEMM_OPS else "",
                kernels=tuple(kk.name for kk in gk),
                backend=backend,
                m=m,
                n=n,
                k=k,
                dtype=dtype,
                time_us=sum(kk.dur for kk in gk),
                ops=tuple(ops),
                evidence=tuple(evidence),
                why_not=tuple(why),
                confidence="trace-only",
                order=g.start,
                opaque=opaque,
            )
        )
        i = j
    return found


def _mnk_template(dims: Sequence[Any]) -> tuple[int | None, int | None, int | None]:
    """M, N, K from a Triton template launch's Input Dims: (bias?, A[M,K], B[N,K] or [K,N], out[M,N])."""
    shapes = [d for d in dims if isinstance(d, list) and len(d) == 2 and all(isinstance(x, int) for x in d)]
    if len(shapes) >= 3:
        a, out = shapes[0], shapes[-1]
        return out[0], out[1], a[1]
    return None, None, None


# ------------------------------------------------------------------------------------------------------------
# Entry point


@dataclass(frozen=True, slots=True)
class GemmReport:
    """One mode's GEMM verdicts, their identical-layer groups and what the unfused epilogues cost."""

    gemms: tuple[GemmEpilogue, ...]
    summary: str
    groups: tuple[Any, ...] = ()
    cost: Any = None


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
) -> GemmReport:
    """Verdicts, groups of identical layers and the cost of unfused epilogues for one mode."""
    cfg = _Config.of(mode, mode_config, ka.device)
    log = parse_log(log_text)
    if cfg.max_autotune is None:
        # Not given: Triton kernels record it in their inductor_meta, and max-autotune prints AUTOTUNE tables.
        said = {k.get("max_autotune") for c in codes for k in c.kernels} - {None}
        known = True if ("True" in said or log.autotune) else False if said else None
        cfg = replace(cfg, max_autotune=known)
    tx = _TraceIndex.build(trace, ka)
    count = max(ka.iterations.count, 1)
    its = sample_iterations(count)
    codes = [c for c in codes if c.launches or c.kernels]
    compiled = cfg.compiled or bool(codes) or bool(tx.regions)
    per_iter: list[list[_Found]] = []
    if codes:
        static = [code_gemms(c) for c in codes]
        cache: dict[str, int] = {}
        for it in its:
            found = _from_code(codes, tx, cfg, log, it, static, cache)
            if tx.regions:  # graph breaks: GEMMs that ran eagerly between compiled regions
                found += _eager(tx, replace(cfg, compiled=False), it, exclude=tx.regions)
            per_iter.append(found)
    elif compiled:
        per_iter = [_trace_only(tx, cfg, it) for it in its]
    else:
        per_iter = [_eager(tx, cfg, it) for it in its]
    params = mode_config.get("param_names")
    modules = ModuleIndex.from_log(log_text, codes, params if isinstance(params, (list, tuple)) else None) \
        if codes else None
    gemms = _combine(per_iter, its, count, modules=modules)
    gemms, groups = group_gemms(gemms)
    inst, nbytes = unfused_instances(per_iter[0] if per_iter else [])
    # the share of the same iteration's kernel time (the instances are iteration 0's)
    it0 = sum(k.dur for k in ka.iteration(its[0] if its else 0) if not k.is_memop) if ka.instances else None
    cost = epilogue_cost(inst, total_time_us=it0 or ka.time_us_per_iter, kernels_per_iter=ka.kernels_per_iter,
                         bytes_per_iter=nbytes)
    return GemmReport(gemms, summarize(gemms), groups, cost)


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
    out: list[GemmEpilogue] = []
    for i, f in enumerate(first):
        times = [f.time_us] if f.time_us is not None else []
        differs: list[str] = []
        for it, found in zip(its[1:], per_iter[1:]):
            same = [g for g in found if g.key == f.key]
            if not same:
                differs.append(f"iteration {it}: GEMM not found")
                continue
            g = same[0]
            ops_f = tuple((o.label, o.fused) for o in f.ops)
            ops_g = tuple((o.label, o.fused) for o in g.ops)
            if g.kernels != f.kernels or _verdict_of(g) != _verdict_of(f) or ops_g != ops_f:
                what = ", ".join(f"{lab} {'fused' if fu else 'unfused'}" for lab, fu in ops_g) or "no epilogue"
                differs.append(f"iteration {it}: {' + '.join(g.kernels)} -> {_verdict_of(g)} ({what})")
            if g.time_us is not None:
                times.append(g.time_us)
        evidence = list(f.evidence)
        if len(per_iter) > 1:
            scope = (f"all {len(per_iter)} iterations" if len(per_iter) == count
                     else f"{len(per_iter)} of {count} iterations checked (evenly spaced)")
            evidence.append(
                f"[iterations] same kernels and verdict in {scope}"
                if not differs
                else f"[iterations] differs from iteration 0 ({scope}): {'; '.join(differs)[:2000]}"
            )
        module, source = f.module, f.source
        if modules is not None and not module and f.source_nodes:
            module, source, ev = modules.lookup(f.graph, f.source_nodes)
            if ev:
                evidence.append(ev)
        elif module:
            evidence.append(f"[module] {f.op} ran inside the profiler range 'kernelscope.module: {module}'")
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
                why_not="; ".join(f.why_not),
                evidence=tuple(evidence_of(e) for e in
                               dict.fromkeys(tuple(evidence) + tuple(o.evidence for o in ops))),
                confidence=f.confidence,
                module=module,
                source=source,
                batch=f.batch,
                kind=f.kind,
                costs=_op_costs(f),
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
    for i, (g, f) in enumerate(zip(gemms, found)):
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
            ev = evidence_of(f"[provenance] {gemms[i].op} has no GEMM source node at its call site; it is the "
                             f"{missing.index(i) + 1}. of {len(missing)} such GEMMs and {getattr(n, 'name', '?')} "
                             f"({getattr(n, 'op', '?')}, {mod}) the same place among the graph's remaining GEMM "
                             "nodes (matched by order)")
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


