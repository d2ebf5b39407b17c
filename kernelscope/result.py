"""The result: one JSON-ready object that every renderer reads (html, md, json, check, compare).

Schema ``kernelscope.result/4`` (kernelscope/result_file.py reads and writes result.json and migrates /1 to /3).
Renderers never re-derive facts: whatever a report shows is in here, the speedups, numerics verdicts and advice
analysis decided included (analysis/facts.py). Dataclasses are frozen with slots;
``to_json`` / ``from_json`` round-trip them through plain dicts. What a mode's worker measured beside its
latency (memory, numerics, compile, Dynamo counters, its config) and the run's environment are typed parts
too: analysis/mode.py fills them from the capture record (kernelscope/capture_record.py), field for field;
a part the worker did not measure is None (null), a field it did not write is None (or empty).
"""

from __future__ import annotations

import dataclasses
import enum
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kernelscope.tolerance import Tolerance

SCHEMA = "kernelscope.result/4"

_T = TypeVar("_T")


class Status(str, enum.Enum):
    OK = "ok"
    FAILED = "failed"
    TIMEOUT = "timeout"
    UNAVAILABLE = "unavailable"
    INTERRUPTED = "interrupted"


class Category(str, enum.Enum):
    GEMM = "gemm"
    POINTWISE = "pointwise"
    REDUCTION = "reduction"
    ATTENTION = "attention"
    MEMCPY = "memcpy"
    MEMSET = "memset"
    COMMUNICATION = "communication"
    OTHER = "other"


class Verdict(str, enum.Enum):
    FUSED = "fused"
    PARTIAL = "partial"
    UNFUSED = "unfused"
    NONE = "none"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class KernelStat:
    """One distinct kernel (or CPU kernel / memop) of a mode, aggregated per iteration."""

    name: str
    category: str
    backend: str
    calls_per_iter: float
    time_us_per_iter: float
    is_memop: bool = False


@dataclass(frozen=True, slots=True)
class LatencyStats:
    median: float
    iqr: float
    q1: float
    q3: float
    min: float
    mean: float
    samples: tuple[float, ...] = ()
    timer: str = ""  # "cuda_events" or "perf_counter"
    calls_per_sample: int | None = None  # back-to-back calls each sample averages (a sample lasts ~5 ms)
    windows: int | None = None  # timed windows: one that drifted counted as warm-up and was timed again
    drift: float | None = None  # |median(2nd half) - median(1st half)| / median of the kept window
    # The mode timed in several fresh processes (``--processes``). ``median`` is then the
    # median of the processes' medians and q1/q3/iqr/min/mean are over every sample of every process;
    # ``low``/``high`` is the 95% interval a rerun's median is expected in (analysis/stats.py, across processes;
    # within one process only when ``interval`` is "samples"). Old results have none of these and still load.
    per_process: tuple[float, ...] = ()  # each process's median, in run order (process 1 also profiled)
    processes: int | None = None  # processes whose timings are in here
    process_samples: tuple[tuple[float, ...], ...] = ()
    low: float | None = None
    high: float | None = None
    interval: str = ""  # "processes" | "samples" | "" (no interval)
    # flagged samples and processes (analysis/stats.py): "outlier-samples" (process, outliers, samples, worst: the
    # farthest sample / its process's median) and "outlier-process" (process, ratio to the median of processes,
    # left_out: of the interval's spread) Notes
    outliers: tuple[Note, ...] = ()
    outlier_samples: int = 0  # samples flagged (far outside their process's spread)
    # --cpu-pinning fastest (CUDA): the CPU each process's launching thread was pinned to (None: not pinned),
    # and the largest slowest/fastest ratio among the CPUs a process probed before choosing.
    cpus: tuple[int | None, ...] = ()
    cpu_spread: float | None = None
    cpu_repins: int = 0  # timed windows that ran slower than their CPU's probe and were timed again elsewhere
    # Other processes' CPU use while each process warmed up and timed (capture/load.py), per process in run order
    # (None: not measured), the hypervisor's steal likewise, the CPUs online and the CPUs the timed calls keep
    # busy (OpenMP threads on the CPU device, 1 on a GPU). analysis/contention.py judges them.
    others_cpu: tuple[float | None, ...] = ()
    steal_cpu: tuple[float | None, ...] = ()
    cpu_count: float | None = None
    threads: float | None = None


@dataclass(frozen=True, slots=True)
class Iterations:
    """How the trace was cut into iterations, and whether every iteration launched the same kernels. ``notes``:
    how the cut was made (analysis/kernels.py: "iterations-from-steps", "iterations-given", "iterations-inferred",
    "iterations-whole-trace"), then what differs between iterations ("kernel-counts-differ", "kernels-differ")."""

    count: int
    method: str  # "profiler_steps" | "compiled_graph_calls" | "top_level_ops" | "given" | "whole_trace"
    consistent: bool
    kernels_per_step: tuple[int, ...] = ()
    notes: tuple[Note, ...] = ()


@dataclass(frozen=True, slots=True)
class Roofline:
    """One GEMM against the device's ceilings: FLOPs and minimal bytes from M, N, K and the dtype, over its kernel
    time. ``pct_peak_*`` are against the datasheet peak when the GPU is in kernelscope's table, else against the
    calibrated ceiling (``peak_source`` says which); ``pct_calibrated_*`` against the calibration when both exist."""

    flops: int
    bytes: int
    intensity: float  # FLOPs per byte
    time_us: float
    tflops: float
    gbps: float
    dtype: str
    peak_tflops: float | None = None
    peak_gbps: float | None = None
    pct_peak_flops: float | None = None
    pct_peak_bw: float | None = None
    peak_source: str = ""  # "datasheet" | "calibrated" | "" (no peak known for this device)
    bound: str | None = None  # "compute" | "memory": which roof this GEMM's intensity sits under
    attainable_tflops: float | None = None
    pct_attainable: float | None = None
    pct_calibrated_flops: float | None = None
    pct_calibrated_bw: float | None = None


@dataclass(frozen=True, slots=True)
class AutotuneChoice:
    name: str
    time_ms: float | None  # None: the choice failed (Inductor prints inf)
    backend: str  # ATen, Triton, CUTLASS, NVGEMM, C++
    detail: str = ""  # Triton config, percentage of the winner, as printed


@dataclass(frozen=True, slots=True)
class AutotuneResult:
    """One max-autotune table from the compile log: what was benchmarked for a GEMM, and what won."""

    gemm: str | None  # the GemmEpilogue id it belongs to (None when no GEMM of the mode matches its sizes)
    op: str
    sizes: str
    choices: tuple[AutotuneChoice, ...]
    winner: str
    winner_backend: str
    dtypes: str = ""
    n_choices: int | None = None  # how many choices were benchmarked (the table prints the fastest only)
    best_by_backend: dict[str, float | None] = field(default_factory=dict)
    missing_backends: tuple[str, ...] = ()  # requested GEMM backends with no choice in the table
    log_line: int = 0
    # What to know in reading the table (analysis/autotune.py): it printed only the fastest choices
    # ("autotune-truncated"), a requested backend offered none ("autotune-no-choice"), another kind than its winner
    # ran ("autotune-template-ran", "autotune-library-ran"), its margin was close ("autotune-fusion-decided",
    # "autotune-table-marginal").
    notes: tuple[Note, ...] = ()
    # How far the winner beat the best choice of another kind (best other backend's time /
    # winner's time - 1), that choice, and whether the margin is inside autotune's timing noise ("marginal":
    # another run may pick the other kind; analysis/autotune.py MARGINAL).
    margin: float | None = None
    runner_up: str = ""
    runner_up_backend: str = ""
    marginal: bool = False
    # Every GEMM the table decided, ``gemm`` first: Inductor benchmarks one selection key once per compile, so
    # identical layers (32 x up_proj of one shape) share a table. Empty in result.json files from before.
    gemms: tuple[str, ...] = ()

    def serves(self, gemm_id: str) -> bool:
        """Whether this table decided GEMM ``gemm_id`` (its own or a later identical one)."""
        return gemm_id == self.gemm or gemm_id in self.gemms


