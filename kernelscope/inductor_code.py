"""Parse Inductor output code: kernel definitions, their FX dataflow, and the wrapper's launch order.

Inductor writes one Python module per compiled graph. Above each kernel definition it leaves a comment block:

    # Topologically Sorted Source Nodes: [input_1], Original ATen: [aten.t, aten.addmm]
    # Source node to ATen node mapping:
    #   input_1 => addmm, permute
    # Graph fragment:
    #   %arg1_1 : Tensor "f16[4096][1]cuda:0" = PlaceHolder[target=arg1_1]
    #   %addmm : Tensor "f16[16, 4096][4096, 1]cuda:0"[num_users=1] = call_function[target=...](args = ...)
    #   return %addmm

The graph fragment is the dataflow: a ``PlaceHolder`` is a value the kernel reads (a graph input or another
node's output), a ``call_function`` node is computed inside the kernel. CPU (C++) kernels carry no such block
in torch 2.14.1; for them the kernel name (built by Inductor from the sorted "original ATen" op names) and the
buffers the wrapper passes are what is known.

The wrapper's ``call()`` gives the launch order: ``<kernel>.run(...)`` (Triton, NVGEMM),
``<name>.<name>(c_void_p(...))`` (CUTLASS C++), ``<cpp kernel>(...)`` (CPU), ``extern_kernels.addmm(...,
out=buf0)`` and ``torch.ops...`` calls (ATen / vendor libraries), plus allocations and reuse lines (``buf1 =
buf0; del buf0  # reuse``). It is parsed with ``ast`` (the file is Python); the comment blocks are read line
by line.

No torch import: this runs where the analysis runs.
"""

from __future__ import annotations

import ast
import enum
import gzip
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelscope import vocab
from kernelscope.errors import CodeFileError

# kernelscope's own multi-module files (and the fixtures) separate modules with this line.
MODULE_SEPARATOR = "# ===== next module ====="


class KernelKind(str, enum.Enum):
    TRITON_POINTWISE = "triton_pointwise"
    TRITON_REDUCTION = "triton_reduction"
    TRITON_TEMPLATE = "triton_template"
    TRITON_OTHER = "triton"
    CPP_KERNEL = "cpp_kernel"
    CPP_GEMM_TEMPLATE = "cpp_gemm_template"
    NV_UNIVERSAL_GEMM = "nv_universal_gemm"
    CUTLASS_CPP = "cutlass_cpp"
    CUTEDSL = "cutedsl"
    CUDA_CPP = "cuda_cpp"
    OTHER = "other"


# Kinds whose kernel is a GEMM template: the GEMM and whatever Inductor fused into it run as one kernel.
TEMPLATE_KINDS = frozenset(
    {
        KernelKind.TRITON_TEMPLATE,
        KernelKind.CPP_GEMM_TEMPLATE,
        KernelKind.NV_UNIVERSAL_GEMM,
        KernelKind.CUTLASS_CPP,
        KernelKind.CUTEDSL,
    }
)

# FX dtype codes in graph-fragment tensor types ("f16[16, 4096][4096, 1]cuda:0") -> torch dtype names.
_DTYPE_CODES = {
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "float64",
    "i64": "int64",
    "i32": "int32",
    "i16": "int16",
    "i8": "int8",
    "u8": "uint8",
    "b8": "bool",
    "c64": "complex64",
    "c128": "complex128",
    "f8e4m3fn": "float8_e4m3fn",
    "f8e5m2": "float8_e5m2",
    "f8e4m3fnuz": "float8_e4m3fnuz",
    "f8e5m2fnuz": "float8_e5m2fnuz",
}


@dataclass(frozen=True, slots=True)
class FxNode:
    """One line of a kernel's "Graph fragment"."""

    name: str
    op: str  # "placeholder" or "call_function" (or another FX opcode, kept as written)
    target: str  # "torch.ops.aten.addmm.default", or the placeholder's target name
    inputs: tuple[str, ...]  # the %names it reads, in argument order
    args: str  # the raw "args = (...)" text, for evidence
    dtype: str | None  # torch dtype name ("float16")
    shape: tuple[int | str, ...] | None
    num_users: int | None
    line: int

    @property
    def is_placeholder(self) -> bool:
        return self.op.lower() == "placeholder"

    @property
    def aten_op(self) -> str:
        """The op's packet name: ``torch.ops.aten.addmm.default`` -> ``addmm``; a placeholder gives ''."""
        if self.is_placeholder:
            return ""
        return op_base_name(self.target)


@dataclass(frozen=True, slots=True)
class KernelDef:
    """A kernel defined in the module (``name = async_compile.<method>(...)``)."""

    name: str
    kind: str
    method: str  # the async_compile method: triton, cuda, nv_universal_gemm, cpp_pybinding, cutedsl...
    line: int  # 1-based line of the definition in the file
    source_nodes: tuple[str, ...] = ()
    origins: tuple[str, ...] = ()  # "Original ATen": ("aten.t", "aten.addmm")
    node_mapping: tuple[tuple[str, tuple[str, ...]], ...] = ()  # ("input_1", ("addmm", "permute"))
    fragment: tuple[FxNode, ...] = ()
    returns: tuple[str, ...] = ()
    params: tuple[str, ...] = ()  # the kernel's tensor/pointer parameters, in call order
    outputs: tuple[str, ...] = ()  # the params it writes (out_ptr*, in_out_ptr*, non-const C pointers)
    profiler_names: tuple[str, ...] = ()  # names the kernel records itself under (C++ RecordFunction)
    detail: tuple[tuple[str, str], ...] = ()  # kind-specific facts (NVGEMM operator, has_epilogue, M/N/K...)
    source: str = ""  # the kernel's source as compiled (Triton Python, C++): what it computes is read from it
    # its body calls tl.dot / tl.dot_scaled: it computes a matrix product, whatever its name, its decorator or its
    # graph fragment says (a template with a fused prologue, a native-matmul reduction, a user's Triton kernel)
    runs_dot: bool = False

    @property
    def computed(self) -> tuple[FxNode, ...]:
        """Every call_function node the fragment lists: what the kernel computes, plus, in some templates, the
        origin nodes of an input it only reads (see ``computed_here``)."""
        return tuple(n for n in self.fragment if not n.is_placeholder)

    @property
    def computed_here(self) -> tuple[FxNode, ...]:
        """The call_function nodes this kernel really computes.

        A template's fragment can list the nodes that produced one of its inputs although it reads that input
        from memory (seen on the H200: ``%convert_element_type_1`` as PlaceHolder and call_function, with the
        layer norm that made it, in ``triton_tem_fused_addmm_native_layer_norm_t_view_1``). A node listed as
        both is computed here only when the kernel returns it (the template's own GEMM output); a node whose
        inputs the kernel neither reads nor computes is not computed here, unless the fragment has
        placeholders no node names, which stand for such inputs (split reductions read ``%buf1`` where the
        node says ``%getitem``).
        """
        placeholders = {p.name for p in self.placeholders}
        calls = self.computed
        referenced = {i for n in calls for i in n.inputs}
        spare = bool(placeholders - referenced)
        here: list[FxNode] = []
        done: set[str] = set()
        for n in calls:
            if n.name in placeholders and n.name not in self.returns:
                continue
            missing = [i for i in n.inputs if i not in placeholders and i not in done]
            if missing and not spare:
                continue
            here.append(n)
            done.add(n.name)
        return tuple(here)

    @property
    def placeholders(self) -> tuple[FxNode, ...]:
        return tuple(n for n in self.fragment if n.is_placeholder)

    def node(self, name: str) -> FxNode | None:
        # A template's fragment can list its GEMM node twice (as PlaceHolder and as call_function): prefer the
        # latter.
        found = None
        for n in self.fragment:
            if n.name == name:
                if not n.is_placeholder:
                    return n
                found = found or n
        return found

    def source_of(self, node_name: str) -> str | None:
        for src, nodes in self.node_mapping:
            if node_name in nodes:
                return src
        return None

    def get(self, key: str) -> str | None:
        return next((v for k, v in self.detail if k == key), None)

    @property
    def name_ops(self) -> tuple[str, ...]:
        """The op names Inductor put in the kernel name (sorted original ATen ops), e.g. ("addmm", "gelu")."""
        return name_tokens(self.name)


