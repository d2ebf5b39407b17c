"""Call sites and buffer dataflow of one compiled graph: each GEMM's epilogue, call site by call site.

The wrapper's ``call()`` is a sequence of call sites (a kernel launch or an extern/ATen call) with the buffers
they read and write. One kernel definition can run at many call sites (identical layers reuse it), so nothing
here is keyed by kernel name: each call site maps its buffers onto the definition's parameters, and the
definition's body (``body.py``) says what it computes from each parameter.

For a GEMM at call site g: its output storage is live; every later call site that reads a live storage applies
the ops its body derives from it (unfused epilogue ops, in that kernel), and the storages it writes from them
become live in turn. The chain ends at a reduction, a non-pointwise extern op, another GEMM, or the graph output.
An op that also reads the output of a GEMM that itself depends on g (the residual ``h + down_proj(...)`` after
``o_proj``) belongs to that later GEMM's epilogue, not to g's; an op that reads two independent GEMMs' outputs
(SwiGLU's ``silu(gate) * up``) belongs to both. An op recomputed in a second kernel (Inductor recomputes cheap
pointwise ops instead of storing them) is counted once.

No torch import.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kernelscope import vocab
from kernelscope.analysis.gemm.body import Body, Flow, Op, body_of, walk
from kernelscope.inductor_code import TEMPLATE_KINDS, FxNode, KernelDef, KernelKind, Launch, OutputCode
from kernelscope.result import Evidence
from kernelscope.result import EvidenceRule as Rule


@dataclass(frozen=True, slots=True)
class ChainOp:
    label: str
    launch: int  # call-site index where it runs
    code_kernel: str  # kernel definition (or extern callee) at that call site
    fused: bool
    evidence: Evidence
    nodes: tuple[str, ...] = ()
    line: int = 0  # output-code line of the call site (or of the op in the kernel source)
    in_gemm: bool = False  # ran in another GEMM's kernel: that kernel's time is not this epilogue's cost


@dataclass(frozen=True, slots=True)
class CodeGemm:
    """One GEMM call site with its epilogue chain, from the code alone."""

    launch: Launch
    op: str
    kind: str  # "gemm" | "conv"
    node: str | None  # FX node of the GEMM (templates with a graph fragment)
    template: KernelDef | None
    m: int | None
    n: int | None
    k: int | None
    dtype: str | None
    batch: int | None
    chain: tuple[ChainOp, ...]
    prologue: tuple[str, ...]
    bias: str  # "" | "template" | "extern"
    evidence: tuple[Evidence, ...]
    chain_launches: tuple[int, ...]
    source_nodes: tuple[str, ...] = ()  # Dynamo source nodes of the call site (module provenance)
    # a call of another op that runs GEMMs inside it (a custom op): that op as the profiler names it; the GEMMs
    # are the trace's, the epilogue the chain of the call's result
    inside: str = ""


# ------------------------------------------------------------------------------------------------------------
# Call sites


def _int(v: object) -> int | None:
    return v if isinstance(v, int) else None


def bias_row(numel: int | None, cols: int | None) -> bool:
    """Whether a tensor of ``numel`` elements added to a GEMM's result of ``cols`` columns (its N) is a bias: one
    value per column, or a slice of those (q's part of a packed projection's). A tensor that varies along the rows
    (a position embedding, attention's relative position bias) is an add; so is a one-element tensor on a wider
    result (a scalar)."""
    if numel is None or cols is None or numel < 1:
        return False
    return numel == cols or (numel > 1 and numel < cols and cols % numel == 0)


def _numel(shape: Sequence[object] | None) -> int | None:
    if not shape:
        return None if shape is None else 1
    total = 1
    for x in shape:
        if not isinstance(x, int):
            return None
        total *= x
    return total


def _shape_of_arg(code: OutputCode, text: str) -> tuple[int | str, ...] | None:
    """The shape an argument has at the call site; dimensions with stride 0 (a bias expanded to M x N by
    ``reinterpret_tensor(b, (M, N), (0, 1), 0)``) are left out: they read no more data."""
    m = re.match(r"reinterpret_tensor\((\w+), \(([^)]*)\), \(([^)]*)\)", text.strip())
    if m:
        dims = [x.strip() for x in m.group(2).split(",") if x.strip()]
        strides = [x.strip() for x in m.group(3).split(",") if x.strip()]
        keep = [d for d, st in zip(dims, strides + [""] * len(dims)) if st != "0" or d == "1"]
        return tuple(int(x) if x.isdigit() else x for x in keep)
    name = text.strip()
    if re.fullmatch(r"\w+", name):
        b = code.buffer(name)
        return b.shape if b else None
    return None


def param_map(code: OutputCode, launch: Launch, kd: KernelDef) -> dict[str, str]:
    """Parameter -> the tensor name this call site passes for it."""
    out: dict[str, str] = {}
    for p, a in zip(kd.params, launch.arg_names):
        if a is not None:
            out[p] = a
    return out


def _is_gemm_node(n: FxNode) -> bool:
    return not n.is_placeholder and vocab.is_gemm(n.aten_op)


# Inductor's C++ bmm template loops over the batch it declares (``const int64_t B = static_cast<int64_t>(4L);``).
_CPP_BATCH = re.compile(r"\bconst int64_t B = static_cast<int64_t>\((\d+)L?\);")


def gemm_of_kernel(kd: KernelDef) -> tuple[str, FxNode | None] | None:
    """(op, FX node) when this kernel definition computes a GEMM, else None. A Triton kernel whose body runs
    ``tl.dot`` computes one whatever else it computes (a template with a fused prologue, whose fragment may not list
    the GEMM node as computed there; a native-matmul reduction; a user's kernel), unless its fragment says the dots
    are attention's (flex attention); any other template kind computes the GEMM its fragment or name says."""
    if KernelKind(kd.kind) not in TEMPLATE_KINDS and not kd.runs_dot:
        return None
    nodes = [n for n in kd.computed_here if _is_gemm_node(n)]
    if nodes:
        return nodes[0].aten_op, nodes[0]
    if kd.runs_dot:
        if any(n.aten_op in vocab.ATTENTION_OPS for n in kd.computed):
            return None  # flex attention's two dots and softmax: attention, not a GEMM
        node = _own_gemm_node(kd)
        if node is not None:
            return node.aten_op, node
        tokens = [t for t in kd.name_ops if vocab.is_gemm(t)]
        return (tokens[0] if tokens else "mm"), None
    if kd.kind == KernelKind.CPP_GEMM_TEMPLATE.value and _CPP_BATCH.search(kd.source):
        # its name lists the ops of its inputs too (addmm, from the q/k bias adds before a bmm): the body says bmm
        return "bmm", None
    if kd.fragment and kd.kind == KernelKind.TRITON_TEMPLATE.value:
        return None  # a Triton template with a fragment, no GEMM node and no dot
    tokens = [t for t in kd.name_ops if vocab.is_gemm(t)]
    if tokens:
        return tokens[0], None
    if kd.kind in (KernelKind.CPP_GEMM_TEMPLATE.value, KernelKind.NV_UNIVERSAL_GEMM.value,
                   KernelKind.CUTLASS_CPP.value, KernelKind.CUTEDSL.value):
        return "mm", None
    return None


def _own_gemm_node(kd: KernelDef) -> FxNode | None:
    """The GEMM node of a kernel that runs a dot but whose fragment does not list the node as computed there (a
    prologue's inputs the fragment leaves out): among every GEMM node it lists, the one it returns, else one that is
    no input it reads, else the last (the fragment is in topological order: its own GEMM after its inputs')."""
    nodes = [n for n in kd.computed if _is_gemm_node(n)]
    if not nodes:
        return None
    returned = [n for n in nodes if n.name in kd.returns]
    placeholders = {p.name for p in kd.placeholders}
    computed = [n for n in nodes if n.name not in placeholders]
    return (returned or computed or nodes)[-1]


def gemm_op_of_launch(code: OutputCode, launch: Launch) -> tuple[str, FxNode | None] | None:
    if launch.kind == "kernel":
        kd = code.kernel(launch.name)
        return gemm_of_kernel(kd) if kd is not None else None
    op = launch.op or ""
    if op in ("_convolution_pointwise", "_convolution_pointwise_") or vocab.is_gemm(op):
        return op, None
    return None


# ------------------------------------------------------------------------------------------------------------
# Shapes of a GEMM call site


def _mnk_from_node(kd: KernelDef, node: FxNode) -> tuple[int | None, int | None, int | None, int | None]:
    ins = [kd.node(i) for i in node.inputs]
    if node.aten_op in vocab.CONV_OPS:
        x = ins[0].shape if ins and ins[0] is not None else None
        w = ins[1].shape if len(ins) > 1 and ins[1] is not None else None
        m, n, k = _conv_mnk(x, w, node.shape)
        return m, n, k, None
    mats = [x for x in ins if x is not None and x.shape is not None and len(x.shape) >= 2]
    if node.aten_op in vocab.BIAS_OPS and len(ins) == 3 and ins[0] is not None and ins[0] in mats:
        mats = [x for x in mats if x is not ins[0]]
    a = mats[0].shape if mats else None
    out = node.shape
    m = _int(out[-2]) if out and len(out) >= 2 else (_int(a[-2]) if a else None)
    n = _int(out[-1]) if out else None
    k = _int(a[-1]) if a else None
    batch = _int(out[0]) if out and len(out) == 3 and node.aten_op in vocab.BATCHED_OPS else None
    return m, n, k, batch


def _conv_mnk(x: Sequence[object] | None, w: Sequence[object] | None,
              out: Sequence[object] | None) -> tuple[int | None, int | None, int | None]:
    """Implicit GEMM of a convolution: M = batch x output pixels, N = output channels, K = input channels x
    kernel window (per group)."""
    if not w or not out or len(out) < 3:
        return None, None, None
    npix = _numel(out[2:])
    batch = _int(out[0])
    m = batch * npix if batch is not None and npix is not None else None
    n = _int(w[0])
    k = _numel(w[1:])
    return m, n, k


def _onednn_args(launch: Launch) -> tuple[int, int, int]:
    """(input, weight, bias) argument positions of an extern GEMM-class call: oneDNN's binary forms put the binary
    post-op's other operand beside the input (``_convolution_pointwise.binary(X, other, W, B, ...)``; in place,
    ``_convolution_pointwise_.binary(other, X, W, B, ...)``); the rest are (X, W, B, ...)."""
    if launch.name.endswith("_.binary"):
        return 1, 2, 3
    if launch.name.endswith(".binary"):
        return 0, 2, 3
    return 0, 1, 2


Shape = tuple[int | str, ...]


def _extern_shapes(code: OutputCode, launch: Launch, op: str
                   ) -> tuple[int | None, int | None, int | None, str | None, int | None, Shape | None]:
    """(m, n, k, dtype, batch, c_shape) of an extern GEMM/conv call, from the call site's arguments."""
    shapes = [_shape_of_arg(code, a) for a in launch.args]
    out_name = launch.writes[0] if launch.writes else None
    out_buf = code.buffer(out_name) if out_name else None
    out_shape = out_buf.shape if out_buf else None
    if out_shape is None and out_name:
        # ``buf2 = torch.ops.mkldnn._convolution_pointwise(...)`` declares no shape; the alias after it does
        # (``buf3 = buf2`` with its assert_tensor_metadata)
        after = sorted((b for b in code.buffers if b.shape is not None and b.line > launch.line
                        and code.storage(b.name) == code.storage(out_name)), key=lambda b: b.line)
        out_shape = after[0].shape if after else None
    dtype = out_buf.dtype if out_buf else None
    if dtype is None and out_name:
        root = code.buffer(code.storage(out_name))
        dtype = root.dtype if root else None
    c_shape = None
    xi, wi, _bi = _onednn_args(launch)
    if op in vocab.CONV_OPS or op.startswith("_convolution_pointwise"):
        m, n, k = _conv_mnk(shapes[xi] if len(shapes) > xi else None, shapes[wi] if len(shapes) > wi else None,
                            out_shape)
        return m, n, k, dtype, None, None
    if op in vocab.BIAS_OPS and len(shapes) >= 3:
        c_shape, mats = shapes[0], shapes[1:3]
    else:
        mats = shapes[:2]
    a = mats[0] if mats else None
    b = mats[1] if len(mats) > 1 else None
    m = _int(a[-2]) if a and len(a) >= 2 else None
    k = _int(a[-1]) if a else None
    # B [.., K, N] says N; the out= buffer can be a reused allocation of another shape (bmm's ``out=buf29`` where
    # ``buf29 = buf21`` took over a (32, 32) buffer)
    n = (_int(b[-1]) if b and len(b) >= 2 and _int(b[-2]) == k and k is not None else None) or \
        (_int(out_shape[-1]) if out_shape else (_int(b[-1]) if b and len(b) >= 2 else None))
    if op == "_mkl_linear" and len(launch.args) >= 3:
        w = _shape_of_arg(code, launch.args[2])
        if w and len(w) == 2:
            n = _int(w[0])
    w_shape = shapes[wi] if len(shapes) > wi else None
    if op.startswith("_linear_pointwise") and w_shape and len(w_shape) == 2:
        a = shapes[xi]
        m = _int(a[-2]) if a and len(a) >= 2 else m
        n = _int(w_shape[0])
        k = _int(w_shape[1])
        if a and len(a) > 2:
            m = _numel(a[:-1])
    batch = _int(a[0]) if a and len(a) == 3 and op in vocab.BATCHED_OPS else None
    return m, n, k, dtype, batch, c_shape


# ------------------------------------------------------------------------------------------------------------
# Dataflow


@dataclass(slots=True)
class _Site:
    launch: Launch
    kd: KernelDef | None
    body: Body | None
    params: dict[str, str]  # param -> tensor name (kernels)
    gemm: tuple[str, FxNode | None] | None
    reads: tuple[str, ...]  # storages
    writes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _OwnCall:
    """What a GEMM's own call site computes: its sizes and the ops its kernel or library call applies itself."""

    m: int | None
    n: int | None
    k: int | None
    dtype: str | None
    batch: int | None
    chain: tuple[ChainOp, ...]  # epilogue ops fused into the call
    prologue: tuple[str, ...]
    bias: str  # "" | "template" | "extern"
    evidence: tuple[Evidence, ...]


@dataclass(slots=True)
class _ChainWalk:
    """Following one GEMM's result through the later call sites: the chain so far and where its data lives."""

    g: int  # the GEMM's call site
    out_numel: int | None  # elements of its output (a smaller operand is broadcast: a bias row)
    cols: int | None  # its N: a bias has one value per column
    downstream: frozenset[int]  # GEMMs that compute from its result
    chain: list[ChainOp]
    live: set[str]  # storages holding the chain's data
    chain_launches: set[int]
    # storages holding values reduced from the chain's data (mean/rstd, max, sum): reading one is past the
    # epilogue's boundary
    stats: set[str] = field(default_factory=set)
    seen_ops: dict[tuple[str, tuple[str, ...]], int] = field(default_factory=dict)  # (label, operands) -> site
    # ops seen only feeding a reduction (chain index -> key), and where a statistic met the chain's data
    feeding: dict[int, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    feeding_keys: set[tuple[str, tuple[str, ...]]] = field(default_factory=set)
    norm: tuple[str, str] = ("", "")  # the kernel whose norm the chain's data meets, and its call site
    stops: list[Evidence] = field(default_factory=list)


class Graph:
    """The call sites of one module and the GEMM-to-GEMM dependencies through every buffer. ``gemm_calls``: the
    extern calls of other ops that run GEMMs inside them (launch index -> the op), GEMM call sites too."""

    def __init__(self, code: OutputCode, gemm_calls: Mapping[int, str] | None = None):
        self.code = code
        self.gemm_calls = dict(gemm_calls or {})
        self.sites: list[_Site] = []
        bodies: dict[str, Body | None] = {}
        for L in code.launches:
            kd = code.kernel(L.name) if L.kind == "kernel" else None
            body = None
            if kd is not None:
                if kd.name not in bodies:
                    bodies[kd.name] = body_of(kd.kind, kd.name, kd.source, kd.params)
                body = bodies[kd.name]
            self.sites.append(_Site(
                launch=L, kd=kd, body=body, params=param_map(code, L, kd) if kd is not None else {},
                gemm=gemm_op_of_launch(code, L) or ((L.op or "call", None) if L.index in self.gemm_calls else None),
                reads=tuple(dict.fromkeys(code.storage(r) for r in L.reads)),
                writes=tuple(dict.fromkeys(code.storage(w) for w in L.writes)),
            ))
        # GEMM dependencies: which GEMMs each call site's inputs derive from (through any op).
        deps: dict[str, frozenset[int]] = {}
        self.read_deps: list[frozenset[int]] = []
        # per call site, its parameters' storages -> the GEMMs their values derive from, as the site finds them
        # (before its own writes): what chain() asks of every site after a GEMM, kept once for all GEMMs
        self.param_deps: list[dict[str, frozenset[int]]] = []
        for i, s in enumerate(self.sites):
            rd = frozenset().union(*(deps.get(r, frozenset()) for r in s.reads)) if s.reads else frozenset()
            self.read_deps.append(rd)
            self.param_deps.append({st: deps[st] for st in (*(code.storage(t) for t in s.params.values()), *s.reads)
                                    if st in deps})
            out = rd | ({i} if s.gemm else frozenset())
            for w in s.writes:
                deps[w] = out
        self.gemm_sites = [i for i, s in enumerate(self.sites) if s.gemm]
        self.downstream: dict[int, frozenset[int]] = {
            g: frozenset(j for j in self.gemm_sites if j != g and g in self.read_deps[j]) for g in self.gemm_sites}
        self.outputs = {code.storage(o) for o in code.outputs}
        self.launch_count: dict[str, int] = {}
        for L in code.launches:
            if L.kind == "kernel":
                self.launch_count[L.name] = self.launch_count.get(L.name, 0) + 1

    # -- helpers ------------------------------------------------------------------------------------------
    def where(self, line: int) -> str:
        return self.code.where(line)

    def _broadcast(self, site: _Site, out_numel: int | None, cols: int | None) -> dict[str, bool]:
        """Per parameter: whether the buffer passed is a bias row, smaller than the GEMM output and one value per
        output column (``cols``: the GEMM's N) or a slice of those; a tensor added along the rows (a position
        embedding, attention's relative position bias) is not."""
        res: dict[str, bool] = {}
        for p, name in site.params.items():
            b = self.code.buffer(name)
            n = _numel(b.shape) if b and b.shape is not None else None
            res[p] = (n is not None and out_numel is not None and n < out_numel
                      and (cols is None or bias_row(n, cols)))
        return res

    # -- one GEMM -------------------------------------------------------------------------------------------
    def chain(self, g: int) -> CodeGemm:
        """GEMM call site ``g`` with its epilogue: what its own call applies, then what the later call sites do
        with its result."""
        site = self.sites[g]
        L = site.launch
        op, node = site.gemm  # type: ignore[misc]
        kind = "conv" if (op in vocab.CONV_OPS or op.startswith("_convolution_pointwise")) else "gemm"
        kd = site.kd
        own = self._template_call(g, kd, op, node, kind) if kd is not None else self._extern_call(g, op, kind)
        w = _ChainWalk(
            g, own.m * own.n * (own.batch or 1) if own.m is not None and own.n is not None else None, own.n,
            self.downstream.get(g, frozenset()), list(own.chain), set(site.writes), {g})
        for j in range(g + 1, len(self.sites)):
            if not self._follow(w, j):
                break  # nothing later reads the GEMM's data any more
        self._drop_norm_feeders(w)
        if w.live & self.outputs:
            w.stops.append(Evidence.of(Rule.DATAFLOW_GRAPH_OUTPUT, outputs=tuple(self.code.outputs)))
        return CodeGemm(
            launch=L, op=_norm_op(op), kind=kind, node=node.name if node is not None else None, template=kd,
            m=own.m, n=own.n, k=own.k, dtype=own.dtype, batch=own.batch, chain=tuple(w.chain),
            prologue=own.prologue, bias=own.bias,
            evidence=own.evidence + tuple(dict.fromkeys(w.stops)), chain_launches=tuple(sorted(w.chain_launches)),
            # a definition's own comment names its first call site's nodes: only a kernel launched once may use it
            source_nodes=L.source_nodes or (kd.source_nodes if kd is not None and self.launch_count.get(kd.name) == 1
                                            else ()),
            inside=self.gemm_calls.get(L.index, ""),
        )

    def _template_call(self, g: int, kd: KernelDef, op: str, node: FxNode | None, kind: str) -> _OwnCall:
        """What a GEMM kernel (an Inductor template) computes at its call site: its sizes, the epilogue ops its
        body or graph fragment applies to the GEMM's result, and the ops it computes on the GEMM's inputs."""
        site = self.sites[g]
        L = site.launch
        where = self.where
        evidence: list[Evidence] = []
        chain: list[ChainOp] = []
        prologue: list[str] = []
        bias = ""
        batch = None
        if node is not None:
            m, n, k, batch = _mnk_from_node(kd, node)
            dtype = node.dtype
        else:
            m, n, k = (_int_str(kd.get("m")), _int_str(kd.get("n")), _int_str(kd.get("k")))
            dtype = kd.get("dtype")
            bm = _CPP_BATCH.search(kd.source) if op == "bmm" else None
            batch = int(bm.group(1)) if bm else None
        if kind == "conv" and None in (m, n, k):
            m, n, k = self._conv_site_mnk(site)
        elif kd.kind in (KernelKind.NV_UNIVERSAL_GEMM.value, KernelKind.CUTLASS_CPP.value,
                         KernelKind.CUTEDSL.value):
            # these take their sizes at run time, so one definition serves several shapes (NVGEMM's kernel for
            # q_proj 512x1024x1024 and down_proj 512x1024x2816): the call site's operands say which
            sm, sn, sk = self._site_mnk(site)
            m, n, k = (sm or m), (sn or n), (sk or k)
        if None in (m, n):
            om, on = self._out_mn(site)
            m, n = (m if m is not None else om), (n if n is not None else on)
        dot = None
        if kd.runs_dot and not any(_is_gemm_node(n) for n in kd.computed_here) and site.body is not None:
            # the fragment does not show the GEMM computed here (a fused prologue's inputs left out): the dot does
            lines = [v.line for v in (site.body.value(x) for x in site.body.gemm_values) if v is not None]
            dot = where(kd.line + min(lines) - 1) if lines else where(kd.line)
        evidence.append(Evidence.of(Rule.CODE_GEMM, where(L.line), site=L.name, kernel_kind=kd.kind, op=op,
                                    node=node.name if node is not None else None,
                                    node_where=where(node.line) if node is not None else None, dot_where=dot))
        out_numel = m * n if m is not None and n is not None else None
        if site.body is not None and site.body.gemm_values:
            flow = walk(site.body, site.body.gemm_values, broadcast=self._broadcast(site, out_numel, n))
            for o in flow.ops:
                chain.append(ChainOp(o.label, g, kd.name, True, Evidence.of(
                    Rule.TEMPLATE_BODY, where(kd.line + o.line - 1), op=o.label, kernel=kd.name,
                    code=_src(kd, o.line), site_where=where(L.line)), o.values, L.line))
            if flow.ops and any(o.label == "bias" for o in flow.ops):
                bias = "template"
        elif node is not None:
            chain += _fragment_fused(kd, node, g, L, where)
        elif kd.kind == KernelKind.NV_UNIVERSAL_GEMM.value and kd.get("has_epilogue") == "False":
            evidence.append(Evidence.of(Rule.CODE_GEMM_OPERATOR, kernel=kd.name, operator=str(kd.get("operator")),
                                        has_epilogue="False"))
        if node is not None:
            prologue = _prologue(kd, node)
            if prologue:
                evidence.append(Evidence.of(Rule.PROLOGUE, kernel=kd.name, ops=tuple(prologue)))
        return _OwnCall(m, n, k, dtype, batch, tuple(chain), tuple(prologue), bias, tuple(evidence))

    def _extern_call(self, g: int, op: str, kind: str) -> _OwnCall:
        """What a library GEMM call computes: its sizes from its arguments, and the bias or post-ops it applies
        itself (it takes no Inductor epilogue)."""
        L = self.sites[g].launch
        m, n, k, dtype, batch, c_shape = _extern_shapes(self.code, L, op)
        evidence = (Evidence.of(Rule.EXTERN_GEMM, self.where(L.line), site=L.name, gemm_kind=kind),)
        chain = self._extern_fused(self.sites[g], op, m, n, c_shape, g)
        bias = "extern" if any(c.label == "bias" for c in chain) else ""
        return _OwnCall(m, n, k, dtype, batch, tuple(chain), (), bias, evidence)

    def _follow(self, w: _ChainWalk, j: int) -> bool:
        """Take call site ``j`` into the walk: what it does with the chain's data or its statistics, and which
        storages hold them after it; False once none does."""
        s = self.sites[j]
        if any(r in w.live for r in s.reads):
            new_live, new_stats = self._read_by(w, j)
        elif not s.gemm and set(s.reads) & w.stats:
            new_live, new_stats = set(), self._statistics_from(s, w.stats)
        else:
            new_live, new_stats = set(), set()
        for x in s.writes:
            if x not in new_live:
                w.live.discard(x)
            if x not in new_stats:
                w.stats.discard(x)
        w.live |= new_live
        w.stats |= new_stats
        return bool(w.live or w.stats)

    def _read_by(self, w: _ChainWalk, j: int) -> tuple[set[str], set[str]]:
        """What call site ``j``, which reads the chain's data, does with it: its ops on the chain (or where the chain
        stops there); returns the storages it writes that carry the chain on, and those that hold statistics of
        it."""
        s = self.sites[j]
        deps = self.param_deps[j]
        where = self.where
        operands = self._operand_params(s)
        live_params = [p for p, t in s.params.items() if self.code.storage(t) in w.live] \
            if s.gemm and s.kd is not None else []
        epi_params = [p for p in live_params if p not in operands]
        operand_hit = s.gemm and (any(p in operands for p in live_params) or any(
            p in _OPERAND_PARAMS for p, t in s.params.items() if self.code.storage(t) in w.live))
        if s.gemm and epi_params and not operand_hit and s.body is not None and s.kd is not None:
            self._into_template(w, j, epi_params)
        elif s.gemm and s.body is not None and s.kd is not None and \
                (prologue := [p for p in live_params if p in operands]) and self._into_prologue(w, j, prologue):
            pass
        elif s.gemm and (post := self._post_op_on(s, w.live, w.g, deps)):
            # oneDNN's binary post-op adds our result into the next GEMM's (ResNet's downsample
            # convolution on a bf16-capable CPU: ``_convolution_pointwise_.binary(conv2_out, x, W_ds, B,
            # ..., 'add', 1.0, 'relu')``): those ops ran in that call, not in ours
            for a in post:
                w.chain.append(ChainOp(
                    _post_op_label(a), j, s.launch.name, False,
                    Evidence.of(Rule.DATAFLOW_POST_OP_NEXT_GEMM, where(s.launch.line), attr=a, site=s.launch.name),
                    (), s.launch.line, True))
            w.chain_launches.add(j)
            w.stops.append(Evidence.of(Rule.DATAFLOW_RESULT_JOINS, where(s.launch.line), site=s.launch.name))
        elif s.gemm:
            w.stops.append(Evidence.of(Rule.DATAFLOW_NEXT_GEMM, where(s.launch.line), site=s.launch.name,
                                       gemm_kind="conv" if s.gemm[0] in vocab.CONV_OPS else "gemm"))
        elif s.launch.kind == "extern":
            return self._extern_reader(w, j)
        elif s.body is not None and s.kd is not None:
            return self._kernel_reader(w, j)
        elif s.kd is not None:
            for lab in _name_labels(s.kd):
                w.chain.append(ChainOp(lab, j, s.kd.name, False,
                                       Evidence.of(Rule.DATAFLOW_FRAGMENT_OP, where(s.launch.line), kernel=s.kd.name,
                                                   op=lab), (), s.launch.line))
            w.chain_launches.add(j)
            return set(s.writes), set()
        return set(), set()

    def _into_template(self, w: _ChainWalk, j: int, epi_params: list[str]) -> None:
        """Another GEMM's template reads our result in its epilogue (SwiGLU: up_proj's template computes
        silu(gate) * acc): the ops on our value ran there, a kernel of its own for us, and the chain stops."""
        s = self.sites[j]
        assert s.body is not None and s.kd is not None
        deps = self.param_deps[j]
        where = self.where
        # that GEMM's own result does not depend on ours (it would read ours as an operand): an op that mixes
        # both belongs to both (SwiGLU's mul)
        blocked = [p for p, t in s.params.items() if p not in epi_params
                   and deps.get(self.code.storage(t), frozenset()) & w.downstream]
        # that GEMM computed its operands from ours (down_proj, from the residual stream o_proj's add made): the op
        # mixing its result with ours (the next residual add) is past our epilogue, that GEMM's own; SwiGLU's up_proj
        # computes from the same input as gate_proj, not from gate_proj's result: silu(gate) * up is both's
        ours = {w.g} | w.downstream
        later = any(deps.get(self.code.storage(s.params[p]), frozenset()) & ours
                    for p in self._operand_params(s) if p in s.params and p not in epi_params)
        flow = walk(s.body, s.body.loads_of(epi_params), blocked=blocked,
                    broadcast=self._broadcast(s, w.out_numel, w.cols),
                    blocked_values=s.body.gemm_values if later else ())
        self._append_flow(w, j, flow, Rule.DATAFLOW_IN_NEXT_TEMPLATE, epi_params)
        w.stops.append(Evidence.of(Rule.DATAFLOW_RESULT_JOINS, where(s.launch.line), site=s.launch.name))

    def _append_flow(self, w: _ChainWalk, j: int, flow: Flow, rule: Rule, params: Sequence[str]) -> None:
        """Our result's ops that another GEMM's kernel (site ``j``) applies, read through its ``params``, onto the
        chain, each with the line of that kernel's body that runs it."""
        s = self.sites[j]
        assert s.kd is not None
        where = self.where
        added = False
        for o in flow.ops:
            key = self._op_key(s, o)
            if w.seen_ops.get(key, j) != j:  # an earlier kernel computed it (the residual add, again here): once
                w.stops.append(Evidence.of(Rule.DATAFLOW_RECOMPUTED, where(s.launch.line), kernel=s.kd.name,
                                           op=o.label))
                continue
            w.seen_ops[key] = j
            added = True
            w.chain.append(ChainOp(
                o.label, j, s.kd.name, False,
                Evidence.of(rule, where(s.launch.line), op=o.label, kernel=s.kd.name,
                            params=tuple(f"{p}={s.params[p]}" for p in params), code=_src(s.kd, o.line),
                            src_where=where(s.kd.line + o.line - 1)),
                o.values, s.launch.line, True))
        if added:
            w.chain_launches.add(j)

    def _op_key(self, s: _Site, o: Op) -> tuple[str, tuple[str, ...]]:
        """An op as the chain's kernels compute it: its label and the storages of its other operands (the same in
        another kernel is that op computed again)."""
        return o.label, tuple(sorted(self.code.storage(s.params[p]) for p in o.operands if p in s.params))

    def _operand_params(self, site: _Site) -> frozenset[str]:
        """A GEMM kernel's parameters that feed its matrix product (its operands, and what a fused prologue
        computes them from): read from a body that runs a dot, else the templates' operand names."""
        if site.body is not None and site.body.gemm_values and site.body.lang == "triton":
            return site.body.operand_params()
        return _OPERAND_PARAMS

    def _into_prologue(self, w: _ChainWalk, j: int, params: list[str]) -> bool:
        """The next GEMM's template reads our result as its operand through a fused prologue (the rotary embedding
        of q before the attention bmm, the soft-capping before a softmax's bmm): the ops its body applies to our
        value before the dot ran there, in another GEMM's kernel; the chain stops at the dot. False when the
        operand is read as it is (no op before the dot)."""
        s = self.sites[j]
        assert s.body is not None and s.kd is not None
        where = self.where
        flow = walk(s.body, s.body.loads_of(params), broadcast=self._broadcast(s, w.out_numel, w.cols))
        if not flow.ops:
            return False
        self._append_flow(w, j, flow, Rule.DATAFLOW_IN_NEXT_PROLOGUE, params)
        w.stops.append(Evidence.of(Rule.DATAFLOW_NEXT_GEMM, where(s.launch.line), site=s.launch.name,
                                   gemm_kind="conv" if s.gemm and s.gemm[0] in vocab.CONV_OPS else "gemm"))
        return True

    def _extern_reader(self, w: _ChainWalk, j: int) -> tuple[set[str], set[str]]:
        """A library call that reads the chain's data: a pointwise op on the chain, a view that carries it on, or
        any other op, whose result is past the epilogue (a statistic)."""
        s = self.sites[j]
        cls = vocab.op_class(s.launch.op or "")
        if cls in ("pointwise",):
            w.chain.append(ChainOp(_eager_label(s.launch.op or ""), j, s.launch.name, False,
                                   Evidence.of(Rule.DATAFLOW_SEPARATE_CALL, self.where(s.launch.line),
                                               site=s.launch.name), (), s.launch.line))
            w.chain_launches.add(j)
            return set(s.writes), set()
        if cls == "view":
            return set(s.writes), set()
        w.stops.append(Evidence.of(Rule.DATAFLOW_NOT_POINTWISE, self.where(s.launch.line), site=s.launch.name,
                                   op=str(s.launch.op)))
        return set(), set(s.writes)

    def _kernel_reader(self, w: _ChainWalk, j: int) -> tuple[set[str], set[str]]:
        """A kernel with a readable body that reads the chain's data: the epilogue ops its body applies (an op
        another kernel computed already counts once), and where in it the chain stops."""
        s = self.sites[j]
        assert s.body is not None and s.kd is not None
        deps = self.param_deps[j]
        where = self.where
        live_params = [p for p, t in s.params.items() if self.code.storage(t) in w.live]
        stat_params = [p for p, t in s.params.items() if p not in live_params
                       and self.code.storage(t) in w.stats]
        blocked = [p for p, t in s.params.items() if p not in live_params and p not in stat_params
                   and deps.get(self.code.storage(t), frozenset()) & w.downstream]
        flow = walk(s.body, s.body.loads_of(live_params), blocked=blocked, statistics=stat_params,
                    broadcast=self._broadcast(s, w.out_numel, w.cols))
        # A kernel of several loop nests can store the chain's value and load it back (rotary's rotate_half: one
        # nest writes the cat, the next reads it for the mul by sin): those loads are the chain's too
        # (loads after the store; an in-place kernel's loads before it read the buffer's old value)
        derived = set(flow.derived)
        stores = [st for st in s.body.stores if st.value in derived and st.param in s.params]
        first: dict[str, int] = {}
        for st in stores:
            t = self.code.storage(s.params[st.param])
            first[t] = min(first.get(t, st.line), st.line)
        back = [v.name for v in s.body.values if "load" in v.ops and v.param in s.params
                and v.param not in live_params and v.param not in stat_params
                and v.line > first.get(self.code.storage(s.params[v.param]), v.line)]
        if back:
            params_back = {s.body.at(b).param for b in back}
            blocked = [p for p in blocked if p not in params_back]
            flow = walk(s.body, s.body.loads_of(live_params) + tuple(back), blocked=blocked,
                        statistics=stat_params, broadcast=self._broadcast(s, w.out_numel, w.cols))
        fresh: list[Op] = []
        here: set[tuple[object, ...]] = set()
        for o in flow.ops:
            key = self._op_key(s, o)
            # the same expression in another loop nest of this kernel is one op over another slice of the data
            # (q's, k's and v's part of a packed projection's bias); another expression is another op (rotary's
            # x * cos and rotate_half(x) * sin, soft-capping's x * scale and tanh(...) * cap)
            sig = (key, s.body.form(o.values[-1]) if o.values else o.line)
            if sig in here:
                continue
            here.add(sig)
            if w.seen_ops.get(key, j) != j:  # another kernel computed it already
                if o not in flow.reduction_inputs:
                    w.feeding_keys.discard(key)  # also on the chain's own path: an epilogue op
                w.stops.append(Evidence.of(Rule.DATAFLOW_RECOMPUTED, where(s.launch.line), kernel=s.kd.name,
                                           op=o.label))
                continue
            w.seen_ops[key] = j
            if o in flow.reduction_inputs:
                w.feeding[len(w.chain) + len(fresh)] = key
                w.feeding_keys.add(key)
            fresh.append(o)
        for o in fresh:
            operands = [f"{p}={s.params[p]}" for p in o.operands if p in s.params]
            w.chain.append(ChainOp(
                o.label, j, s.kd.name, False,
                Evidence.of(Rule.DATAFLOW_SEPARATE_KERNEL, where(s.launch.line), op=o.label, kernel=s.kd.name,
                            params=tuple(f"{p}={s.params[p]}" for p in live_params), operands=tuple(operands) or None,
                            code=_src(s.kd, o.line), src_where=where(s.kd.line + o.line - 1)),
                o.values, s.launch.line))
        if flow.ops or flow.outputs:
            w.chain_launches.add(j)
        if flow.mixed and not w.norm[0]:
            w.norm = (s.kd.name, where(s.launch.line))
        self._kernel_stops(w, j, flow, stat_params, blocked)
        return ({self.code.storage(s.params[p]) for p in flow.outputs if p in s.params},
                {self.code.storage(s.params[p]) for p in flow.reduced_outputs if p in s.params})

    def _kernel_stops(self, w: _ChainWalk, j: int, flow: Flow, stat_params: list[str], blocked: list[str]) -> None:
        """Where the chain stops in kernel ``j`` (a pooling window, a norm's statistic, a reduction) and which of
        its ops belong to a later GEMM, as evidence."""
        s = self.sites[j]
        assert s.body is not None and s.kd is not None
        deps = self.param_deps[j]
        where = self.where
        bv = s.body.value(flow.boundary) if flow.boundary else None
        # the kernel line where the chain stops, when the body says which
        at = {"code": _src(s.kd, bv.line), "src_where": where(s.kd.line + bv.line - 1)} if bv is not None else {}
        if flow.pooled:
            pv = s.body.value(flow.pooled[0])
            pl = pv.line if pv is not None else 0
            w.stops.append(Evidence.of(Rule.DATAFLOW_POOLING, where(s.launch.line), kernel=s.kd.name,
                                       code=_src(s.kd, pl), src_where=where(s.kd.line + max(pl, 1) - 1)))
        elif flow.mixed and stat_params and flow.boundary in flow.mixed:
            w.stops.append(Evidence.of(Rule.DATAFLOW_STATISTICS, where(s.launch.line), kernel=s.kd.name, **at,
                                       params=tuple(f"{p}={s.params[p]}" for p in stat_params)))
        elif flow.reduced:
            w.stops.append(Evidence.of(Rule.DATAFLOW_REDUCTION, where(s.launch.line), kernel=s.kd.name, **at))
        if blocked and not flow.outputs and not flow.reduced and not flow.ops:
            pass
        elif blocked:
            later = sorted({self.sites[x].launch.name for p in blocked
                            for x in deps.get(self.code.storage(s.params[p]), frozenset()) & w.downstream})
            w.stops.append(Evidence.of(Rule.DATAFLOW_LATER_GEMM, where(s.launch.line), kernel=s.kd.name,
                                       gemms=tuple(later)))

    @staticmethod
    def _drop_norm_feeders(w: _ChainWalk) -> None:
        """RMSNorm's x * x computed in one kernel, the normalisation x * rsqrt(mean) in another: an op that only fed
        the reduction is the norm's, not an epilogue op."""
        if w.norm[0] and w.feeding_keys:
            for i in sorted(w.feeding, reverse=True):
                if w.feeding[i] in w.feeding_keys:
                    c = w.chain.pop(i)
                    w.stops.append(Evidence.of(Rule.DATAFLOW_NORM_FEEDER, w.norm[1], op=c.label, kernel=c.code_kernel,
                                               norm_kernel=w.norm[0]))

    def _statistics_from(self, site: _Site, stats: set[str]) -> set[str]:
        """Storages a call site writes from statistics of the chain alone (a split reduction's second stage:
        partial sums -> mean): values past the epilogue's boundary too."""
        if site.body is None:
            return set(site.writes)
        params = [p for p, t in site.params.items() if self.code.storage(t) in stats]
        flow = walk(site.body, site.body.loads_of(params))
        return {self.code.storage(site.params[p]) for p in flow.outputs + flow.reduced_outputs if p in site.params}

    def _site_mnk(self, site: _Site) -> tuple[int | None, int | None, int | None]:
        """M, N, K from a GEMM kernel's call-site operands: A [.., M, K] and B [.., K, N] are its first two tensors."""
        shapes = [_shape_of_arg(self.code, a) for a in site.launch.args]
        mats = [sh for sh in shapes if sh is not None and len(sh) >= 2]
        if len(mats) < 2:
            return None, None, None
        a, b = mats[0], mats[1]
        if _int(a[-1]) is not None and _int(a[-1]) == _int(b[-2]):
            return _int(a[-2]), _int(b[-1]), _int(a[-1])
        return None, None, None

    def _conv_site_mnk(self, site: _Site) -> tuple[int | None, int | None, int | None]:
        """A convolution template's implicit GEMM from the call site's buffers: input, weight, output."""
        def shape(name: str) -> Shape | None:
            b = self.code.buffer(name)
            return b.shape if b else None
        outs = [site.params[p] for p in (site.kd.outputs if site.kd else ()) if p in site.params]
        ins = [t for p, t in site.params.items() if t not in outs]
        big = [sh for t in ins if (sh := shape(t)) is not None and len(sh) >= 3]
        out = shape(outs[0]) if outs else None
        if len(big) >= 2 and out is not None:
            return _conv_mnk(big[0], big[1], out)
        return None, None, None

    def _out_mn(self, site: _Site) -> tuple[int | None, int | None]:
        for w in site.launch.writes:
            b = self.code.buffer(w)
            if b and b.shape and len(b.shape) >= 2:
                return _int(b.shape[-2]), _int(b.shape[-1])
        if site.kd is not None:
            for p in site.kd.outputs:
                t = site.params.get(p)
                b = self.code.buffer(t) if t else None
                if b and b.shape and len(b.shape) >= 2:
                    return _int(b.shape[-2]), _int(b.shape[-1])
        return None, None

    def _post_op_on(self, site: _Site, live: set[str], g: int, deps: dict[str, frozenset[int]]) -> list[str]:
        """The post-ops (binary, then its unary) a oneDNN binary call applies with one of ``live`` as the binary
        post-op's other operand (``.binary(X, other, ...)``, in place ``_.binary(other, X, ...)``), when that
        call's own GEMM does not compute from GEMM ``g``'s result (then the op mixing both is the later GEMM's,
        as the next ResNet block's residual add is); [] otherwise, or for no such call. ``deps``: the site's
        storages -> the GEMMs their values come from."""
        L = site.launch
        if site.kd is not None or not L.name.endswith(".binary") or not (L.op or "").startswith(
                ("_linear_pointwise", "_convolution_pointwise")):
            return []
        other, x = (0, 1) if L.name.endswith("_.binary") else (1, 0)
        if len(L.arg_names) <= max(other, x):
            return []
        on, xn = L.arg_names[other], L.arg_names[x]
        if on is None or self.code.storage(on) not in live:
            return []
        if xn is not None and g in deps.get(self.code.storage(xn), frozenset()):
            return []
        return _post_op_attrs(L)[:2]

    def _extern_fused(self, site: _Site, op: str, m: int | None, n: int | None, c_shape: Shape | None,
                      g: int) -> list[ChainOp]:
        """Ops a library call applies itself: the bias (or beta * C), oneDNN post-ops."""
        L = site.launch
        where = self.where(L.line)
        out: list[ChainOp] = []
        if op in vocab.BIAS_OPS and op != "addmv":
            cn = _numel(c_shape) if c_shape is not None else None
            if c_shape is not None and cn is not None and m is not None and n is not None and cn >= m * n and cn != n:
                out.append(ChainOp("add", g, L.name, True,
                                   Evidence.of(Rule.BETA_RESIDUAL, where, site=L.name, operand=L.args[0],
                                               shape=tuple(c_shape)), (), L.line))
            else:
                out.append(ChainOp("bias", g, L.name, True,
                                   Evidence.of(Rule.BIAS_C_OPERAND, where, site=L.name,
                                               bias=L.args[0] if L.args else ""), (), L.line))
        elif op in ("_mkl_linear",):
            if len(L.args) > 3 and L.args[3].strip() != "None":
                out.append(ChainOp("bias", g, L.name, True,
                                   Evidence.of(Rule.BIAS_OPERAND, where, site=L.name, bias=L.args[3]), (), L.line))
        elif op.startswith(("_linear_pointwise", "_convolution_pointwise")) or op in vocab.CONV_OPS:
            bias_pos = _onednn_args(L)[2]  # the binary forms: (X, other, W, B, ...); not the weight
            if len(L.args) > bias_pos and L.args[bias_pos].strip() not in ("None", ""):
                out.append(ChainOp("bias", g, L.name, True,
                                   Evidence.of(Rule.BIAS_OPERAND, where, site=L.name, bias=L.args[bias_pos]), (),
                                   L.line))
            # oneDNN post-ops: a unary attr ('relu'), or a binary one ('add') followed by its unary ('relu')
            for a in _post_op_attrs(L)[:2]:
                out.append(ChainOp(_post_op_label(a), g, L.name, True,
                                   Evidence.of(Rule.ONEDNN_POST_OP, where, site=L.name, attr=a), (), L.line))
        return out


def _src(kd: KernelDef, line: int) -> str | None:
    """The kernel source line that computes an op, for evidence (``tmp6 = libdevice.erf(tmp5)``); None when the
    body has no such line."""
    lines = kd.source.splitlines()
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    text = re.sub(r"^auto\s+", "", text)
    return text[:120] or None


# Template parameters that are the GEMM's own operands (Triton's arg_A/arg_B, the C++ template's X/W).
_OPERAND_PARAMS = frozenset({"arg_A", "arg_B", "A", "B", "X", "W", "arg_X", "arg_W", "in_ptr_A", "in_ptr_B"})


def _post_op_attrs(launch: Launch) -> list[str]:
    """A oneDNN call's post-op attributes, in order: its string arguments less the "no post-op" spellings (the
    binary attr ('add') first, then its unary ('relu'); a unary call's one ('gelu')). GELU's algorithm argument
    ('tanh' after 'gelu') is no op of its own: the two are 'gelu-tanh'."""
    out: list[str] = []
    for a in launch.literals:
        if not a or a in ("none", "", "auto", "default"):
            continue
        if a.lower() == "tanh" and out and out[-1].lower() == "gelu":
            out[-1] = "gelu-tanh"
            continue
        out.append(a)
    return out


def _post_op_label(attr: str) -> str:
    a = attr.lower()
    return {"swish": "silu", "hardswish": "hardswish", "gelu": "gelu", "relu": "relu", "sigmoid": "sigmoid",
            "tanh": "tanh", "leaky_relu": "leaky_relu", "hardtanh": "hardtanh", "add": "add", "sum": "add"}.get(a, a)


def _int_str(v: str | None) -> int | None:
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def _norm_op(op: str) -> str:
    return {"bias_addmm": "addmm", "_convolution_pointwise": "convolution",
            "_convolution_pointwise_": "convolution"}.get(op, op)


def _eager_label(name: str) -> str:
    base = name.split("::")[-1].split(".")[0]
    if base.endswith("_") and not base.startswith("_"):
        base = base[:-1]
    return "cast" if base in vocab.CAST_OPS else base


def _name_labels(kd: KernelDef) -> list[str]:
    """A kernel without a readable body: its graph fragment's ops (never its name)."""
    ops = [n.aten_op for n in kd.computed_here]
    return [o for o in dict.fromkeys(ops) if vocab.op_class(o) == "pointwise" and o not in vocab.CAST_OPS]


def _fragment_fused(kd: KernelDef, node: FxNode, g: int, L: Launch, where: Callable[[int], str]) -> list[ChainOp]:
    """Fused ops of a template whose body is not readable (NVGEMM, CUTLASS): the fragment nodes it computes
    after the GEMM node."""
    out: list[ChainOp] = []
    live = {node.name}
    started = False
    for n in kd.computed_here:
        if n is node:
            started = True
            continue
        if not started or not set(n.inputs) & live:
            continue
        cls = vocab.op_class(n.aten_op)
        if cls == "boundary" or cls in ("gemm", "conv"):
            break
        live.add(n.name)
        if cls in ("view", "cast"):
            continue
        label = "bias" if n.aten_op == "add" and node.aten_op in vocab.BIAS_OPS and not out else n.aten_op
        out.append(ChainOp(label, g, kd.name, True, Evidence.of(Rule.TEMPLATE_FRAGMENT, where(n.line), op=label,
                                                                  node=n.name, kernel=kd.name), (n.name,), L.line))
    if node.aten_op in vocab.BIAS_OPS and not any(o.label == "bias" for o in out):
        out.insert(0, ChainOp("bias", g, kd.name, True, Evidence.of(Rule.TEMPLATE_FRAGMENT_BIAS, where(node.line),
                                                                    gemm_op=node.aten_op, kernel=kd.name), (), L.line))
    return out


def _prologue(kd: KernelDef, gemm: FxNode) -> list[str]:
    """Ops inside the template that the GEMM node depends on (prologue fusion), views and casts excluded."""
    wanted = set(gemm.inputs)
    labels: list[str] = []
    for n in reversed(kd.computed_here):
        if n is gemm:
            continue
        if n.name in wanted:
            wanted |= set(n.inputs)
            if vocab.op_class(n.aten_op) == "pointwise" and n.aten_op not in vocab.CAST_OPS:
                labels.append(n.aten_op)
    return list(dict.fromkeys(reversed(labels)))


def code_gemms(code: OutputCode, gemm_calls: Mapping[int, str] | None = None) -> list[CodeGemm]:
    """Every GEMM call site of a module with its epilogue chain; ``gemm_calls``: calls of other ops that run GEMMs
    inside them (launch index -> the op; compiled.nested_gemm_calls)."""
    graph = Graph(code, gemm_calls)
    return [graph.chain(g) for g in graph.gemm_sites]