@dataclass(frozen=True, slots=True)
class FusionBenchmark:
    """Inductor's epilogue-fusion benchmark for one GEMM (max-autotune, ``benchmark_epilogue_fusion``): at compile
    time it timed the GEMM's template with the next kernel's ops fused in against the two apart, and fused only
    when that was faster. Read from the compile log (TORCH_LOGS=fusion)."""

    fused: bool  # what Inductor decided: "can fuse (benchmark)" (True) or "cannot fuse (benchmark)" (False)
    factor: float | None  # the fused kernel timed this many times faster (fused) or slower (not); None: it never ran
    text: str  # as logged: "1.063x speedup", "1.447x slowdown", "infx slowdown"
    buffers: tuple[str, ...]  # the two scheduler buffers benchmarked together ("buf0", "buf1")
    log_line: int = 0
    # the factor is inside the benchmark's run-to-run spread (analysis/autotune.py FUSION_MARGINAL): another
    # compile of the same code may decide the other way
    marginal: bool = False


# A fact of evidence or of a why-not: a name, a number, a flag or a short tuple of them (op labels, kernel names,
# a shape; None in a tuple: a value not known there). result.json writes a tuple as a list; records read back turn
# it into a tuple again.
Fact = str | int | float | tuple[str | int | float | None, ...]


class EvidenceRule(str, enum.Enum):
    """What a piece of GEMM evidence states: one code per kind of sentence, ``<family>.<fact>``. The family is the
    rule that read it (the reports print it as the sentence's ``[tag]``) and decides the evidence's kind
    (``EVIDENCE_KIND``). Each code's comment names the facts its record carries; [name]: present only when known.
    Codes are stable: a reader (a fusion advisor, a CI rule) may key on them; report/evidence_words.py has the
    sentence of each."""

    # trace: what ran
    LAUNCH_ORDER_RAN_AS = "launch-order.ran-as"  # site, kernels, region, [op, external_id]: a call site's launch
    LAUNCH_ORDER_MEMSETS = "launch-order.memsets"  # kernels: memsets the GEMM call launched too
    LAUNCH_ORDER_NOT_FOUND = "launch-order.not-found"  # site, region: the call site's launch is not in the trace
    SPLIT_K = "split-k.reduce"  # kernel: cuBLASLt's split-K reduce belongs to the GEMM before it
    CUBLASLT_BIAS = "cublaslt-bias-epilogue.kernel"  # kernel: the bias ran in cuBLASLt's epilogue
    ADDMM_ACTIVATION_NOT_TRACED = "addmm-activation.not-traced"  # callee, act: _addmm_activation, no trace
    ADDMM_ACTIVATION_FALLBACK = "addmm-activation.fallback"  # op, act, kernel: ATen fell back to a separate kernel
    ADDMM_ACTIVATION_EPILOGUE = "addmm-activation.epilogue"  # op, act, kernels: applied in cuBLASLt's epilogue
    EAGER_OP_LAUNCHED = "eager-op.launched"  # op, [external_id], kernels: the GEMM-class op and its kernels
    EAGER_OP = "eager-op.op"  # op: the GEMM-class op (no GEMM kernel)
    EAGER_OP_INSIDE = "eager-op.inside"  # op, anchor, gemm_op, ran: an op of the GEMM's own call, after it
    LAUNCHING_OP_GEMM = "launching-op.gemm"  # kernel, [external_id], op: a GEMM kernel known by its op
    LAUNCHING_OP_HELPERS = "launching-op.helpers"  # op, count, kernels, why: helper kernels, not the GEMM
    EAGER_DATAFLOW_READS = "eager-dataflow.reads"  # op, on, anchor, other, ran: reads the GEMM's result
    EAGER_DATAFLOW_NEXT_GEMM = "eager-dataflow.stop-next-gemm"  # op: the chain ends where the next GEMM reads it
    EAGER_DATAFLOW_GELU_TANH = "eager-dataflow.gelu-tanh"  # ops, kernels: ATen ops that compute GELU's tanh form
    #   (a cube under a tanh, then 1 + it times x / 2): one op, gelu-tanh
    EAGER_DATAFLOW_THROUGH = "eager-dataflow.through"  # op, through, copies, bare: views and layout copies (and
    #   calls that ran no ATen op) the value went through to reach op; copies: those that ran kernels
    EAGER_SEQUENCE_AFTER = "eager-sequence.after"  # op, on, anchor, ran: elementwise, next in call order
    EAGER_SEQUENCE_NEXT_GEMM = "eager-sequence.stop-next-gemm"  # op: the chain ends at the next GEMM
    EAGER_SEQUENCE_THROUGH = "eager-sequence.through"  # op, through, copies: views and layout copies between the
    #   previous op of the chain and op, in call order; copies: those that ran kernels
    EAGER_SEQUENCE_NORM_FEEDER = "eager-sequence.norm-feeder"  # op, reduction: only feeds the reduction
    EAGER_SEQUENCE_BOUNDARY = "eager-sequence.stop-boundary"  # op: a reduction, norm, pooling or attention
    EAGER_SEQUENCE_NOT_ELEMENTWISE = "eager-sequence.stop-not-elementwise"  # op: not elementwise
    EAGER_SEQUENCE_SHAPE = "eager-sequence.stop-shape"  # op, [shape]: no input of the GEMM's output shape
    SOURCE = "source.call"  # op, source: the model's line that called the op (kernelscope.source range)
    TRACE_ONLY_KERNELS = "trace-only.gemm-kernels"  # kernels: the GEMM's kernels, no code to read
    TRACE_ONLY_IN_NAME = "trace-only.in-name"  # op, kernel: an op the GEMM kernel's name lists
    TRACE_ONLY_SEPARATE = "trace-only.separate-kernel"  # kernel, op: a pointwise kernel after the GEMM
    TRACE_ONLY_STOP = "trace-only.stop"  # kernel, category, reductions, others: the kernel that ends the chain
    TRACE_ONLY_POOLING = "trace-only.stop-pooling"  # kernel, pool: a pooling kernel ends the chain
    ITERATIONS_SAME = "iterations.same"  # checked, of: same kernels and verdict in the iterations checked
    ITERATIONS_DIFFER = "iterations.differ"  # checked, of, differing, details: iterations that differ
    # code: Inductor's output code
    CODE_GEMM = "code-gemm.runs"  # site, kernel_kind, op, [node, node_where], [dot_where]: the kernel that runs the
    #   GEMM (dot_where: its tl.dot, when the fragment does not show the GEMM computed there)
    CODE_GEMM_OPERATOR = "code-gemm.operator"  # kernel, operator, has_epilogue: an NVGEMM kernel's operator
    CODE_GEMM_INSIDE = "code-gemm.inside-call"  # op, inside, site, index, count: a GEMM-class op the trace shows
    #   inside a call of the code that is no GEMM call site (a custom op)
    CODE_GEMM_INSIDE_INNER = "code-gemm.inside-inner"  # op, n, width, inside: its N is not the call result's
    #   (width): its result stays inside the call, and what the call does with it is not in the code
    EXTERN_GEMM = "extern-gemm.call"  # site, gemm_kind: a library call, which takes no Inductor epilogue
    PROLOGUE = "prologue.ops"  # kernel, ops: ops the template computes on the GEMM's inputs
    TEMPLATE_BODY = "template-epilogue.body"  # op, kernel, [code], site_where: computed in the template's body
    TEMPLATE_FRAGMENT = "template-epilogue.fragment"  # op, node, kernel: a graph-fragment node of the template
    TEMPLATE_FRAGMENT_BIAS = "template-epilogue.fragment-bias"  # gemm_op, kernel: addmm's bias in the template
    BIAS_C_OPERAND = "bias-in-call.c-operand"  # site, bias: addmm's C operand (beta=1)
    BIAS_OPERAND = "bias-in-call.operand"  # site, bias: a oneDNN / MKL call's bias operand
    BIAS_CONV_OPERAND = "bias-in-call.conv-operand"  # op, shape: an eager convolution's bias operand
    BIAS_COPY = "bias-in-call.copy"  # op, kernel: the broadcast bias copied into the output, then beta=1
    BETA_NOT_TRACED = "beta-accumulate.not-traced"  # callee: the bias as C operand, not seen in the trace
    BETA_NO_KERNEL = "beta-accumulate.no-kernel"  # op: the bias as C operand, no separate kernel seen
    BETA_RESIDUAL = "beta-accumulate.residual"  # site, operand, shape: an output-sized C operand (a residual)
    ONEDNN_POST_OP = "onednn-post-op.applies"  # site, attr: a oneDNN post-op of the call
    DATAFLOW_SEPARATE_KERNEL = "dataflow.separate-kernel"  # op, kernel, params, [operands], [code], src_where
    DATAFLOW_SEPARATE_CALL = "dataflow.separate-call"  # site: a pointwise library call reads the result
    DATAFLOW_FRAGMENT_OP = "dataflow.fragment-op"  # kernel, op: a kernel without a readable body reads it
    DATAFLOW_IN_NEXT_TEMPLATE = "dataflow.in-next-template"  # op, kernel, params, [code], src_where
    DATAFLOW_IN_NEXT_PROLOGUE = "dataflow.in-next-prologue"  # op, kernel, params, [code], src_where: computed on the
    #   result by the next GEMM's template before its dot (a fused prologue)
    DATAFLOW_POST_OP_NEXT_GEMM = "dataflow.post-op-in-next-gemm"  # attr, site: a oneDNN post-op of the next GEMM
    DATAFLOW_RECOMPUTED = "dataflow.recomputed"  # kernel, op: recomputed in a second kernel, counted once
    DATAFLOW_NORM_FEEDER = "dataflow.norm-feeder"  # op, kernel, norm_kernel, norm_where: part of a norm
    DATAFLOW_LATER_GEMM = "dataflow.later-gemm-ops"  # kernel, gemms: ops that belong to a later GEMM
    DATAFLOW_NEXT_GEMM = "dataflow.stop-next-gemm"  # site, gemm_kind: the chain ends at the next GEMM
    DATAFLOW_RESULT_JOINS = "dataflow.stop-result-joins"  # site: the next GEMM's own result joins there
    DATAFLOW_NOT_POINTWISE = "dataflow.stop-not-pointwise"  # site, op: a library op that is not pointwise
    DATAFLOW_POOLING = "dataflow.stop-pooling"  # kernel, [code], src_where: a pooling window ends the chain
    DATAFLOW_STATISTICS = "dataflow.stop-statistics"  # kernel, [code, src_where], params: a norm's statistic
    DATAFLOW_REDUCTION = "dataflow.stop-reduction"  # kernel, [code, src_where]: a reduction reads the result
    DATAFLOW_GRAPH_OUTPUT = "dataflow.graph-output"  # outputs: the chain reaches the graph's output
    # provenance: module paths and source lines
    MODULE_RANGE = "module.range"  # op, module: the eager kernelscope.module range it ran in
    PROVENANCE_CALL_SITE = "provenance.call-site"  # handle, node, traced, [node_op, module], [source, code]
    PROVENANCE_SOURCE_NODE = "provenance.source-node"  # node, node_op, module, [source]: graph_code's node
    PROVENANCE_BY_ORDER = "provenance.by-order"  # op, index, count, node, node_op, module: matched by order
    PROVENANCE_CALLER = "provenance.caller"  # node, module, stack, [node_op], [source], [handle, post, traced,
    #   code]: the module whose forward called the traced node (Dynamo's nn_module_stack, innermost first); handle:
    #   the call site whose provenance led to the node
    # log: the compile log
    AUTOTUNE_TABLE = "autotune-log.table"  # op, sizes, log_line, choices, times (None: failed): first four
    FUSION_BENCHMARK = "fusion-benchmark.decided"  # buffers, fused, [factor], text, log_line, marginal, spread
    FUSION_LOG = "fusion-log.cannot-fuse"  # log_line, node1, node2, reason: a "cannot fuse" line
    NVGEMM_FAILED = "nvgemm-log.failed"  # count, [log_line, error]: NVGEMM choices that failed to compile
    # rule: decisions inside their own noise
    AUTOTUNE_MARGINAL = "decision.autotune-marginal"  # winner_backend, margin, runner_up, runner_up_backend
    FUSION_BENCHMARK_MARGINAL = "decision.fusion-benchmark-marginal"  # the facts of fusion-benchmark.decided
    # a result.json from before evidence was structured: its sentence, kept as written
    LEGACY = "legacy"  # text