@dataclass(frozen=True, slots=True)
class Launch:
    """One call in the wrapper's ``call()`` that runs work: a defined kernel, or an extern / ATen op."""

    index: int
    line: int
    kind: str  # "kernel" or "extern"
    # the KernelDef name, or the callee as written (extern_kernels.addmm, torch.ops.mkl._mkl_linear.default)
    name: str
    op: str | None  # extern ATen op name ("addmm", "bias_addmm", "_mkl_linear"); None for kernels
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    text: str
    source_nodes: tuple[str, ...] = ()
    origins: tuple[str, ...] = ()
    literals: tuple[str, ...] = ()  # string arguments, e.g. a oneDNN post-op attr "gelu"
    args: tuple[str, ...] = ()  # positional arguments as written (ast.unparse)
    kwargs: tuple[tuple[str, str], ...] = ()
    # the tensor name each positional argument refers to (buf0 for reinterpret_tensor(buf0, ...)), None for
    # scalars: the call site's buffers, which differ at each call site of one kernel definition
    arg_names: tuple[str | None, ...] = ()
    # Inductor's provenance handle of this call site ("extern_kernels.addmm:3", from the
    # "# [Provenance debug handles]" comment above it; torch with trace.provenance_tracking_level on):
    # the key of the graph's provenance JSON (kernelscope.provenance.parse_inductor_provenance)
    debug_handle: str | None = None

    @property
    def qualified_op(self) -> str:
        """An extern call's op as the dispatcher and the profiler name it (``torch.ops.transformers.
        grouped_mm_fallback.default`` -> ``transformers::grouped_mm_fallback``, ``extern_kernels.mm`` ->
        ``aten::mm``); '' for a kernel launch or a callee that names no op."""
        if self.kind != "extern" or not self.op:
            return ""
        parts = self.name.split(".")
        if self.name.startswith("torch.ops.") and len(parts) >= 4:
            return f"{parts[2]}::{parts[3]}"
        if self.name.startswith("extern_kernels."):
            return f"aten::{self.op}"
        return f"{parts[0]}::{self.op}" if len(parts) >= 2 else ""


@dataclass(frozen=True, slots=True)
class Buffer:
    """What the wrapper says about a tensor name: its shape and dtype (allocation, assert or reinterpret)."""

    name: str
    shape: tuple[int | str, ...] | None
    dtype: str | None
    line: int


@dataclass(frozen=True, slots=True)
class OutputCode:
    """One compiled graph's output code."""

    path: str
    module_index: int
    first_line: (
        int  # line of this module's first line in the file (modules are separated by MODULE_SEPARATOR)
    )
    kernels: tuple[KernelDef, ...]
    launches: tuple[Launch, ...]
    graph_inputs: tuple[str, ...]
    constants: tuple[str, ...]
    buffers: tuple[Buffer, ...]
    aliases: tuple[tuple[str, str], ...]  # (new name, old name): reuse and reinterpret_tensor views
    outputs: tuple[str, ...]
    device: str | None
    notes: tuple[str, ...] = ()
    # Inductor's provenance of this graph (the worker's graph_N.provenance.json beside the code), when recorded:
    # kernelscope.provenance.GraphProvenance; None otherwise (the comments and graph_code are the fallback)
    provenance: Any = None
    # Which module called each traced node of this graph (the worker's graph_N.modules.json beside the code):
    # kernelscope.provenance.GraphCallers; None when not recorded
    callers: Any = None
    # Lookups by name, built once: the analysis asks for buffers and storages per GEMM parameter and per kernel,
    # and a scan of every buffer per question grew with the square of the model's layers.
    _by_name: dict[str, Buffer] = field(init=False, repr=False, compare=False)
    _parents: dict[str, str] = field(init=False, repr=False, compare=False)
    _kernels: dict[str, KernelDef] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name: dict[str, Buffer] = {}
        for b in self.buffers:  # the last one with a shape, else the first one named so
            if b.shape is not None or b.name not in by_name:
                by_name[b.name] = b
        object.__setattr__(self, "_by_name", by_name)
        object.__setattr__(self, "_parents", dict(self.aliases))
        kernels: dict[str, KernelDef] = {}
        for k in self.kernels:
            kernels.setdefault(k.name, k)
        object.__setattr__(self, "_kernels", kernels)

    def kernel(self, name: str) -> KernelDef | None:
        return self._kernels.get(name)

    def buffer(self, name: str) -> Buffer | None:
        """What is known of a name's shape/dtype; a reuse alias (buf1 = buf0) answers with its storage's."""
        found = self._by_name.get(name)
        if found is None or found.shape is None:
            root = self.storage(name)
            if root != name:
                return self.buffer(root) or found
        return found

    def storage(self, name: str) -> str:
        """The underlying allocation a name refers to, following reuse/reinterpret aliases."""
        parents = self._parents
        seen = set()
        while name in parents and name not in seen:
            seen.add(name)
            name = parents[name]
        return name

    def where(self, line: int) -> str:
        return f"{Path(self.path).name}:{line}"


# ------------------------------------------------------------------------------------------------------------
# Small helpers (public: the analysis uses the same vocabulary)

_OVERLOADS = frozenset(
    {"default", "out", "self", "dim", "int", "float", "names", "input", "vec", "using_ints"}
)


def op_base_name(target: str) -> str:
    """``torch.ops.aten.addmm.default`` -> ``addmm``; ``aten.gelu`` -> ``gelu``; ``relu`` -> ``relu``."""
    t = target.strip()
    t = t.removeprefix("torch.ops.")
    parts = t.split(".")
    if len(parts) >= 3:  # namespace.op.overload
        return parts[1]
    if len(parts) == 2:  # namespace.op (an origin) or op.overload
        second = parts[1]
        return parts[0] if second in _OVERLOADS or second[:1].isupper() else second
    return parts[0]


_MULTIWORD = vocab.MULTIWORD_OPS
_KERNEL_PREFIX = vocab.INDUCTOR_KERNEL_PREFIX


def name_tokens(kernel_name: str) -> tuple[str, ...]:
    """The op names in an Inductor kernel name: ``triton_poi_fused_add_mul_relu_0`` -> (add, mul, relu).

    Inductor builds the name as "fused_" + the sorted original ATen op names (+ "_<n>", or "_<hash>" for
    CUTLASS and NVGEMM), so this reads origins, not dataflow: the analysis uses it only for kernels without a
    graph fragment.
    """
    name = _KERNEL_PREFIX.sub("", kernel_name)
    if name.startswith("fused_"):
        name = name[len("fused_") :]
    elif "_fused_" in name:
        name = name.split("_fused_", 1)[1]
    else:
        return ()
    name = re.sub(r"_(\d+|[0-9a-f]{8})$", "", name)
    parts = name.split("_")
    tokens: list[str] = []
    i = 0
    while i < len(parts):
        for w in _MULTIWORD:
            wp = w.split("_")
            if parts[i : i + len(wp)] == wp:
                tokens.append(w)
                i += len(wp)
                break
        else:
            if parts[i]:
                tokens.append(parts[i])
            i += 1
    return tuple(tokens)


def torch_dtype_name(text: str | None) -> str | None:
    """Normalise dtype spellings from code and traces to torch names ("f16", "torch.float16", "c10::Half")."""
    if not text:
        return None
    t = text.strip()
    if t in _DTYPE_CODES:
        return _DTYPE_CODES[t]
    if t.startswith("torch."):
        return t[len("torch.") :]
    c10 = {
        "c10::Half": "float16",
        "c10::BFloat16": "bfloat16",
        "float": "float32",
        "double": "float64",
        "c10::Float8_e4m3fn": "float8_e4m3fn",
        "c10::Float8_e5m2": "float8_e5m2",
        "long int": "int64",
        "int": "int32",
        "bool": "bool",
        "signed char": "int8",
        "unsigned char": "uint8",
        "half": "float16",
        "bfloat16": "bfloat16",
        "at::Half": "float16",
        "at::BFloat16": "bfloat16",
        "__half": "float16",
        "__nv_bfloat16": "bfloat16",
    }
    return c10.get(t, t)


# ------------------------------------------------------------------------------------------------------------
# Comment blocks

_TOPO = re.compile(
    r"^#\s*Topologically Sorted Source Nodes:\s*\[(?P<src>[^\]]*)\](?:,\s*Original "
    r"ATen:\s*\[(?P<orig>[^\]]*)\])?"
)
# "# [Provenance debug handles] triton_poi_fused_gelu_1:2" (torch >= 2.9 with provenance tracking; seen on torch
# 2.11 and 2.14.1 output code): one handle per call site, a reused kernel definition gets one at each
_HANDLES = re.compile(r"^#\s*\[Provenance debug handles\]\s*(?P<handles>.+?)\s*$")
_MAPPING_HEAD = re.compile(r"^#\s*Source node to ATen node mapping:\s*$")
_MAPPING = re.compile(r"^#\s+(?P<src>[\w.]+)\s*=>\s*(?P<nodes>.*)$")
_FRAGMENT_HEAD = re.compile(r"^#\s*Graph fragment:\s*$")
_FRAGMENT_RETURN = re.compile(r"^#\s+return\s+(?P<names>.*)$")
_FX_LINE = re.compile(
    r"^#\s+%(?P<name>[\w.]+)\s*:\s*(?P<type>.*?)\s*=\s*"
    r"(?P<op>PlaceHolder|placeholder|call_function|call_method|call_module|get_attr)"
    r"\[target=(?P<target>[^\]]*)\]"
    r"(?:\(args = \((?P<args>.*)\), kwargs = \{(?P<kwargs>.*)\}\))?\s*$"
)
_TENSOR_TYPE = re.compile(r'"(?P<dt>[a-z]+\d*(?:e\d+m\d+\w*)?)\[(?P<shape>[^\]]*)\]')
_NUM_USERS = re.compile(r"\[num_users=(\d+)\]")
_FX_REF = re.compile(r"%([\w.]+)")