# The kind of evidence each family of rules reads: "code" (an Inductor output-code line), "trace" (a trace event),
# "log" (the compile log), "provenance" (Inductor's provenance mapping, the eager module ranges), "rule" (the rule
# applied), "note" (a legacy sentence of no known rule).
EVIDENCE_KIND: dict[str, str] = {
    "launch-order": "trace", "split-k": "trace", "cublaslt-bias-epilogue": "trace", "addmm-activation": "trace",
    "eager-op": "trace", "launching-op": "trace", "eager-dataflow": "trace", "eager-sequence": "trace",
    "source": "trace", "trace-only": "trace", "iterations": "trace",
    "code-gemm": "code", "extern-gemm": "code", "prologue": "code", "template-epilogue": "code",
    "bias-in-call": "code", "beta-accumulate": "code", "onednn-post-op": "code", "dataflow": "code",
    "module": "provenance", "provenance": "provenance",
    "autotune-log": "log", "fusion-benchmark": "log", "fusion-log": "log", "nvgemm-log": "log",
    "decision": "rule", "legacy": "note",
}


def _frozen(v: Any) -> Any:
    return tuple(_frozen(x) for x in v) if isinstance(v, (list, tuple)) else v


def _facts(facts: Mapping[str, Any]) -> dict[str, Fact]:
    """Facts as records hold them: None dropped (a fact not known is absent), lists as tuples."""
    return {k: _frozen(v) for k, v in facts.items() if v is not None}


@dataclass(frozen=True, slots=True)
class Evidence:
    """One piece of evidence behind a verdict: the rule that states it (an ``EvidenceRule`` code), its kind
    (``EVIDENCE_KIND`` of the rule's family), where to look, and the facts its sentence names (report/
    evidence_words.py writes the sentence). ``where``: ``file:line`` for code, ``log:<line>`` for the compile log,
    "autotune" for a decision, "" when none."""

    rule: str
    kind: str
    where: str = ""
    facts: dict[str, Fact] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rule", str(getattr(self.rule, "value", self.rule)))
        object.__setattr__(self, "facts", _facts(self.facts))

    def __hash__(self) -> int:
        return hash((self.rule, self.kind, self.where, tuple(sorted(self.facts.items()))))

    @property
    def family(self) -> str:
        """The rule's family: "dataflow" of "dataflow.stop-next-gemm"."""
        return self.rule.partition(".")[0]

    @staticmethod
    def of(rule: EvidenceRule, where: str = "", **facts: Any) -> Evidence:
        """The record of ``rule`` with its kind; a fact given as None is left out."""
        return Evidence(rule.value, EVIDENCE_KIND[rule.value.partition(".")[0]], where, facts)