def _split_list(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    return tuple(s.strip() for s in text.split(",") if s.strip())


def _shape(text: str) -> tuple[int | str, ...]:
    out: list[int | str] = []
    for part in _split_list(text):
        try:
            out.append(int(part))
        except ValueError:
            out.append(part)
    return tuple(out)


def _parse_fx_line(line: str, lineno: int) -> FxNode | None:
    m = _FX_LINE.match(line)
    if not m:
        return None
    type_text = m.group("type") or ""
    tm = _TENSOR_TYPE.search(type_text)
    um = _NUM_USERS.search(type_text)
    args = m.group("args") or ""
    kwargs = m.group("kwargs") or ""
    op = m.group("op")
    return FxNode(
        name=m.group("name"),
        op="placeholder" if op in ("PlaceHolder", "placeholder") else op,
        target=m.group("target").strip(),
        inputs=tuple(_FX_REF.findall(args + " " + kwargs)),
        args=args,
        dtype=torch_dtype_name(tm.group("dt")) if tm else None,
        shape=_shape(tm.group("shape")) if tm else None,
        num_users=int(um.group(1)) if um else None,
        line=lineno,
    )


@dataclass(slots=True)
class _Header:
    source_nodes: tuple[str, ...] = ()
    origins: tuple[str, ...] = ()
    mapping: tuple[tuple[str, tuple[str, ...]], ...] = ()
    fragment: tuple[FxNode, ...] = ()
    returns: tuple[str, ...] = ()


def _comment_block_above(lines: list[str], idx: int) -> list[tuple[int, str]]:
    """The contiguous ``#`` lines directly above line index ``idx`` (0-based), as (index, text)."""
    out: list[tuple[int, str]] = []
    i = idx - 1
    while i >= 0 and lines[i].lstrip().startswith("#"):
        out.append((i, lines[i].strip()))
        i -= 1
    out.reverse()
    return out


def _parse_header(block: list[tuple[int, str]], line_offset: int) -> _Header:
    h = _Header()
    mapping: list[tuple[str, tuple[str, ...]]] = []
    fragment: list[FxNode] = []
    section = None
    for i, text in block:
        m = _TOPO.match(text)
        if m:
            h.source_nodes = _split_list(m.group("src"))
            h.origins = _split_list(m.group("orig"))
            section = None
            continue
        if _MAPPING_HEAD.match(text):
            section = "mapping"
            continue
        if _FRAGMENT_HEAD.match(text):
            section = "fragment"
            continue
        if section == "mapping":
            mm = _MAPPING.match(text)
            if mm:
                mapping.append((mm.group("src"), _split_list(mm.group("nodes"))))
                continue
        if section == "fragment":
            rm = _FRAGMENT_RETURN.match(text)
            if rm:
                h.returns = tuple(_FX_REF.findall(rm.group("names")))
                continue
            node = _parse_fx_line(text, i + 1 + line_offset)
            if node is not None:
                fragment.append(node)
                continue
        if text.startswith(("# kernel path:", "# [Provenance")):
            section = None
    h.mapping = tuple(mapping)
    h.fragment = tuple(fragment)
    return h


# ------------------------------------------------------------------------------------------------------------
# Kernel sources

_TRITON_DECORATOR = re.compile(r"@triton_heuristics\.(\w+)\(")
_PY_DEF = re.compile(r"^def (\w+)\(([^)]*)\)", re.MULTILINE)
_C_SIGNATURE = re.compile(
    r'(?:extern\s+"C"\s*\{?\s*)?(?:PT_EXPORT\s+)?(?:void|int)\s+(\w+)\s*\(([^)]*)\)\s*\{', re.DOTALL
)
_RECORD_FUNCTION = re.compile(r'RAIIAtenRecordFunctionHandle\s+\w+\("([^"]+)"')
_NVGEMM_KERNEL = re.compile(r"^_KERNEL_NAME\s*=\s*'([^']*)'", re.MULTILINE)
_NVGEMM_EPILOGUE = re.compile(r"has_epilogue=(True|False)")
_CUTLASS_CONFIG = re.compile(r"//\s*configuration name:\s*(\S+)")
_CPP_GEMM_NAME = re.compile(r"gemm_m(\d+)n(\d+)k(\d+)")
# A Triton body's matrix product: a tl.dot / tl.dot_scaled call on a line that is not a comment up to it.
_TRITON_DOT = re.compile(r"^[^#\n]*\btl\.dot(?:_scaled)?\s*\(", re.MULTILINE)

# What an activation looks like in Inductor's C++ (CPU) code, vectorized or scalar. C++ kernels carry no graph
# fragment and their names list origins (which can include ops they do not run), so a name's activation is
# only
# believed when its code is there.
CPP_OP_SIGNATURES: dict[str, re.Pattern[str]] = {
    "relu": re.compile(r"clamp_min\(|std::max\(|max_propagate_nan\(|\bmaximum\("),
    "gelu": re.compile(r"\berf\(|\.erf\(\)|erf_"),
    "sigmoid": re.compile(r"sigmoid|\bexp\(|\.exp\(\)|exp_u20"),
    "silu": re.compile(r"sigmoid|\bexp\(|\.exp\(\)|exp_u20"),
    "tanh": re.compile(r"tanh"),
    "hardtanh": re.compile(r"clamp_max\(|std::min\(|\bminimum\("),
    "clamp": re.compile(r"clamp|std::min\(|std::max\("),
    "leaky_relu": re.compile(r"blendv|decltype\(.*\)::blendv|\? |where"),
    "mish": re.compile(r"tanh"),
    "elu": re.compile(r"\bexp|expm1"),
}


def _kind(method: str, name: str, source: str) -> KernelKind:
    if method == "triton":
        deco = _TRITON_DECORATOR.search(source)
        d = deco.group(1) if deco else ""
        if d == "template" or name.startswith(("triton_tem_", "triton_tma_", "triton_persistent_")):
            return KernelKind.TRITON_TEMPLATE
        if d == "pointwise" or name.startswith("triton_poi_"):
            return KernelKind.TRITON_POINTWISE
        if d in (
            "reduction",
            "persistent_reduction",
            "split_scan",
            "cooperative_reduction",
        ) or name.startswith(("triton_per_", "triton_red_")):
            return KernelKind.TRITON_REDUCTION
        return KernelKind.TRITON_OTHER
    if method == "nv_universal_gemm":
        return KernelKind.NV_UNIVERSAL_GEMM
    if method in ("cutedsl", "cute_dsl"):
        return KernelKind.CUTEDSL
    if method == "cuda":
        return (
            KernelKind.CUTLASS_CPP
            if "cutlass" in source.lower() or name.startswith("cutlass")
            else KernelKind.CUDA_CPP
        )
    if method in ("cpp", "cpp_pybinding"):
        # The C++ GEMM template inlines its micro-kernel ("kernel_micro_gemm", CppMicroGemm*) and records
        # itself
        # as graph_<n>_gemm_m<M>n<N>k<K>_kernel.
        if "micro_gemm" in source or "CppMicroGemm" in source or _CPP_GEMM_NAME.search(source):
            return KernelKind.CPP_GEMM_TEMPLATE
        return KernelKind.CPP_KERNEL
    return KernelKind.OTHER


def _c_params(sig: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Names and written names of a C signature's pointer parameters (non-const pointers are written)."""
    params: list[str] = []
    outputs: list[str] = []
    for raw in sig.split(","):
        p = " ".join(raw.split())
        if not p:
            continue
        name = re.split(r"[\s*&]+", p)[-1]
        if "*" not in p:
            if "cudaStream_t" in p:
                continue
            params.append(name)  # scalar args (M, N, K, ...) still take a call position
            continue
        params.append(name)
        if not p.startswith("const ") and "workspace" not in name:
            outputs.append(name)
    return tuple(params), tuple(outputs)


def _kernel_signature(
    kind: KernelKind, name: str, source: str, arg_types: list[str] | None
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(params, outputs, profiler_names, detail) of a kernel from its source."""
    params: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    detail: list[tuple[str, str]] = []
    if kind in (
        KernelKind.TRITON_POINTWISE,
        KernelKind.TRITON_REDUCTION,
        KernelKind.TRITON_TEMPLATE,
        KernelKind.TRITON_OTHER,
    ):
        params, outputs = _py_params(source, name, lambda p: p.split(":")[0].split("=")[0].strip())
        # inductor_meta records the compile's config: says whether max-autotune was on when no one else does
        mm = re.search(r"'max_autotune': (True|False)", source)
        if mm:
            detail.append(("max_autotune", mm.group(1)))
    elif kind is KernelKind.NV_UNIVERSAL_GEMM:
        params, outputs = _py_params(source, f"{name}_main", lambda p: p.split("=")[0].strip(), skip=("stream",))
        km = _NVGEMM_KERNEL.search(source)
        if km:
            detail.append(("operator", km.group(1)))
        em = _NVGEMM_EPILOGUE.search(source)
        if em:
            detail.append(("has_epilogue", em.group(1)))
    elif kind in (
        KernelKind.CUTLASS_CPP,
        KernelKind.CUDA_CPP,
        KernelKind.CPP_KERNEL,
        KernelKind.CPP_GEMM_TEMPLATE,
    ):
        params, outputs = _c_kernel_params(kind, name, source, arg_types)
        detail += _c_kernel_detail(kind, source, params, outputs)
    profiler = tuple(dict.fromkeys(_RECORD_FUNCTION.findall(source)))
    return params, outputs, profiler, tuple(detail)


def _py_params(
    source: str, def_name: str, clean: Callable[[str], str], skip: tuple[str, ...] = ()
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(params, outputs) of the Python ``def <def_name>(...)`` in a Triton or NVGEMM kernel's source: outputs
    are the ``out_ptr`` / ``in_out_ptr`` parameters."""
    params: tuple[str, ...] = ()
    for m in _PY_DEF.finditer(source):
        if m.group(1) == def_name:
            ps = [clean(p) for p in m.group(2).split(",")]
            params = tuple(p for p in ps if p and p not in skip)
            break
    return params, tuple(p for p in params if p.startswith(("out_ptr", "in_out_ptr")))


def _c_kernel_params(
    kind: KernelKind, name: str, source: str, arg_types: list[str] | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(params, outputs) of a C++ / CUDA kernel's signature (non-const pointers are written)."""
    params: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    for m in _C_SIGNATURE.finditer(source):
        if m.group(1) in (name, "kernel"):
            params, outputs = _c_params(m.group(2))
            break
    if arg_types and kind in (KernelKind.CPP_KERNEL, KernelKind.CPP_GEMM_TEMPLATE):
        # cpp_pybinding's first argument lists the C types in call order: trust it over the regex.
        ptr = [t for t in arg_types if "*" in t]
        if params and len(ptr) == len([p for p in params]):
            outputs = tuple(p for p, t in zip(params, ptr) if not t.strip().startswith("const"))
    return params, outputs


def _c_kernel_detail(
    kind: KernelKind, source: str, params: tuple[str, ...], outputs: tuple[str, ...]
) -> list[tuple[str, str]]:
    """What a C++ / CUDA kernel's source says beyond its signature: the CUTLASS configuration; a C++ GEMM
    template's M, N, K, dtype and epilogue; the ops a C++ kernel's code performs."""
    detail: list[tuple[str, str]] = []
    cm = _CUTLASS_CONFIG.search(source)
    if cm:
        detail.append(("cutlass_config", cm.group(1)))
    gm = _CPP_GEMM_NAME.search(source)
    if gm and kind is KernelKind.CPP_GEMM_TEMPLATE:
        detail += [("m", gm.group(1)), ("n", gm.group(2)), ("k", gm.group(3))]
    code_part = source
    if kind is KernelKind.CPP_GEMM_TEMPLATE:
        ctype = re.search(r"\(\s*const\s+([\w:]+)\s*\*\s*X\b", source)
        if ctype:
            detail.append(("dtype", torch_dtype_name(ctype.group(1)) or ctype.group(1)))
        # Epilogue code follows the micro-GEMM calls: it reloads the GEMM result (Y) and stores it back.
        last_gemm = source.rfind("micro_gemm<")
        code_part = source[last_gemm:] if last_gemm >= 0 else ""
        epilogue = bool(re.search(r"loadu\(\s*Y\s*\+|Y\[", code_part) and ".store(" in code_part)
        detail.append(("epilogue_code", str(epilogue)))
        # Inputs besides X and W (in_ptr*) feed the epilogue: a bias, a residual.
        extra = [p for p in params if p not in ("X", "W", "Y") and p not in outputs and "ptr" in p]
        detail.append(("epilogue_inputs", str(len(extra))))
    if kind in (KernelKind.CPP_KERNEL, KernelKind.CPP_GEMM_TEMPLATE):
        found = [op for op, rx in CPP_OP_SIGNATURES.items() if rx.search(code_part)]
        detail.append(("code_ops", ",".join(found)))
    return detail


# ------------------------------------------------------------------------------------------------------------
# Wrapper


def _const_str(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _base_name(node: ast.AST) -> str | None:
    """The tensor name an argument expression refers to: buf0, reinterpret_tensor(buf0, ...),
    c_void_p(buf0.data_ptr()).
    """
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Starred):
        return _base_name(node.value)
    if isinstance(node, ast.Call):
        if node.args:
            return _base_name(node.args[0])
        if isinstance(node.func, ast.Attribute):  # buf0.data_ptr()
            return _base_name(node.func.value)
        return None
    if isinstance(node, ast.Attribute):
        return _base_name(node.value)
    if isinstance(node, ast.Subscript):
        return _base_name(node.value)
    return None


_NOT_LAUNCHES = frozenset(
    {
        "assert_size_stride",
        "assert_size_stride_grouped",
        "assert_alignment",
        "assert_tensor_metadata",
        "get_raw_stream",
        "torch.cuda.set_device",
        "torch.cuda._DeviceGuard",
        "args.clear",
        "copy_if_misaligned",
        "empty_strided_cuda",
        "empty_strided_cpu",
        "empty_strided_xpu",
        "empty_strided_mtia",
        "empty_strided",
        "reinterpret_tensor",
        "alloc_from_pool",
        "run_intermediate_hooks",
        "print",
        "len",
        "range",
        "torch.empty",
        "empty_strided_cpu_pinned",
        "empty_strided_p2p",
        "start_graph",
        "end_graph",
        "torch._check",
        "sync",
        "torch.cuda.synchronize",
        "torch.cpu._DeviceGuard",
        "gc.collect",
    }
)
_ALLOC = frozenset(
    {
        "empty_strided_cuda",
        "empty_strided_cpu",
        "empty_strided_xpu",
        "empty_strided_mtia",
        "empty_strided",
        "empty_strided_cpu_pinned",
        "empty_strided_p2p",
        "torch.empty_strided",
    }
)


def _flatten_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for st in body:
        if isinstance(st, (ast.With, ast.AsyncWith, ast.For, ast.While, ast.Try)):
            out.extend(_flatten_statements(st.body))
            for h in getattr(st, "handlers", []):
                out.extend(_flatten_statements(h.body))
            out.extend(_flatten_statements(getattr(st, "orelse", [])))
            out.extend(_flatten_statements(getattr(st, "finalbody", [])))
        elif isinstance(st, ast.If):
            out.extend(_flatten_statements(st.body))
            out.extend(_flatten_statements(st.orelse))
        else:
            out.append(st)
    return out


def _find_call_def(tree: ast.Module) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "call":
            return node
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, ast.FunctionDef) and sub.name == "call":
                    return sub
    return None


@dataclass(slots=True)
class _WrapperState:
    kernels: dict[str, KernelDef]
    lines: list[str]
    offset: int
    tensors: set[str]
    launches: list[Launch]
    buffers: list[Buffer]
    aliases: list[tuple[str, str]]
    graph_inputs: list[str]
    outputs: list[str]
    device: str | None = None
    handle: str | None = None  # a "[Provenance debug handles]" comment waiting for its launch


def _shape_literal(node: ast.AST | None) -> tuple[int | str, ...] | None:
    if node is None:
        return None
    v = _literal(node)
    if isinstance(v, (tuple, list)) and all(isinstance(x, int) for x in v):
        return tuple(v)
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_literal(e) if isinstance(_literal(e), int) else ast.unparse(e) for e in node.elts)
    return None


def _dtype_arg(node: ast.AST | None) -> str | None:
    d = _dotted(node) if node is not None else None
    return torch_dtype_name(d) if d else None


def _comments_between(lines: list[str], start: int, end: int) -> list[str]:
    """Comment lines with 0-based indices in [start, end)."""
    return [
        lines[i].strip()
        for i in range(max(start, 0), min(end, len(lines)))
        if lines[i].strip().startswith("#")
    ]


def _partition_index(stmt: ast.stmt) -> int | None:
    """``(buf1,) = self.partitions[0](partition0_args)``: a graph partition's call (cudagraph partitions)."""
    for node in ast.walk(stmt):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, int)
            and (_dotted(node.value) or "").endswith("partitions")
        ):
            return node.slice.value
    return None


def _parse_wrapper(tree: ast.Module, st: _WrapperState) -> None:
    call = _find_call_def(tree)
    if call is None:
        return
    # With graph partitions (reduce-overhead), call() runs module-level partition_<i>(args) functions in
    # order.
    partitions = {
        int(fn.name.rsplit("_", 1)[1]): fn
        for fn in tree.body
        if isinstance(fn, ast.FunctionDef) and re.fullmatch(r"partition_\d+", fn.name)
    }
    _walk_function(call, st, partitions, top=True)
    st.graph_inputs[:] = list(dict.fromkeys(st.graph_inputs))


def _walk_function(
    fn: ast.FunctionDef, st: _WrapperState, partitions: dict[int, ast.FunctionDef], *, top: bool
) -> None:
    prev_end = fn.lineno  # 1-based line of the def
    # The comment naming a call site's source nodes can stand above a `stream0 = get_raw_stream(0)` or an
    # allocation before the launch it belongs to: it stays pending until a launch takes it.
    src_nodes: tuple[str, ...] = ()
    origins: tuple[str, ...] = ()
    for stmt in _flatten_statements(fn.body):
        comments = _comments_between(st.lines, prev_end, stmt.lineno - 1)
        prev_end = stmt.end_lineno or stmt.lineno
        for c in comments:
            m = _TOPO.match(c)
            if m:
                src_nodes, origins = _split_list(m.group("src")), _split_list(m.group("orig"))
            h = _HANDLES.match(c)
            if h:
                st.handle = _split_list(h.group("handles"))[0] if _split_list(h.group("handles")) else None
        before = len(st.launches)
        index = _partition_index(stmt)
        if index is not None and index in partitions:
            _walk_function(partitions[index], st, partitions, top=False)
            if isinstance(stmt, ast.Assign):  # the partition's outputs, by the names it returns
                for t in stmt.targets:
                    st.tensors.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
            continue
        if isinstance(stmt, ast.Return) and not top:
            continue  # a partition's return is not the graph's output
        _wrapper_statement(stmt, st, src_nodes, origins)
        if len(st.launches) > before:
            src_nodes, origins = (), ()
            st.handle = None