class WhyNotReason(str, enum.Enum):
    """Why a GEMM's unfused epilogue ops were not fused: one code per cause. Each names the facts its record
    carries ([name]: present only when known; ``ops``: the unfused ops' labels, ``kernels``: the kernels they ran
    in). A GEMM's ``why_not`` lists its reasons in order; report/evidence_words.py writes their sentences."""

    # the GEMM ran in a library call (cuBLAS/cuBLASLt, MKL/oneDNN), which takes no Inductor epilogue
    EAGER_CPU = "eager-cpu"  # ops, kernels: eager ATen on the CPU runs them as separate ops
    EAGER_LIBRARY = "eager-library"  # ops, kernels, library: eager ATen; a library call takes a bias or GELU/ReLU
    MAX_AUTOTUNE_UNKNOWN = "max-autotune-unknown"  # ops, kernels, library: a library GEMM, max-autotune not known
    MAX_AUTOTUNE_OFF = "max-autotune-off"  # ops, kernels, library: max-autotune off, so Inductor called the library
    AUTOTUNE_PICKED = "autotune-picked"  # ops, kernels, winner, winner_ms, [template, template_ms, margin]: the
    #   library GEMM won its autotune table (over the fastest template, by ``margin`` = template / winner - 1)
    AUTOTUNE_RANKED_TEMPLATE = "autotune-ranked-template"  # ops, kernels, winner, winner_ms, [library, library_ms]:
    #   the library GEMM ran although its (shared) autotune table ranked a template first
    NO_FUSIBLE_BACKEND = "no-fusible-backend"  # ops, kernels, backends: no requested backend takes an epilogue
    LIBRARY_GEMM = "library-gemm"  # ops, kernels, library: the autotuner picked the library GEMM (no table)
    FREEZING_OFF = "freezing-off"  # (none): Inductor's C++ GEMM template needs freezing=True
    # the GEMM ran in a template that took no epilogue
    NVGEMM_NO_EPILOGUE_OPERATOR = "nvgemm-no-epilogue-operator"  # ops, kernels, sm: none for this GPU (SM100 only)
    NVGEMM_NO_EPILOGUE = "nvgemm-no-epilogue"  # ops, kernels: the NVGEMM kernel was generated without one
    CUTLASS_NO_EPILOGUE = "cutlass-no-epilogue"  # ops, kernels: CUTLASS C++ without CUTLASS_EPILOGUE_FUSION=1
    # an Inductor template's epilogue ops ran elsewhere
    IN_NEXT_GEMM = "in-next-gemm"  # ops, kernels: in the next GEMM's template, which reads this result back
    SEPARATE_KERNEL = "separate-kernel"  # ops, kernels: in kernels of their own
    NO_FUSION_LOG = "no-fusion-log"  # (none): no TORCH_LOGS=fusion log to say why
    # NVGEMM was requested but did not run this GEMM
    NVGEMM_COMPILE_FAILED = "nvgemm-compile-failed"  # count, [error], arch: every NVGEMM choice failed to compile
    NVGEMM_NO_BIAS_CHOICE = "nvgemm-no-bias-choice"  # op, sm: no NVGEMM choice for a bias op below SM100
    # what Inductor decided, from its log
    FUSION_BENCHMARK_NO_CONFIG = "fusion-benchmark-no-config"  # text, buffers, log_line: no fused config ran
    FUSION_BENCHMARK_REJECTED = "fusion-benchmark-rejected"  # text, factor, buffers, log_line: fused was slower
    FUSION_LOG = "fusion-log"  # nodes1, nodes2, reasons: the fusion log's "cannot fuse" lines, one per pair
    # decisions inside their own noise: another compile may decide otherwise
    AUTOTUNE_MARGINAL = "autotune-marginal"  # winner_backend, margin, runner_up, runner_up_backend
    FUSION_BENCHMARK_MARGINAL = "fusion-benchmark-marginal"  # the facts of the fusion-benchmark.decided evidence
    # a result.json from before why-nots were structured: its sentences, kept as written
    LEGACY = "legacy"  # text


@dataclass(frozen=True, slots=True)
class WhyNot:
    """One reason a GEMM's epilogue was not all fused: a ``WhyNotReason`` code and the facts its sentence names."""

    reason: str
    facts: dict[str, Fact] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "reason", str(getattr(self.reason, "value", self.reason)))
        object.__setattr__(self, "facts", _facts(self.facts))

    def __hash__(self) -> int:
        return hash((self.reason, tuple(sorted(self.facts.items()))))

    @staticmethod
    def of(reason: WhyNotReason, **facts: Any) -> WhyNot:
        return WhyNot(reason.value, facts)


@dataclass(frozen=True, slots=True)
class OpCost:
    """What one unfused epilogue op costs per iteration: the GPU (or CPU-kernel) time of the kernels it ran in,
    and the bytes of the round trip through memory it forced (the GEMM output written, then read back)."""

    op: str
    kernels: tuple[str, ...]
    time_us_per_iter: float
    bytes_per_iter: int | None = None


@dataclass(frozen=True, slots=True)
class GemmEpilogue:
    """Per-GEMM epilogue-fusion verdict. Every verdict carries its evidence."""

    id: str
    kernels: tuple[str, ...]
    backend: str
    m: int | None
    n: int | None
    k: int | None
    dtype: str | None
    time_us_per_iter: float
    op: str = ""  # aten op: mm, addmm, bmm, ...
    epilogue: tuple[str, ...] = ()
    fused: tuple[str, ...] = ()
    unfused: tuple[str, ...] = ()
    unfused_kernels: tuple[str, ...] = ()
    prologue: tuple[str, ...] = ()
    verdict: str = Verdict.UNKNOWN.value
    why_not: tuple[WhyNot, ...] = ()  # why the unfused ops were not fused, cause by cause
    evidence: tuple[Evidence, ...] = ()
    confidence: str = "code"  # "code" (from Inductor output code + trace) or "trace-only" (weaker)
    roofline: Roofline | None = None
    # Where the GEMM came from, what its unfused epilogue costs, the batch count of bmm-class ops, and the group
    # of identical layers it belongs to (same module pattern, shape, backend and verdict).
    module: str = ""  # nn.Module path, e.g. "layers.3.mlp.gate_proj" ("" when unknown)
    source: str = ""  # model source "file.py:42" of the call, when the trace or provenance has it
    batch: int | None = None  # bmm / baddbmm batch count
    kind: str = "gemm"  # "gemm" | "conv" (convolutions are GEMM-class ops)
    costs: tuple[OpCost, ...] = ()  # one per unfused op
    group: str = ""  # GemmGroup.label this GEMM is a member of
    # Inductor's epilogue-fusion benchmarks that decided this GEMM's fusion (max-autotune), from the log
    fusion_benchmarks: tuple[FusionBenchmark, ...] = ()


@dataclass(frozen=True, slots=True)
class GemmGroup:
    """Identical layers, grouped: ``layers.0-31.mlp.up_proj x32: bias fused, silu unfused``. GEMMs whose module
    paths differ only in layer indices and that share op, shape, backend and verdict form one group; a layer that
    differs forms its own."""

    label: str  # "layers.0-31.mlp.up_proj"
    count: int
    members: tuple[str, ...]  # GemmEpilogue ids
    op: str
    backend: str
    verdict: str
    fused: tuple[str, ...] = ()
    unfused: tuple[str, ...] = ()
    summary: str = ""  # "bias fused, silu unfused"
    # Every GEMM is in one group, so a report's length follows the groups, not the layers. GEMMs
    # without a module path group by op, shape, backend and verdict. A group that is not the largest of its
    # module pattern (layer 7's up_proj fused where the other 15 are not) names the group it differs from and how.
    # Empty in result.json files from before (reading them groups their GEMMs again: analysis/facts.py).
    pattern: str = ""  # "layers.#.mlp.up_proj"; without a module path "mm 512 × 1024 × 1024"
    differs_from: str = ""  # the label of the largest group of the same pattern, when this group is not it
    difference: str = ""  # "verdict fused (theirs: unfused); unfused none (theirs: mul)"
    time_us_per_iter: float | None = None  # the members' GEMM time per iteration, together


@dataclass(frozen=True, slots=True)
class GemmOp:
    """A GEMM-class op a mode executed, as the coverage self-check names one it could attribute to no kernel (so
    that a missing GEMM is visible instead of silent)."""

    op: str  # as the source names it: "aten::cudnn_convolution", "extern_kernels.convolution"
    kind: str = ""  # the op counted: "mm", "addmm", "bmm", "convolution", ...
    module: str = ""
    source: str = ""  # "model.py:42" (eager) or the call site "graph_0.py:1574" (compiled)
    m: int | None = None
    n: int | None = None
    k: int | None = None
    batch: int | None = None
    # why it is not attributed (None: it is): "launched-no-kernel", "launched-only" (kernels: the short names of
    # what it launched, none of which computes a GEMM), "launch-not-found" (a compiled call site's launch),
    # "not-found" (the coverage oracle counted it, the analysis found no GEMM there; by: what counted it, "tl.dot",
    # "template", "extern call" or "dispatch"; [inside]: the op it was dispatched inside)
    reason: Note | None = None