def _record_launch(
    st: _WrapperState,
    stmt: ast.stmt,
    call: ast.Call,
    kind: str,
    name: str,
    op: str | None,
    writes_extra: tuple[str, ...],
    src_nodes: tuple[str, ...],
    origins: tuple[str, ...],
) -> None:
    line = stmt.lineno + st.offset
    text = st.lines[stmt.lineno - 1].strip() if stmt.lineno - 1 < len(st.lines) else ""
    arg_names = [_base_name(a) for a in call.args]
    literals = tuple(
        str(v) for a in list(call.args) + [k.value for k in call.keywords] for v in _flat_literals(a)
    )
    reads, writes = _reads_writes(st, call, kind, name, arg_names, writes_extra)
    st.launches.append(
        Launch(
            index=len(st.launches),
            line=line,
            kind=kind,
            name=name,
            op=op,
            reads=tuple(dict.fromkeys(reads)),
            writes=tuple(dict.fromkeys(writes)),
            text=text,
            source_nodes=src_nodes,
            origins=origins,
            literals=literals,
            args=tuple(ast.unparse(a) for a in call.args),
            kwargs=tuple((k.arg or "**", ast.unparse(k.value)) for k in call.keywords),
            arg_names=tuple(n if n is not None and n in st.tensors else None for n in arg_names),
            debug_handle=_handle_for(st.handle, name),
        )
    )
    st.handle = None


def _mutates_first(name: str) -> bool:
    """Whether an extern call is an in-place op (``torch.ops.<ns>.<name>_.<overload>``: the op's name ends in one
    underscore), which writes its first argument."""
    parts = name.split(".")
    return len(parts) >= 4 and parts[:2] == ["torch", "ops"] and parts[3].endswith("_") and \
        not parts[3].endswith("__")


def _reads_writes(
    st: _WrapperState,
    call: ast.Call,
    kind: str,
    name: str,
    arg_names: list[str | None],
    writes_extra: tuple[str, ...],
) -> tuple[list[str], list[str]]:
    """The buffers a launch reads and writes: by the kernel's signature (its out_ptr / in_out_ptr parameters),
    else outputs last; an ``out=`` keyword is written, other tensor keywords read."""
    reads: list[str] = []
    writes: list[str] = list(writes_extra)
    kd = st.kernels.get(name) if kind == "kernel" else None
    if kd is not None and kd.params:
        params = list(kd.params)
        for i, n in enumerate(arg_names):
            if n is None or n not in st.tensors:
                continue
            p = params[i] if i < len(params) else None
            if p is not None and p in kd.outputs:
                writes.append(n)
                if p.startswith("in_out_ptr"):
                    reads.append(n)
            else:
                reads.append(n)
    else:
        tensor_args = [n for n in arg_names if n is not None and n in st.tensors]
        reads.extend(tensor_args)
        if kind == "kernel" and not writes and tensor_args:
            # No signature: Inductor passes outputs last (out_ptr after in_ptr).
            writes.append(tensor_args[-1])
        elif kind != "kernel" and _mutates_first(name) and arg_names and arg_names[0] in st.tensors:
            # an in-place op writes its first argument: oneDNN's ``_convolution_pointwise_.binary(other, X, W,
            # B, ..., 'add', ...)`` adds the convolution into ``other`` (a bf16-capable CPU's residual blocks)
            writes.append(arg_names[0])
    for kw in call.keywords:
        n = _base_name(kw.value)
        if n is None or n not in st.tensors:
            continue
        if kw.arg == "out":
            writes.append(n)
        else:
            reads.append(n)
    return reads, writes