@dataclass(frozen=True, slots=True)
class GemmCoverage:
    """How many of the GEMMs a mode executed in one iteration were attributed to a kernel (analysis/gemm/
    coverage.py). ``ops``: eager, the innermost GEMM-class CPU op of each nest (vocab.EAGER_GEMM_OPS: aten::linear ->
    aten::addmm is one GEMM; a grouped GEMM once), GEMM-class ops run between compiled regions included; compiled,
    every GEMM call site of the output code, once per call of its graph, and the GEMMs found inside its calls of
    other ops; and the GEMMs the oracle counted that none of these found (``missing``). ``attributed``: of those,
    the ones whose kernel was found in the trace (a GemmEpilogue with kernels)."""

    source: str  # "trace CPU ops" (eager) | "output code" (compiled, + "trace CPU ops" for graph breaks)
    ops: int
    attributed: int
    by_kind: dict[str, int] = field(default_factory=dict)  # op kind -> count, e.g. {"addmm": 72, "convolution": 1}
    unattributed: tuple[GemmOp, ...] = ()
    # eager: op kind -> GEMMs whose kernel only the launching CPU op identified (its name does not say GEMM:
    # cuDNN's cutlass__5x_cudnn::Kernel<...fprop...>, conv2d_c1_k1_nhwc_specialized)
    via_launching_op: dict[str, int] = field(default_factory=dict)
    # GEMM kernels no GEMM-class op launched, read from their names (not among ``ops``: trace-only verdicts)
    by_name_only: int = 0
    # compiled: GEMMs Inductor made out of another op (SDPA's math decomposition into bmm's), by that op
    decomposed: dict[str, int] = field(default_factory=dict)
    # the GEMM count against eager's (None: not compared): "gemm-count-as-eager", "gemm-count-explained" (the
    # decompositions explain the difference) or "gemm-count-unexplained" (a warning), with the counts
    vs_eager: Note | None = None
    vs_eager_explained: bool | None = None
    # The independent count (None: no oracle ran: a trace analysed alone, a capture without the dispatch count, a
    # mode under CUDA graphs): how many GEMMs an oracle that reads none of the analysis's rules for what a GEMM is
    # counted in the iteration, what it read (``oracle_source``: "dispatch", the capture's dispatch count;
    # "output code", the code's tl.dot kernels, GEMM templates and extern GEMM calls; "output code + dispatch", and
    # the GEMMs the compiled call dispatched inside other ops or between compiled regions), by kind. ``missing``: of
    # those, the ones the analysis did not find, listed in ``unattributed`` (reason "not-found") and counted in
    # ``ops``: "11 of 27", never "11 of 11", when the analysis found 11 of the oracle's 27.
    oracle: int | None = None
    oracle_source: str = ""
    oracle_by_kind: dict[str, int] = field(default_factory=dict)
    missing: int = 0

    @property
    def complete(self) -> bool:
        return self.attributed == self.ops


@dataclass(frozen=True, slots=True)
class EpilogueCost:
    """How much of the iteration unfused epilogues cost: "unfused epilogues: 18 % of GPU time, 9 of 24 kernels"."""

    time_us_per_iter: float
    pct_time: float | None  # of the mode's GPU (or CPU-kernel) time per iteration
    kernels: int  # distinct kernel launches per iteration that ran unfused epilogue ops
    of_kernels: int | None  # kernels per iteration of the mode
    bytes_per_iter: int | None = None


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One kernel of one iteration, for the report's timeline strip; times relative to the iteration start."""

    name: str
    category: str
    start_us: float
    dur_us: float


@dataclass(frozen=True, slots=True)
class LaunchProfile:
    """Where an iteration's wall time goes (CUDA, from the profiled iterations): GPU busy vs wall, and the CPU
    time spent issuing the work. Medians over the profiled iterations, in µs."""

    iterations: int
    wall_us: float  # profiler step: the call and the synchronize after it
    gpu_busy_us: float  # union of the iteration's kernel (and memop) intervals
    gpu_idle_pct: float  # 100 * (1 - busy / wall)
    launch_path_us: float  # step start to the end of the last launch call (Python, guards, wrapper, launches)
    runtime_us: float  # time inside CUDA runtime/driver launch calls
    launches: float  # runtime launch calls per iteration
    launch_bound: bool


@dataclass(frozen=True, slots=True)
class Communication:
    """Collectives of one rank per profiled iteration (analysis/comm.py). ``time_us_per_iter`` is the
    union of the collectives' intervals; ``overlap_us_per_iter`` the part of it during which a compute kernel of
    the same rank (same device) ran too."""

    kernels_per_iter: float
    time_us_per_iter: float
    overlap_us_per_iter: float
    overlap_fraction: float | None  # overlap / time; None without communication time
    source: str = ""  # "gpu kernels" (NCCL) | "gloo ranges" (the collective on gloo's thread) | "cpu ops"
    names: tuple[str, ...] = ()  # distinct collective names, e.g. ncclDevKernel_AllReduce_Sum_f32_RING_LL


@dataclass(frozen=True, slots=True)
class RankResult:
    """One rank of a mode run under torchrun (``profile --nproc``, or ``analyze DIR`` of rank traces)."""

    rank: int
    status: str
    error: str = ""
    latency_ms: float | None = None  # this rank's steady median
    profiled_iteration_ms: float | None = None  # median profiled iteration (profiler on): what comm time is part of
    kernels_per_iter: float | None = None
    gemm_summary: str = ""
    verdicts: tuple[str, ...] = ()  # "<GEMM label>: <verdict>" in the rank's GEMM order
    peak_memory_bytes: int | None = None
    communication: Communication | None = None
    trace: str | None = None
    capture: str | None = None  # the rank's capture.json, relative to the result directory
    differs: tuple[str, ...] = ()  # from rank 0: "kernel sequence", "GEMM verdicts"
    slowest: bool = False


# ---------------------------------------------------------------------------------------------------------------
# What a mode's worker measured beside its latency, and the run's environment: typed copies of the capture
# record's parts (kernelscope/capture_record.py), written by analysis/mode.py and read by analysis and report.


def _json_key(name: str) -> dict[str, str]:
    """Field metadata for a JSON key that is not a Python name (``"pass"``)."""
    return {"json": name}


@dataclass(frozen=True, slots=True)
class MemoryPeaks:
    """Peak memory of a mode, in bytes (the worker's ``memory``). On a GPU the CUDA allocator's peaks, reset before
    the first call (compile + autotune) and again before the timed calls (steady state); on the CPU the
    process's peak RSS in the same windows, the RSS before the model was built, and each window's growth over it
    (what the mode itself allocated: ``peak_memory_bytes`` is that growth). None: not measured on this device."""

    first_call_peak_allocated_bytes: int | None = None
    first_call_peak_reserved_bytes: int | None = None
    peak_allocated_bytes: int | None = None
    peak_reserved_bytes: int | None = None
    rss_before_bytes: int | None = None
    build_peak_rss_bytes: int | None = None
    first_call_peak_rss_bytes: int | None = None
    process_peak_rss_bytes: int | None = None
    peak_rss_bytes: int | None = None
    rss_after_bytes: int | None = None
    first_call_rss_growth_bytes: int | None = None
    peak_rss_growth_bytes: int | None = None


@dataclass(frozen=True, slots=True)
class OutputError:
    """One set of outputs against another (capture/numerics.py ``_compare``): a mode against eager, or against the
    float64 reference, which also carries eager's own errors against it (``eager_*``) and the rmse a mode may
    reach and still pass (``bound_rmse``). ``passed`` is the call (JSON ``"pass"``); ``note``: the outputs
    differ in structure (count or shape); ``reason``: why it failed, as the report says it."""

    max_abs: float | None = None
    max_rel: float | None = None
    rmse: float | None = None
    mismatch_fraction: float | None = None
    differ_fraction: float | None = None
    nonfinite: int | None = None
    new_nonfinite: int | None = None
    elements: int | None = None
    allclose: bool | None = None
    passed: bool | None = field(default=None, metadata=_json_key("pass"))
    note: str = ""
    reason: str = ""
    eager_rmse: float | None = None
    eager_max_abs: float | None = None
    eager_nonfinite: int | None = None
    bound_rmse: float | None = None
    # torch's accuracy rule against the reference: its allclose(eager, mode, tol) shortcut, the rmse
    # multiplier it allowed (``bound_rmse`` = multiplier * eager_rmse + tol/10), rmse / the output's rms
    same_allclose: bool | None = None
    multiplier: float | None = None
    rel_rmse: float | None = None


@dataclass(frozen=True, slots=True)
class ToleranceUsed:
    """The tolerance the worker counted mismatches with (kernelscope/tolerance.py) and the rules it applied:
    ``same_tol``, ``equal_nan`` and ``rule`` (``torch._dynamo.utils.same (torch 2.14.1)``) of torch's accuracy
    rule against the reference, ``force_max_multiplier`` when the benchmark suite's 10x allowance applied."""

    dtype: str | None = None
    atol: float | None = None
    rtol: float | None = None
    vs_eager_rule: str = ""
    vs_reference_rule: str = ""
    same_tol: float | None = None
    equal_nan: bool | None = None
    rule: str = ""
    force_max_multiplier: bool | None = None


@dataclass(frozen=True, slots=True)
class ReferenceInfo:
    """How the high-precision reference ran (``dtype`` on ``device``), or why it did not (``skipped``);
    ``weights``: the dtype of the weights it was made from (the model file's, before --dtype)."""

    dtype: str | None = None
    device: str | None = None
    skipped: str = ""
    weights: str = ""
    float64_error: str = ""  # why float64 could not run the model: the reference ran in float32 (``dtype``)


@dataclass(frozen=True, slots=True)
class OutputNumerics:
    """One output tensor of the mode: its path in the model's output (``logits``, ``last_hidden_state``,
    ``[0]``), shape, dtype, its own scale (``rms`` and ``max_abs_value`` of the reference's finite elements, else
    eager's) and its errors against eager and the float64 reference (torch's verdict per output)."""

    name: str = ""
    shape: tuple[int, ...] = ()
    dtype: str = ""
    elements: int | None = None
    rms: float | None = None
    max_abs_value: float | None = None
    vs_eager: OutputError | None = None
    vs_reference: OutputError | None = None


@dataclass(frozen=True, slots=True)
class NumericsResult:
    """The mode's output against eager and against the float64 reference (None: that comparison was not made;
    analysis/numerics.py makes the calls); ``outputs``: each output tensor's own (empty from older workers)."""

    vs_eager: OutputError | None = None
    tolerance: ToleranceUsed | None = None
    reference: ReferenceInfo | None = None
    vs_reference: OutputError | None = None
    outputs: tuple[OutputNumerics, ...] = ()


@dataclass(frozen=True, slots=True)
class DynamoStats:
    """Dynamo's counters over one shape point: frames and graphs compiled, recompiles and the guards that failed,
    graph breaks and why."""

    frames_compiled: int | None = None
    graphs: int | None = None
    recompiles: int | None = None
    guard_failures: tuple[str, ...] = ()
    graph_breaks: int | None = None
    graph_break_reasons: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CompileCache:
    """Inductor's cache counters (``fxgraph_cache_hit``, ``autograd_cache_miss``, ``select_algorithm_autotune``,
    ...) over the cold first call and over the warm process's (``--warm-compile``; None when none ran): what each
    process did. On a hit Inductor adds the cached compile's counts to its counters again (a loaded max-autotune
    graph would read ``select_algorithm_autotune`` 7 with no benchmark run); those are left out of ``cold`` and
    ``warm`` and kept in ``replayed`` and ``warm_replayed``."""

    cold: dict[str, int] = field(default_factory=dict)
    warm: dict[str, int] | None = None
    replayed: dict[str, int] = field(default_factory=dict)
    warm_replayed: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CompileInfo:
    """A compiled mode's first call. ``cold_s``: the cold compile (None: nothing compiled at this point,
    ``reused``, as a dynamic graph compiled at an earlier shape point covers it; ``first_call_s`` is then that
    call's time). ``warm_s``: the warm process's first call (``--warm-compile``): None when none ran, when it
    failed (``warm_error``) or when nothing compiled here."""

    cold_s: float | None = None
    cache: CompileCache = field(default_factory=CompileCache)
    cache_dir_fresh: bool = True  # False: --cache-dir, so the first call may reuse an earlier cache
    reused: bool = False
    first_call_s: float | None = None
    warm_s: float | None = None
    warm_dynamo: DynamoStats | None = None
    warm_error: str = ""
    warm_log: str | None = None
    compile_threads: int | None = None  # Inductor's compile_threads in the first process (its worker pool's size)
    # Triton kernels whose cached coordinate-descent configuration the later processes of --processes kept instead
    # of tuning them again at their first run, summed over those processes: torch 2.9-2.11 drop the cached result's
    # mark on a load from the cache (pytorch/pytorch#172819; capture/compiling.py _keep_cached_coordesc). 0: none
    coordesc_kept: int = 0
    # Dynamo's and Inductor's own timers over the first process's first call, 10 ms or more, longest first
    # ("GraphLowering.codegen": 7.5, ...): where the cold compile's time went
    phases_s: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ModeConfig:
    """How the mode ran: what ``--modes`` asked for and what the worker set (None: not recorded, as for a trace
    analysed on its own). ``gemm_backends``: the usable max-autotune GEMM backends in Inductor's order;
    ``inductor_config``: the Inductor config patch, as Inductor names its keys."""

    compiled: bool | None = None
    compile_mode: str | None = None
    max_autotune: bool | None = None
    cudagraphs: bool | None = None
    dynamic: bool | None = None
    device: str | None = None
    capability: str | None = None
    dtype: str | None = None
    freezing: bool | None = None
    gemm_backends: tuple[str, ...] | None = None
    gemm_backends_requested: tuple[str, ...] = ()
    cute_dsl_arch: str | None = None
    inductor_config: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BackendStatus:
    """Whether a max-autotune GEMM backend could run here, and why not."""

    available: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class InterpreterInfo:
    """The interpreter the workers ran under (``--python``; capture/interpreter.py)."""

    path: str
    executable: str = ""
    python: str | None = None
    torch: str | None = None
    triton: str | None = None
    cuda: str | None = None


@dataclass(frozen=True, slots=True)
class RunEnvironment:
    """What a reviewer needs to place and reproduce a run (the worker's ``environment``; no hostnames, no
    environment variables). None: not recorded (a CPU run has no GPU; a trace analysed on its own records what
    its metadata says: device, GPU, torch, CUDA and ``cuda_driver_version``)."""

    python: str | None = None
    platform: str | None = None
    torch: str | None = None
    cuda: str | None = None
    device: str | None = None
    triton: str | None = None
    gpu: str | None = None
    capability: str | None = None
    gpu_memory_bytes: int | None = None
    sm_count: int | None = None
    driver: str | None = None
    cpu: str | None = None
    cpu_count: int | None = None
    gemm_backends: dict[str, BackendStatus] = field(default_factory=dict)
    interpreter: InterpreterInfo | None = None
    cuda_driver_version: str | None = None


# ---------------------------------------------------------------------------------------------------------------
# What analysis decides from the measurements, once, for every report to print (analysis/facts.py). Where it says
# something, it says it as a Note: a code and the names and numbers its words need; report/words.py writes the
# words.