def _handle_for(handle: str | None, name: str) -> str | None:
    """The pending provenance handle, when it names this launch ("extern_kernels.addmm:3" above
    ``extern_kernels.addmm(...)``; a kernel's handle names its definition)."""
    if not handle:
        return None
    head = handle.rpartition(":")[0]
    return handle if head and (head == name or name.endswith("." + head) or head.endswith("." + name)) else None


def _flat_literals(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, (ast.List, ast.Tuple)):
        for e in node.elts:
            yield from _flat_literals(e)


def _extern_op(callee: str) -> str | None:
    """``extern_kernels.addmm`` -> addmm; ``torch.ops.mkl._mkl_linear.default`` -> _mkl_linear; ``aten.mm`` ->
    mm.
    """
    if callee.startswith("extern_kernels."):
        return callee.split(".", 1)[1]
    parts = callee.split(".")
    if callee.startswith("torch.ops.") and len(parts) >= 4:
        return parts[3]
    if (
        parts[0] in ("aten", "prims", "mkldnn", "mkl", "onednn", "inductor_ops", "_quantized")
        and len(parts) >= 2
    ):
        return parts[1]
    return None


def _wrapper_statement(
    stmt: ast.stmt, st: _WrapperState, src_nodes: tuple[str, ...], origins: tuple[str, ...]
) -> None:
    """One statement of the wrapper's ``call()``: what it adds to the graph's inputs, buffers, aliases, launches
    and outputs."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        _assignment(stmt, st, src_nodes, origins)
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        _call_statement(stmt, stmt.value, st, src_nodes, origins)
    elif isinstance(stmt, ast.Return) and stmt.value is not None:
        vals = stmt.value.elts if isinstance(stmt.value, (ast.Tuple, ast.List)) else [stmt.value]
        for v in vals:
            n = _base_name(v)
            if n:
                st.outputs.append(n)


def _assignment(stmt: ast.Assign, st: _WrapperState, src_nodes: tuple[str, ...], origins: tuple[str, ...]) -> None:
    """``a, b = args`` (the graph's inputs), ``buf1 = buf0`` (a reuse), ``buf7 = buf6[0]``, or ``name = call(...)``."""
    target, value = stmt.targets[0], stmt.value
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Name) and value.id == "args":
        names = [e.id for e in target.elts if isinstance(e, ast.Name)]
        st.graph_inputs.extend(names)
        st.tensors.update(names)
        return
    names = (
        [e.id for e in target.elts if isinstance(e, ast.Name)]
        if isinstance(target, ast.Tuple)
        else ([target.id] if isinstance(target, ast.Name) else [])
    )
    if not names:
        return
    if isinstance(value, ast.Name):
        if value.id in st.tensors:  # buf1 = buf0; del buf0  # reuse
            st.aliases.append((names[0], value.id))
            st.tensors.add(names[0])
        return
    if isinstance(value, ast.Subscript) and _base_name(value) in st.tensors:
        # buf7 = buf6[0]: an element of an extern op's tuple result (SDPA's output, its logsumexp): the
        # data the op wrote, for the dataflow
        st.aliases.append((names[0], _base_name(value)))  # type: ignore[arg-type]
        st.tensors.add(names[0])
        return
    if isinstance(value, ast.Call):
        _assigned_call(stmt, value, names, st, src_nodes, origins)


def _assigned_call(
    stmt: ast.Assign,
    value: ast.Call,
    names: list[str],
    st: _WrapperState,
    src_nodes: tuple[str, ...],
    origins: tuple[str, ...],
) -> None:
    """``names = callee(...)``: an allocation, a view of another buffer, or a launch that returns its outputs."""
    callee = _dotted(value.func) or ""
    if callee in _ALLOC:
        shape = _shape_literal(value.args[0] if value.args else None)
        dtype = _dtype_arg(value.args[2] if len(value.args) > 2 else None)
        st.buffers.append(Buffer(names[0], shape, dtype, stmt.lineno + st.offset))
        st.tensors.add(names[0])
        if st.device is None:
            st.device = "cuda" if callee.endswith("cuda") else "cpu" if callee.endswith("cpu") else None
        return
    if callee in ("reinterpret_tensor", "torch.as_strided") or callee.endswith(".as_strided"):
        base = _base_name(value.args[0]) if value.args else None
        if base is not None:
            st.aliases.append((names[0], base))
            st.tensors.add(names[0])
            shape = _shape_literal(value.args[1] if len(value.args) > 1 else None)
            st.buffers.append(Buffer(names[0], shape, None, stmt.lineno + st.offset))
        return
    if callee == "copy_if_misaligned":
        st.tensors.update(names)
        return
    if callee in _NOT_LAUNCHES:
        return
    if callee in st.kernels or callee.split(".")[0] in st.kernels:
        st.tensors.update(names)
        _record_launch(st, stmt, value, "kernel", callee.split(".")[0], None, tuple(names), src_nodes, origins)
        return
    op = _extern_op(callee)
    if op is not None:
        st.tensors.update(names)
        _record_launch(st, stmt, value, "extern", callee, op, tuple(names), src_nodes, origins)


def _call_statement(
    stmt: ast.Expr, call: ast.Call, st: _WrapperState, src_nodes: tuple[str, ...], origins: tuple[str, ...]
) -> None:
    """A bare call: a shape assertion (a buffer's shape and dtype) or a launch that writes its arguments."""
    callee = _dotted(call.func) or ""
    if callee in ("assert_size_stride", "assert_tensor_metadata", "assert_size_stride_grouped"):
        _size_assertion(stmt, call, callee, st)
        return
    if callee in _NOT_LAUNCHES or callee.endswith(".clear"):
        return
    head = callee.split(".")[0]
    if head in st.kernels:
        # name.run(...) (Triton, NVGEMM), name.name(...) (CUTLASS .so), name(...) (C++ pybinding)
        _record_launch(st, stmt, call, "kernel", head, None, (), src_nodes, origins)
        return
    op = _extern_op(callee)
    if op is not None:
        _record_launch(st, stmt, call, "extern", callee, op, (), src_nodes, origins)


def _size_assertion(stmt: ast.Expr, call: ast.Call, callee: str, st: _WrapperState) -> None:
    """``assert_size_stride(buf, shape, ...)``, its grouped form and ``assert_tensor_metadata``: buffer shapes."""
    if len(call.args) < 2:
        return
    if callee == "assert_size_stride_grouped":
        if isinstance(call.args[0], ast.Tuple) and isinstance(call.args[1], ast.Tuple):
            for e, s in zip(call.args[0].elts, call.args[1].elts):
                n = _base_name(e)
                if n:
                    st.buffers.append(Buffer(n, _shape_literal(s), None, stmt.lineno + st.offset))
        return
    n = _base_name(call.args[0])
    if n:
        dtype = _dtype_arg(call.args[3]) if callee == "assert_tensor_metadata" and len(call.args) > 3 else None
        st.buffers.append(Buffer(n, _shape_literal(call.args[1]), dtype, stmt.lineno + st.offset))