@dataclass(frozen=True, slots=True)
class Note:
    """Something analysis found, as data: what kind (``code``; report/words.py says each kind in words) and the
    names and numbers its words need (``args``, plain JSON values). Code "text": a sentence written elsewhere (the
    worker's own error text, a note of an older result.json) in ``args["text"]``."""

    code: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Speedup:
    """A mode against eager at its shape: eager's median / the mode's (``value``), the 95% interval of that
    ratio (``low``, ``high``; analysis/stats.py), how the interval was made (``method``: "processes",
    "bootstrap", "iqr" or "none") and the call: "faster" / "slower" (the whole interval past 1), "within noise",
    "baseline" (eager itself) or "n/a" (no latency on either side)."""

    value: float | None = None
    low: float | None = None
    high: float | None = None
    method: str = "none"
    call: str = "n/a"

    @property
    def noisy(self) -> bool:
        return self.call == "within noise"


@dataclass(frozen=True, slots=True)
class OutputVerdict:
    """One output tensor's numerics verdict (one per ``NumericsResult.outputs``, in the same order): ``status``
    "pass" / "fail" / "n/a" (torch's rule against the float64 reference; against eager when no reference ran),
    "reference" for eager's own outputs; ``rule``: the rule that decided it with its numbers."""

    name: str
    status: str
    rule: Note


@dataclass(frozen=True, slots=True)
class NumericsVerdict:
    """A mode's one numerics call, shown by every table of the reports (analysis/numerics.py).

    ``status``: "pass", "fail", "n/a", or "reference" (eager, unless its own output fails against float64).
    ``vs_eager`` / ``vs_reference``: how each comparison went (None: not made). ``against``: what decided it,
    "reference" (torch's accuracy rule against float64), "eager" (element-wise against eager's output, within
    ``tolerance``), "maxima" (only the largest errors were recorded: within ``tolerance`` or not) or "" (nothing
    measured). ``tolerance``: the tolerance row the call used. ``reason``: why, as a Note; ``hint``: what to try
    when a compiled fp16/bf16 mode fails or is close to failing (None: no hint). ``outputs``: each output's own."""

    status: str
    vs_eager: bool | None = None
    vs_reference: bool | None = None
    nonfinite: int = 0
    reason: Note = field(default_factory=lambda: Note("not-measured"))
    hint: Note | None = None
    against: str = ""
    tolerance: Tolerance | None = None
    outputs: tuple[OutputVerdict, ...] = ()


@dataclass(frozen=True, slots=True)
class FailureGroup:
    """Modes that failed the same way, said once: "default, max-autotune failed: <error>" (analysis/failures.py).
    ``line``: the line of the first mode's error that says what went wrong ("" for modes skipped after an earlier
    mode found the model broken: ``error_kind`` "skipped"); ``advice``: what to do instead."""

    modes: tuple[str, ...]
    status: str
    error_kind: str
    error: str
    line: str
    advice: tuple[Note, ...] = ()
    log: str | None = None


@dataclass(frozen=True, slots=True)
class ModeResult:
    name: str
    status: str
    error: str = ""
    error_kind: str = ""
    device: str = ""
    first_call_s: float | None = None
    latency_ms: LatencyStats | None = None
    peak_memory_bytes: int | None = None
    memory: MemoryPeaks | None = None
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    numerics: NumericsResult | None = None
    kernels_per_iter: float | None = None
    memops_per_iter: float | None = None
    kernels_by_category: dict[str, float] = field(default_factory=dict)
    kernels_by_backend: dict[str, float] = field(default_factory=dict)
    gpu_time_us_per_iter: float | None = None
    kernels: tuple[KernelStat, ...] = ()
    gemms: tuple[GemmEpilogue, ...] = ()
    gemm_summary: str = ""
    iterations: Iterations | None = None
    trace: str | None = None
    inductor_code: tuple[str, ...] = ()
    log: str | None = None
    config: ModeConfig | None = None
    notes: tuple[str, ...] = ()
    timeline: tuple[TimelineEntry, ...] = ()
    # The compile (cold and warm first call, Inductor's cache counters), Dynamo counters of the
    # run (recompiles, guard failures, graphs, graph breaks), max-autotune tables per GEMM. None: eager.
    compile: CompileInfo | None = None
    dynamo: DynamoStats | None = None
    autotune: tuple[AutotuneResult, ...] = ()
    # Identical layers grouped, and what the unfused epilogues cost the iteration.
    gemm_groups: tuple[GemmGroup, ...] = ()
    epilogue_cost: EpilogueCost | None = None
    # GPU busy vs wall per profiled iteration, and the profiled iterations' time set against
    # the steady median (``contradiction``: the note that says so when they disagree beyond noise, else None).
    launch: LaunchProfile | None = None
    profiled_iteration_ms: float | None = None
    contradiction: Note | None = None
    # A mode run under torchrun. The mode's own fields are the slowest rank's (``slowest_rank``);
    # ``rank_skew`` = slowest / fastest rank's median; ``ranks_differ``: ranks whose kernel sequence or GEMM
    # verdicts differ from rank 0's. ``communication``: this (the headline) rank's collectives. Old results have
    # none of these and still load.
    communication: Communication | None = None
    world_size: int | None = None
    ranks: tuple[RankResult, ...] = ()
    slowest_rank: int | None = None
    rank_skew: float | None = None
    ranks_differ: tuple[int, ...] = ()
    # The coverage self-check: GEMM-class ops executed vs attributed to a kernel (None: not derived, as in
    # results from before it, or a trace without GEMM-class ops to count).
    gemm_coverage: GemmCoverage | None = None
    # What analysis decided from the above (analysis/facts.py), read by every report: the speedup vs eager at
    # this shape, the numerics verdict, what to use instead of a mode that did not run, the max-autotune table
    # that decided each GEMM (GEMM id -> index in ``autotune``), and what analysis noted of the mode's timing and
    # failure as data (``findings``: the timing, the processes, the compile-time decisions, the trace analysis;
    # ``notes`` holds sentences: the worker's own, and every note of a result.json from before findings).
    speedup: Speedup | None = None
    numerics_verdict: NumericsVerdict | None = None
    fallback: tuple[Note, ...] = ()
    gemm_autotune: dict[str, int] = field(default_factory=dict)
    findings: tuple[Note, ...] = ()


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """One shape point of a sweep: its parameters and every mode measured there."""

    params: dict[str, Any]
    label: str
    modes: tuple[ModeResult, ...]

    def mode(self, name: str) -> ModeResult | None:
        return next((m for m in self.modes if m.name == name), None)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One mode as a candidate for the recommendation at a shape."""

    mode: str
    status: str
    median_ms: float | None = None
    speedup: float | None = None  # eager median / mode median
    low: float | None = None  # 95% bootstrap interval of the speedup
    high: float | None = None
    call: str = ""  # faster / slower / within noise / baseline / n/a
    numerics: str = ""  # pass / fail / n/a
    eligible: bool = False
    why_not: Note | None = None  # why it is not eligible: it did not run, has no latency, or fails numerics
    # Numerics against the float64 reference on their own (eager included), and the numerics verdict's reason
    # when it fails.
    vs_reference: str = ""  # pass / fail / n/a
    numerics_reason: Note | None = None


@dataclass(frozen=True, slots=True)
class Recommendation:
    """Which mode to use at one shape, and why (fallback to eager when compiling fails or gains nothing);
    ``reasons``: why, in order (report/words.py says them as one sentence)."""

    params: dict[str, Any]
    label: str
    mode: str | None
    reasons: tuple[Note, ...] = ()
    candidates: tuple[Candidate, ...] = ()
    # "plain" (the mode passes numerics and is the answer), "caveat" (named, but its numerics fail or
    # some mode was timed on a busy machine: the reasons say so) or "none" (no mode: every mode failed to run or
    # failed numerics).
    confidence: str = ""


@dataclass(frozen=True, slots=True)
class DynamicPoint:
    label: str
    recompiles: int | None
    guard_failures: tuple[str, ...] = ()
    dynamic_ms: float | None = None
    static_ms: float | None = None
    ratio: float | None = None  # dynamic median / static median
    low: float | None = None
    high: float | None = None
    call: str = ""  # faster / slower / within noise (of dynamic vs static) / n/a
    dynamic_kernels: float | None = None
    static_kernels: float | None = None


@dataclass(frozen=True, slots=True)
class DynamicSummary:
    """torch.compile(dynamic=True) across the sweep, in one process, against a static compile per shape."""

    mode: str
    static_mode: str | None
    recompiles: int | None
    graphs: int | None
    points: tuple[DynamicPoint, ...] = ()


class AdviceSetting(str, enum.Enum):
    """What a fusion-advice candidate changes (analysis/advice.py), chosen from the cause its group's why-not names."""

    TEMPLATE = "template"  # max-autotune with a GEMM template backend that takes epilogues (a library GEMM ran)
    WITHOUT_LIBRARY = "without-library"  # max_autotune_gemm_backends without ATEN (autotune picked the library)
    NO_FUSION_BENCHMARK = "no-fusion-benchmark"  # benchmark_epilogue_fusion off (the benchmark rejected the fusion)
    COMPILED = "compiled"  # eager's group: a compiled mode of the run that fuses it