# Module-level constants (freezing) carry their shape in a comment: "_frozen_param3 = None  #
# device(type='cpu') torch.float32 (512, 512) (512, 1) 7f..."
_CONSTANT_LINE = re.compile(
    r"^(?P<name>\w+) = None  # device\(type='(?P<dev>\w+)'(?:, index=\d+)?\) (?P<dtype>torch\.\w+) "
    r"\((?P<shape>[^)]*)\)"
)


def parse_module(text: str, path: str = "<memory>", module_index: int = 0, first_line: int = 1) -> OutputCode:
    """Parse one output-code module. ``first_line`` is where it starts in its file, for line references."""
    lines = text.splitlines()
    offset = first_line - 1
    notes: list[str] = []
    try:
        tree: ast.Module | None = ast.parse(text)
    except SyntaxError as exc:
        tree = None
        notes.append(
            f"not valid Python ({exc.msg} at line {exc.lineno}); kernel comments read, wrapper skipped"
        )
    constants, buffers = _constants(lines, offset)
    kernels = [_kernel_def(lines, offset, *d) for d in _kernel_defs(tree, lines)]
    st = _WrapperState(
        kernels={k.name: k for k in kernels},
        lines=lines,
        offset=offset,
        tensors=set(constants),
        launches=[],
        buffers=buffers,
        aliases=[],
        graph_inputs=[],
        outputs=[],
    )
    if tree is not None:
        _parse_wrapper(tree, st)
        if _find_call_def(tree) is None:
            notes.append("no call() wrapper found: launch order unknown")
    return OutputCode(
        path=path,
        module_index=module_index,
        first_line=first_line,
        kernels=tuple(kernels),
        launches=tuple(st.launches),
        graph_inputs=tuple(st.graph_inputs),
        constants=tuple(constants),
        buffers=tuple(st.buffers),
        aliases=tuple(st.aliases),
        outputs=tuple(st.outputs),
        device=st.device if st.device is not None else _device_of(kernels),
        notes=tuple(notes),
    )


def _constants(lines: list[str], offset: int) -> tuple[list[str], list[Buffer]]:
    """The module's constant tensors (weights, with freezing) and their buffers."""
    constants: list[str] = []
    buffers: list[Buffer] = []
    for i, line in enumerate(lines):
        cm = _CONSTANT_LINE.match(line)
        if cm:
            constants.append(cm.group("name"))
            buffers.append(
                Buffer(
                    cm.group("name"),
                    _shape(cm.group("shape")),
                    torch_dtype_name(cm.group("dtype")),
                    i + 1 + offset,
                )
            )
    return constants, buffers


# name, async_compile method, 0-based line, source, arg types
_Def = tuple[str, str, int, str, list[str] | None]


def _kernel_defs(tree: ast.Module | None, lines: list[str]) -> list[_Def]:
    """Each ``name = async_compile.<method>(...)`` of the module; without a syntax tree, from the lines."""
    defs: list[_Def] = []
    if tree is not None:
        for node in tree.body:
            if not (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                continue
            v = node.value
            if not (
                isinstance(v, ast.Call)
                and isinstance(v.func, ast.Attribute)
                and _dotted(v.func.value) == "async_compile"
            ):
                continue
            strings = [s for s in (_const_str(a) for a in v.args) if s is not None]
            source = max(strings, key=len) if strings else ""
            arg_types = None
            if v.args and isinstance(v.args[0], (ast.List, ast.Tuple)):
                lt = _literal(v.args[0])
                arg_types = [str(t) for t in lt] if isinstance(lt, (list, tuple)) else None
            defs.append((node.targets[0].id, v.func.attr, node.lineno - 1, source, arg_types))
    else:
        for i, line in enumerate(lines):
            m = re.match(r"^(\w+) = async_compile\.(\w+)\(", line)
            if m:
                defs.append((m.group(1), m.group(2), i, "", None))
    return defs


def _kernel_def(lines: list[str], offset: int, name: str, method: str, idx: int, source: str,
                arg_types: list[str] | None) -> KernelDef:
    """One kernel: its kind, the header comment above it (origins, node mapping) and its signature."""
    header = _parse_header(_comment_block_above(lines, idx), offset)
    kind = _kind(method, name, source)
    params, outputs, profiler, detail = _kernel_signature(kind, name, source, arg_types)
    return KernelDef(
        name=name,
        kind=kind.value,
        method=method,
        line=idx + 1 + offset,
        source_nodes=header.source_nodes,
        origins=header.origins,
        node_mapping=header.mapping,
        fragment=header.fragment,
        returns=header.returns,
        params=params,
        outputs=outputs,
        profiler_names=profiler,
        detail=detail,
        source=source,
        runs_dot=method == "triton" and bool(_TRITON_DOT.search(source)),
    )


def _device_of(kernels: list[KernelDef]) -> str | None:
    """The device from the kernels' compile methods, when the wrapper does not say it."""
    if any(k.method == "triton" or k.method in ("cuda", "nv_universal_gemm") for k in kernels):
        return "cuda"
    if any(k.method.startswith("cpp") for k in kernels):
        return "cpu"
    return None


def parse_output_code(text: str, path: str = "<memory>") -> tuple[OutputCode, ...]:
    """Parse a file's text: one module, or several separated by MODULE_SEPARATOR lines."""
    lines = text.splitlines(keepends=True)
    modules: list[tuple[int, list[str]]] = [(1, [])]
    for i, line in enumerate(lines):
        if line.strip() == MODULE_SEPARATOR:
            modules.append((i + 2, []))
        else:
            modules[-1][1].append(line)
    out = []
    for index, (first, mod_lines) in enumerate(m for m in modules if "".join(m[1]).strip()):
        out.append(parse_module("".join(mod_lines), path, index, first))
    return tuple(out)


def load_output_code(path: str | os.PathLike[str]) -> tuple[OutputCode, ...]:
    """Read an output-code file (.py, or .py.gz) and parse every module in it."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise CodeFileError(
            f"Inductor code file {p} does not exist", "pass the .py file kernelscope saved beside the trace"
        )
    except IsADirectoryError:
        raise CodeFileError(f"Inductor code path {p} is a directory", "pass one output-code .py file")
    except OSError as exc:
        raise CodeFileError(
            f"Inductor code file {p} cannot be read ({exc.strerror})", "check the file's permissions"
        )
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise CodeFileError(
                f"Inductor code file {p} is not a readable gzip file ({exc})", "pass the uncompressed .py"
            )
    text = raw.decode("utf-8", errors="replace")
    if "async_compile" not in text and "def call" not in text:
        raise CodeFileError(
            f"{p} does not look like Inductor output code (no async_compile and no call())",
            "pass a file written by run_and_get_code / TORCH_COMPILE_DEBUG (output_code.py)",
        )
    return parse_output_code(text, str(p))