class AdviceVerdict(str, enum.Enum):
    """What a candidate's run showed for its group, in this order: it did not run, failed, did not fuse the ops,
    fused them but its output fails numerics, or fused them and the whole model ran faster / within noise / slower
    than the mode it improves (the 95% interval of the ratio of medians)."""

    NOT_RUN = "not-run"
    FAILED = "failed"
    NOT_FUSED = "not-fused"
    NUMERICS_FAIL = "numerics-fail"
    NO_LATENCY = "no-latency"
    FASTER = "faster"
    WITHIN_NOISE = "within-noise"
    SLOWER = "slower"


@dataclass(frozen=True, slots=True)
class AdviceCandidate:
    """One setting that could fuse a group's unfused epilogue, run as a mode of its own (``mode_name``), and what
    that run shows for the group's GEMMs (found by module path, else by shape)."""

    setting: str  # AdviceSetting
    options: dict[str, Any]  # torch.compile(model, options=...) that compiles as the candidate ran
    mode_name: str  # the --modes name it ran as
    fused: tuple[str, ...] = ()  # the ops its run fused into the group's GEMMs
    unfused: tuple[str, ...] = ()  # the ops its run still left in kernels of their own
    # ops its run computed inside a kernel that reads the GEMM's result anyway: another GEMM's template (SwiGLU's
    # product in the second GEMM's), or the reduction that ends the epilogue (a residual add in a LayerNorm's)
    elsewhere: tuple[str, ...] = ()
    verdict: str = AdviceVerdict.NOT_RUN.value
    # the whole model: the improved mode's median / the candidate's (above 1: the candidate is faster), with the 95%
    # interval of that ratio (analysis/stats.py; across the interleaved processes of one run, or between two runs
    # with each run's host drift when ``between_runs``)
    latency_ratio: float | None = None
    low: float | None = None
    high: float | None = None
    between_runs: bool = False  # run later by `kernelscope advise`, not interleaved with the improved mode
    compile_s: float | None = None  # its cold compile (first call)
    numerics_pass: bool | None = None  # its numerics verdict passes (None: not measured)
    backend: str = ""  # what ran the group's GEMMs in its run
    why: Note | None = None  # not run, failed: why


@dataclass(frozen=True, slots=True)
class Advice:
    """A GEMM group whose epilogue is not all fused in a mode, the settings that could fuse it and what their runs
    showed (``kernelscope profile --advise``, ``kernelscope advise``). ``cause``: the why-not reason code the
    candidates follow from, or the evidence rule that says what ends the epilogue when no setting can fuse it
    (``no_setting`` then says why, and nothing ran). ``best``: the candidate that fused the ops, passed numerics and
    made the whole model faster beyond noise (the fastest of those), by its mode name."""

    group: str  # GemmGroup.label
    mode: str  # the mode the group was read in: the one the candidates improve
    unfused: tuple[str, ...]
    cause: str
    candidates: tuple[AdviceCandidate, ...] = ()
    best: str | None = None
    no_setting: Note | None = None
    # what ranked the candidates: the unfused ops' kernels per iteration (each kernel once), and their share of the
    # mode's GPU (or CPU-kernel) time
    cost_us: float | None = None
    share_pct: float | None = None


@dataclass(frozen=True, slots=True)
class RunResult:
    schema: str
    tool_version: str
    created: str
    command: str
    model: str
    device: str
    dtype: str
    environment: RunEnvironment
    modes: tuple[ModeResult, ...]
    settings: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # sentences of a result.json from before ``findings``
    # A sweep fills ``points`` (``modes`` is then the first point's, so tools that read one
    # shape keep working); ``recommendation`` has one entry per shape (one for a run without a sweep).
    points: tuple[SweepPoint, ...] = ()
    recommendation: tuple[Recommendation, ...] = ()
    dynamic: DynamicSummary | None = None
    peaks: dict[str, Any] = field(default_factory=dict)
    # What analysis decided across the modes (analysis/facts.py): the failed modes grouped by error, the
    # tolerance row the numerics were judged by, and the one numeric parameter a sweep varies (its charts' x axis).
    failure_groups: tuple[FailureGroup, ...] = ()
    tolerance: Tolerance | None = None
    sweep_axis: str | None = None
    # What analysis noted of the run as a whole (a trace with malformed events it skipped), as data.
    findings: tuple[Note, ...] = ()
    # Fusion advice (--advise): per GEMM group not all fused, the settings that could fuse it, proven by runs.
    advice: tuple[Advice, ...] = ()

    def mode(self, name: str) -> ModeResult | None:
        return next((m for m in self.modes if m.name == name), None)


def _key(f: dataclasses.Field[Any]) -> str:
    """A field's JSON key: its name, or the ``json`` of its metadata (``OutputError.passed`` is ``"pass"``)."""
    key: str = f.metadata.get("json", f.name)
    return key


_PLAIN = frozenset({int, str, bool, type(None)})  # JSON as they are (floats may be NaN or infinite)


def to_json(obj: Any) -> Any:
    """Dataclasses/enums/tuples -> plain JSON types (dicts keep their order)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {_key(f): to_json(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, (list, tuple)):
        # Long runs of plain values (one kernel count per iteration: 47k on a 1M-event trace) need no recursion.
        if all(type(v) in _PLAIN for v in obj):
            return list(obj)
        return [to_json(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_json(v) for k, v in obj.items()}
    if isinstance(obj, float) and (math.isnan(obj) or math.isinf(obj)):  # not JSON
        return None
    return obj


def _from(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(tp)
    if origin is typing.Union or isinstance(tp, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _from(args[0], value) if len(args) == 1 else value
    if origin is tuple:
        (inner, *_rest) = typing.get_args(tp) or (Any,)
        return tuple(_from(inner, v) for v in value)
    if origin is dict:
        inner = typing.get_args(tp)[1]
        return {str(k): _from(inner, v) for k, v in value.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass_from(tp, value)
    return value


_HINTS: dict[type, dict[str, Any]] = {}


def _dataclass_from(cls: type, data: Mapping[str, Any]) -> Any:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        key = _key(f)
        if key in data:
            kwargs[f.name] = _from(hints[f.name], data[key])
    return cls(**kwargs)


def part_from_json(cls: type[_T], data: Mapping[str, Any]) -> _T:
    """One of the result's records (``MemoryPeaks``, ``NumericsResult``, ``RunEnvironment``, ...) from its JSON
    form; a key the record does not have is ignored, a field the data lacks takes its default."""
    part: _T = _dataclass_from(cls, data)
    return part


def run_from_json(data: dict[str, Any]) -> RunResult:
    """Rebuild a RunResult from result.json's dict (unknown keys are ignored, for forward compatibility)."""
    run: RunResult = _dataclass_from(RunResult, data)
    return run
