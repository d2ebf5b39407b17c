"""Where an op came from: the module path (``layers.1.mlp.gate_proj``) and source line (``llama_block.py:52``).

Read from capture's files (no torch import):

- compiled modes: Dynamo's ``graph_code`` log (``TORCH_LOGS=graph_code``, on in every compiled worker). Each traced
  graph is printed as Python, a ``# File: /path/model.py:52 in forward, code: ...`` comment above the node lines it
  produced, and each node reads the parameters it uses by their flattened source names
  (``l_self_modules_layers_modules_1_modules_mlp_modules_gate_proj_parameters_weight_``), which spell the module
  path. :func:`parse_graph_code` turns a log into one :class:`GraphSource` per traced graph.
- eager mode: the worker wraps each submodule's forward in a profiler range ``kernelscope.module: <path>`` while it
  profiles; :func:`module_index` builds an interval index over those ranges once, and answers "which module was
  running at (ts, tid)" by bisection (fast on traces of a million events).
- compiled modes, each traced node's calling module: the worker's ``graph_N.modules.json`` beside the graph's code
  (Dynamo's ``nn_module_stack``), read by :func:`parse_graph_callers`; Inductor's provenance of each call site
  (``graph_N.provenance.json``), read by :func:`parse_inductor_provenance`.

The log format read here is what torch 2.11-2.14 print (``torch/fx/graph.py`` ``python_code(verbose=True)`` via
``torch/fx/_utils.py`` ``lazy_format_graph_code``, called from ``torch/_dynamo/output_graph.py``).
"""

from __future__ import annotations

import ast
import os
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from kernelscope import vocab

MODULE_RANGE_PREFIX = "kernelscope.module: "  # the worker's eager profiler ranges (capture/eager_ranges.py)
# eager GEMM-class calls: "kernelscope.source: /path/model.py:52" (capture/eager_ranges.py _EagerRanges)
SOURCE_RANGE_PREFIX = "kernelscope.source: "
# eager dataflow: every torch function that reads a tensor a GEMM-class call made (or is one) runs inside
# "kernelscope.flow: #12 in=3,5": the call's serial and the serials of the calls that made its tensor inputs
# (capture/eager_ranges.py _EagerRanges); the eager path follows a GEMM's output through them
FLOW_RANGE_PREFIX = "kernelscope.flow: "
# Inductor's provenance of one graph, beside its output code: code/graph_0.py -> code/graph_0.provenance.json
PROVENANCE_SUFFIX = ".provenance.json"

# glog prefix of torch's log records: "V1203 07:20:31.744000 6650 site-packages/torch/_dynamo/output_graph.py:2936] "
# then an optional rank prefix and compile id ("[0/0]", "[0/1_1]", "[!0/0/0]"), then the artifact tag.
_TAG = "[__graph_code]"
_FRAME = re.compile(r"\[([!\d][^\]\s]*)\]\s*$")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_GRAPH_NAME = re.compile(r"^=====\s*(.*?)\s*=====$")
_FILE = re.compile(r"File: (?P<file>.+?):(?P<line>\d+) in (?P<fn>[^,]+), code: (?P<code>.*)$")
_NO_STACK = "No stacktrace found"
# "name: "f32[8, 32][32, 1]cpu" = expr;  a = b = None" (the annotation is a quoted string in verbose mode, a type
# like `torch.Tensor` otherwise)
_NODE = re.compile(r'^(?P<name>[A-Za-z_]\w*)(?:\s*:\s*(?:"[^"]*"|[\w.\[\], ]+?))?\s+=\s+(?P<expr>.+)$')
# in-place operators and setitem, which fx prints as a statement and then aliases: "x += y;  iadd = x"
_INPLACE = re.compile(r"^(?P<lhs>.+?) (?P<op>\*\*|//|<<|>>|[-+*/@%&|^])= (?P<rhs>.+?);  (?P<name>[A-Za-z_]\w*)"
                      r'(?:\s*:\s*(?:"[^"]*"|[\w.\[\], ]+?))? = (?P<alias>[A-Za-z_]\w*)(?:;  .*)?$')
_SETITEM = re.compile(r"^(?P<lhs>[A-Za-z_]\w*\[.*\]) = (?P<rhs>.+?);  (?P<name>[A-Za-z_]\w*)"
                      r'(?:\s*:\s*(?:"[^"]*"|[\w.\[\], ]+?))? = (?P<alias>[A-Za-z_]\w*)(?:;  .*)?$')
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
_CALLEE = re.compile(r"^(?P<callee>[A-Za-z_][\w.]*)\(")
_INPLACE_OPS = {"+": "iadd", "-": "isub", "*": "imul", "/": "itruediv", "//": "ifloordiv", "%": "imod", "**": "ipow",
                "@": "imatmul", "&": "iand", "|": "ior", "^": "ixor", "<<": "ilshift", ">>": "irshift"}
# Python operators as op names: the names of fx's magic methods (torch/fx/graph.py magic_methods)
_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.MatMult: "matmul", ast.Div: "truediv",
           ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.LShift: "lshift", ast.RShift: "rshift",
           ast.BitAnd: "and_", ast.BitOr: "or_", ast.BitXor: "xor"}
_UNARY = {ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "invert", ast.Not: "not_"}
_COMPARE = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
# Dynamo's flattened source names: L['self']._modules['layers']._modules['0']._parameters['weight'] is printed as
# L_self_modules_layers_modules_0_parameters_weight_ (placeholder) and l_self_modules_..._weight_ (its local).
_PARAM = re.compile(r"^[LlGg]_(?P<path>.+?)_(?P<kind>parameters|buffers)_(?P<leaf>.+?)_?$")


@dataclass(frozen=True, slots=True)
class NodeSource:
    """One node of a Dynamo graph: what it computes and where it came from."""

    name: str  # Dynamo's node name ("linear_2"), as in the graph and in Inductor's origins
    op: str  # the callee's last dotted part ("linear", "silu", "view") or the operator's name ("mul", "matmul")
    module: str | None  # module path of the parameters/buffers it reads ("layers.0.mlp.down_proj"); "" = root
    source: str | None  # "model.py:52" (file basename + line of the user code that made it)
    code: str | None  # that line's source text
    file: str | None = None  # the full path of the source file
    function: str | None = None  # the function the line is in ("forward")
    # the parameter/buffer it reads, as Dynamo flattened it ("L__self___layers_0_mlp_gate_proj_weight"): shown when
    # the module path cannot be recovered (a flattened name without the model's parameter names)
    param: str | None = None
    # the names its expression reads, in order (other nodes among them: its inputs)
    reads: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GraphSource:
    """One traced graph of the log: its compile id ("0/0": frame 0, first compile), name and nodes."""

    frame: str
    name: str
    nodes: Mapping[str, NodeSource] = field(default_factory=lambda: MappingProxyType({}))

    def __getitem__(self, node: str) -> NodeSource:
        return self.nodes[node]

    def get(self, node: str) -> NodeSource | None:
        return self.nodes.get(node)

    def by_op(self, *ops: str) -> tuple[NodeSource, ...]:
        """The nodes of these ops, in graph order (``by_op("linear")``: the Linear GEMMs in launch order)."""
        return tuple(n for n in self.nodes.values() if n.op in ops)


# With Inductor's freezing (on by default on the CPU) Dynamo installs parameters as graph attributes named by
# OutputGraph.module_key_name: L['self'].layers[0].mlp.gate_proj.weight -> L__self___layers_0_mlp_gate_proj_weight
# (node name l__self___..., snake-cased). Dots and underscores merge there: the model's parameter names decide.
_FLAT = re.compile(r"^[LlGg]__(?P<root>.+?)___(?P<rest>.+)$")
_NON_ALNUM = re.compile(r"[^a-zA-Z0-9]")
_INDEXED = re.compile(r"^(?:\d+_)+")


class ParamNames:
    """Resolve Dynamo's names for parameters and buffers to module paths, with the model's parameter and buffer
    names (``capture.json``'s ``param_names``) for the flattened form."""

    __slots__ = ("exact", "loose", "root")

    def __init__(self, params: Iterable[str] = (), root: str = "") -> None:
        """``root``: a prefix every path carries that the user's model does not (an older capture's keyword-inputs
        wrapper, ``"model."``): dropped from the paths returned."""
        self.root = root
        self.exact: dict[str, str] = {}
        self.loose: dict[str, str | None] = {}  # lower case, no underscores (node names are snake-cased)
        for fqn in params:
            flat = _NON_ALNUM.sub("_", fqn)
            self.exact.setdefault(flat, fqn)
            key = _loose(flat)
            self.loose[key] = fqn if self.loose.get(key, fqn) == fqn else None  # None: ambiguous

    def module_of(self, name: str) -> str | None:
        m = _PARAM.match(name)
        if m is not None:
            parts = m.group("path").split("_modules_")
            return strip_root(".".join(parts[1:]), self.root)
        m = _FLAT.match(name)
        if m is None:
            return None
        rest = m.group("rest")
        fqn = self.exact.get(rest) or self.loose.get(_loose(rest))
        if fqn is None and _INDEXED.match(rest):
            # the model reached through an argument list: L['args'][0].model.embed_tokens.weight is flattened to
            # L__args___0_model_embed_tokens_weight (a decorator's ``wrapper(*args, **kwargs)`` was the frame)
            rest = _INDEXED.sub("", rest)
            fqn = self.exact.get(rest) or self.loose.get(_loose(rest))
        return strip_root(fqn.rpartition(".")[0], self.root) if fqn else None

    def is_param(self, name: str) -> bool:
        """Looks like a parameter or buffer name (even when no module path can be recovered)."""
        return _PARAM.match(name) is not None or _FLAT.match(name) is not None


def strip_root(path: str, root: str) -> str:
    """``path`` without ``root`` ("model.layers.0" -> "layers.0" for root "model."; "model" -> "")."""
    if not root:
        return path
    if path == root.rstrip("."):
        return ""
    return path[len(root):] if path.startswith(root) else path


def _loose(flat: str) -> str:
    return flat.replace("_", "").lower()


def module_path_from_param(name: str, params: Iterable[str] | ParamNames | None = None) -> str | None:
    """``l_s_modules_layers_modules_0_modules_down_proj_parameters_weight_`` -> ``layers.0.down_proj``.

    The root prefix (``l_self_``, ``l_s_``: the forward's self name, or a global ``g_model_``) is dropped,
    ``_modules_`` separates path parts, ``_parameters_``/``_buffers_`` ends the path. A parameter of the root module
    gives ``""``; a name that is no parameter or buffer gives None. The flattened form that freezing gives
    (``l__self___layers_0_down_proj_weight``) needs ``params``, the model's parameter names: without them, None.
    """
    names = params if isinstance(params, ParamNames) else ParamNames(params or ())
    return names.module_of(name)


def parse_graph_code(log_text: str, params: Iterable[str] | ParamNames | None = None,
                     root: str = "") -> tuple[GraphSource, ...]:
    """Every graph Dynamo traced, in log order (graph breaks and recompiles give several), from a log with
    ``TORCH_LOGS=graph_code``. Other log records in the same file are skipped. Text without torch's log prefixes
    (a bare ``print_readable`` dump) is read as one stream of graph code. ``params``: the model's parameter and
    buffer names (``capture.json`` ``param_names``), needed for module paths when freezing was on; ``root``: a
    prefix to drop from the paths (``ParamNames``)."""
    names = params if isinstance(params, ParamNames) else ParamNames(params or (), root)
    graphs: list[GraphSource] = []
    cur: _GraphBuilder | None = None
    for frame, line in _payload_lines(log_text):
        s = line.strip()
        if s == "TRACED GRAPH":
            if cur is not None:
                graphs.append(cur.finish())
            cur = _GraphBuilder(frame, names)
            continue
        if cur is None:
            continue
        if not cur.name:
            m = _GRAPH_NAME.match(s)
            if m is not None:
                cur.name = m.group(1)
                continue
        cur.line(s)
    if cur is not None:
        graphs.append(cur.finish())
    return tuple(graphs)


def _payload_lines(text: str) -> Iterator[tuple[str, str]]:
    tagged = _TAG in text
    for raw in text.splitlines():
        if "\x1b" in raw:
            raw = _ANSI.sub("", raw)
        if not tagged:
            yield "", raw
            continue
        at = raw.find(_TAG)
        if at < 0:
            continue
        m = _FRAME.search(raw, 0, at)
        payload = raw[at + len(_TAG):]
        yield (m.group(1) if m else ""), payload[1:] if payload.startswith(" ") else payload


class _GraphBuilder:
    __slots__ = ("frame", "name", "names", "nodes", "derived", "alias", "src")

    def __init__(self, frame: str, names: ParamNames) -> None:
        self.frame = frame
        self.names = names
        self.name = ""
        self.nodes: dict[str, NodeSource] = {}
        # nodes computed from parameters alone (weight.t()): their module and parameter
        self.derived: dict[str, tuple[str | None, str]] = {}
        # graph inputs' locals -> the placeholder ("l_self_..._weight_ = L_self_..._weight_"): the placeholder keeps
        # the attribute names' case
        self.alias: dict[str, str] = {}
        self.src: tuple[str, str, str, str] | None = None  # file, line, function, code

    def finish(self) -> GraphSource:
        return GraphSource(self.frame, self.name, MappingProxyType(self.nodes))

    def line(self, s: str) -> None:
        if not s or s.startswith(("def ", "class ", "return ", "return(", '"""')):
            return
        if s.startswith("#"):
            m = _FILE.search(s)
            if m is not None:
                self.src = (m.group("file"), m.group("line"), m.group("fn").strip(), m.group("code"))
            elif _NO_STACK in s:
                self.src = None
            return
        if "= " not in s:
            return
        m = _INPLACE.match(s) or _SETITEM.match(s)
        if m is not None:
            op = _INPLACE_OPS.get(m.groupdict().get("op") or "", "setitem")
            self.add(m.group("name"), op, f"{m.group('lhs')} {m.group('rhs')}")
            return
        m = _NODE.match(s)
        if m is None:
            return
        name, expr = m.group("name"), m.group("expr")
        cut = expr.find(";  ")  # fx's "a = b = None" deletions after the last use
        if cut >= 0:
            expr = expr[:cut]
        self.add(name, None, expr)

    def add(self, name: str, op: str | None, expr: str) -> None:
        if name in self.nodes:  # a nested graph (a higher-order op's body) reusing a name: keep the outer one
            return
        reads, parsed_op = _reads_and_op(expr)
        if op is None:
            op = parsed_op
        if op == "placeholder":  # "l_x_ = L_x_": a graph input's local, not a node
            if reads:
                self.alias[name] = reads[0]
            return
        if op == "getattr" and expr.startswith("self."):  # a get_attr node: a parameter installed on the graph
            self.alias[name] = expr[len("self."):].strip()
            op, reads = "get_attr", [name]
        module = param = None
        all_params = bool(reads)  # computed from parameters alone (weight.t()): its users read that parameter
        for r in reads:
            if r in self.derived:
                path, target = self.derived[r]
            else:
                target = self.alias.get(r, r)
                path = self.names.module_of(target)
                if path is None and not self.names.is_param(target):
                    all_params = False
                    continue
            if module is None and path is not None:
                module, param = path, target
            elif param is None:
                param = target  # a parameter whose module path is unknown (no param_names): still shown
        if param is not None and all_params:
            self.derived[name] = (module, param)
        src = self.src
        if src is None:
            self.nodes[name] = NodeSource(name, op, module, None, None, param=param, reads=tuple(reads))
        else:
            file, line, fn, code = src
            self.nodes[name] = NodeSource(name, op, module, f"{os.path.basename(file)}:{line}", code, file, fn, param,
                                          tuple(reads))


def _reads_and_op(expr: str) -> tuple[list[str], str]:
    """The names an expression reads (in order) and its op name."""
    try:
        tree = ast.parse(expr.strip(), mode="eval").body
    except SyntaxError:
        m = _CALLEE.match(expr.strip())
        op = _op_of_callee(m.group("callee")) if m else "unknown"
        return [n for n in _IDENT.findall(expr) if n not in ("None", "True", "False")], op
    reads = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]
    if isinstance(tree, ast.Call):
        func = tree.func
        dotted = _dotted(func)
        op = _op_of_callee(dotted) if dotted else "call"
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            pass  # a method call (x.view(...)): the receiver is the first read already
    elif isinstance(tree, ast.BinOp):
        op = _BINOPS.get(type(tree.op), "binop")
    elif isinstance(tree, ast.UnaryOp):
        op = _UNARY.get(type(tree.op), "unary")
    elif isinstance(tree, ast.Compare) and len(tree.ops) == 1:
        op = _COMPARE.get(type(tree.ops[0]), "compare")
    elif isinstance(tree, ast.Subscript):
        op = "getitem"
    elif isinstance(tree, ast.Attribute):
        op = "getattr"
    elif isinstance(tree, ast.Name):
        op = "placeholder"
    else:
        op = type(tree).__name__.lower()
    # ast.walk is breadth-first: put the reads back in source order
    reads.sort(key=lambda n, e=expr: _first_index(e, n))
    # callee names (torch, torch.nn.functional) are not data
    return [r for r in dict.fromkeys(reads) if r not in ("torch", "operator", "math", "builtins")], op


def _first_index(expr: str, name: str) -> int:
    m = re.search(rf"\b{re.escape(name)}\b", expr)
    return m.start() if m else len(expr)


def _dotted(node: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _op_of_callee(callee: str) -> str:
    parts = callee.split(".")
    if len(parts) >= 4 and parts[0] == "torch" and parts[1] == "ops":
        return parts[3]  # torch.ops.aten.mm.default -> mm
    return parts[-1]


# ---- eager: the worker's module ranges in the trace ---------------------------------------------------------------


class _Event(Protocol):
    # read-only: a frozen trace record (trace.CpuEvent) is one
    @property
    def name(self) -> str: ...
    @property
    def ts(self) -> float: ...
    @property
    def dur(self) -> float: ...
    @property
    def tid(self) -> Any: ...


@dataclass(frozen=True, slots=True)
class RangeIndex:
    """Disjoint time segments per thread, each labelled with the innermost range of one prefix open in it (module
    paths, eager source lines or dataflow serials)."""

    segments: Mapping[Any, tuple[tuple[float, ...], tuple[float, ...], tuple[str, ...]]]  # tid -> starts, ends, paths
    ranges: int  # how many module ranges the trace has

    def at(self, ts: float, tid: Any) -> str | None:
        """The innermost ``kernelscope.module:`` range open at ``ts`` on thread ``tid`` (None: no module)."""
        seg = self.segments.get(tid)
        if seg is None:
            return None
        starts, ends, paths = seg
        i = bisect_right(starts, ts) - 1
        if i < 0 or ts >= ends[i]:
            return None
        return paths[i]

    def of(self, event: _Event) -> str | None:
        """The module a CPU op ran in (by its start and thread)."""
        return self.at(event.ts, event.tid)


def module_index(events: Iterable[_Event], prefix: str = MODULE_RANGE_PREFIX, root: str = "") -> RangeIndex:
    """Index the ``kernelscope.module: <path>`` ranges of a trace's CPU events (``trace.cpu``): O(n log n) once,
    then O(log n) per lookup. ``prefix=SOURCE_RANGE_PREFIX`` indexes the eager source-line ranges instead (the
    label is then ``/path/model.py:52``). ``root``: a prefix to drop from the paths (``ParamNames``)."""
    by_tid: dict[Any, list[tuple[float, float, str]]] = {}
    n = len(prefix)
    count = 0
    for e in events:
        name = e.name
        if name.startswith(prefix):
            by_tid.setdefault(e.tid, []).append((e.ts, e.ts + e.dur, strip_root(name[n:], root)))
            count += 1
    return RangeIndex(MappingProxyType({tid: _segments(r) for tid, r in by_tid.items()}), count)


def _segments(ranges: list[tuple[float, float, str]]) -> tuple[tuple[float, ...], tuple[float, ...], tuple[str, ...]]:
    """One thread's nested ranges -> disjoint segments (start, end, innermost path), sorted by start."""
    ranges.sort(key=lambda r: (r[0], -r[1]))  # a parent before the children that start with it
    starts: list[float] = []
    ends: list[float] = []
    paths: list[str] = []

    def emit(a: float, b: float, path: str) -> None:
        if b > a:
            starts.append(a)
            ends.append(b)
            paths.append(path)

    stack: list[tuple[float, str]] = []  # (end, path) of the open ranges, innermost last
    pos = float("-inf")
    for ts, end, path in ranges:
        while stack and stack[-1][0] <= ts:
            top_end, top = stack.pop()
            emit(pos, top_end, top)
            pos = max(pos, top_end)
        if stack:
            emit(pos, ts, stack[-1][1])
            end = min(end, stack[-1][0])  # ranges nest on one thread; clamp one that would not
        pos = ts
        stack.append((end, path))
    while stack:
        top_end, top = stack.pop()
        emit(pos, top_end, top)
        pos = max(pos, top_end)
    return tuple(starts), tuple(ends), tuple(paths)


def parse_flow(label: str) -> tuple[int, frozenset[int]] | None:
    """"#12 in=3,5" (a ``kernelscope.flow:`` range's label) -> (12, {3, 5}); None when malformed."""
    head, _, ins = label.partition(" in=")
    if not head.startswith("#") or not head[1:].isdigit():
        return None
    try:
        return int(head[1:]), frozenset(int(x) for x in ins.split(",") if x)
    except ValueError:
        return None


def short_source(where: str) -> str:
    """"/path/to/model.py:52" -> "model.py:52" (how sources are shown; the full path stays in the evidence)."""
    path, sep, line = where.rpartition(":")
    if not sep or not line.isdigit():
        return os.path.basename(where)
    return f"{os.path.basename(path)}:{line}"


# Inductor's provenance (torch >= 2.9 with trace.provenance_tracking_level = 1; kernelscope's compiled workers turn
# it on). The output code gets "# [Provenance debug handles] <kernel>:<handle>" above each call site, one handle
# per call site (a kernel definition launched twice has two); torch/_inductor/debug.py
# dump_inductor_provenance_info() maps "<kernel>:<handle>" to the post-grad FX nodes it computes
# ("cppCodeToPost"; the name says C++ but Triton and extern kernels are in it too), post-grad nodes to the pre-grad
# (Dynamo) nodes they came from ("postToPre"), and _inductor_kernel_stack_trace holds the user stack of each
# "<kernel>:<handle>". The worker stores both as {"mapping": ..., "stack_traces": ...}.
_STACK_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>[^\n]+)\n(?P<code>[^\n]*)')


@dataclass(frozen=True, slots=True)
class CallSiteProvenance:
    """What Inductor's provenance says of one call site ("extern_kernels.addmm:3")."""

    handle: str
    post_nodes: tuple[str, ...]  # the post-grad nodes the call computes ("addmm_1"), in Inductor's order
    pre_nodes: tuple[str, ...]  # the pre-grad (Dynamo) nodes those came from ("g"; graph_code's node names)
    file: str | None  # the user frame that made it (the last frame of its first stack trace)
    line: int | None
    code: str | None
    # each post-grad node -> the pre-grad nodes it came from
    post_to_pre: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def gemm_nodes(self) -> tuple[str, tuple[str, ...]] | None:
        """The call's GEMM-class post-grad node (``_mkl_linear_12``, ``addmm_1``, ``convolution``: FX names
        nodes after their target) and the pre-grad nodes it came from; None when it computes none (a pointwise
        kernel). A template with a fused epilogue or prologue computes several nodes: the GEMM is the one that
        decides the module, not the norm fused before it. A node a pattern replacement made is named after its
        overload (``bmm_default_11``: SDPA's decomposition)."""
        for post, pre in self.post_to_pre or tuple((n, ()) for n in self.post_nodes):
            base = re.sub(r"(?:_default)?(?:_\d+)?$", "", post)
            if vocab.is_gemm(base) or vocab.is_gemm(base.lstrip("_")):
                return post, pre
        return None

    @property
    def source(self) -> str:
        return short_source(f"{self.file}:{self.line}") if self.file and self.line else ""


@dataclass(frozen=True, slots=True)
class GraphProvenance:
    """One compiled graph's provenance, by call-site handle."""

    sites: Mapping[str, CallSiteProvenance]

    def site(self, handle: str | None) -> CallSiteProvenance | None:
        return self.sites.get(handle) if handle else None


def parse_inductor_provenance(data: Any) -> GraphProvenance | None:
    """The worker's ``graph_N.provenance.json`` (or a bare dump_inductor_provenance_info() mapping) -> the
    provenance of each call site; None when it holds none (provenance was off, or torch had none)."""
    if not isinstance(data, dict):
        return None
    mapping = data.get("mapping", data)
    stacks = data.get("stack_traces") or {}
    if not isinstance(mapping, dict):
        return None
    to_post = mapping.get("cppCodeToPost") or {}
    post_to_pre = mapping.get("postToPre") or {}
    if not isinstance(to_post, dict) or not to_post:
        return None
    sites: dict[str, CallSiteProvenance] = {}
    for handle, post in to_post.items():
        post_t = tuple(str(n) for n in post or ())
        pre: list[str] = []
        per: list[tuple[str, tuple[str, ...]]] = []
        for n in post_t:
            mine = tuple(p for p in post_to_pre.get(n) or () if isinstance(p, str))
            per.append((n, mine))
            for p in mine:
                if p not in pre:
                    pre.append(p)
        file = line = code = None
        st = stacks.get(handle) if isinstance(stacks, dict) else None
        text = st[0] if isinstance(st, list) and st else st if isinstance(st, str) else ""
        frames = list(_STACK_FRAME.finditer(text or ""))
        if frames:  # the innermost frame (the stack is printed outermost first)
            f = frames[-1]
            file, line, code = f.group("file"), int(f.group("line")), f.group("code").strip()
        sites[str(handle)] = CallSiteProvenance(str(handle), post_t, tuple(pre), file, line, code, tuple(per))
    return GraphProvenance(MappingProxyType(sites))


# ---- compiled: the module that called each traced node ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GraphCallers:
    """Which module's forward called each node of one traced graph: the worker's ``graph_N.modules.json`` beside
    the graph's output code (capture/callers.py, from Dynamo's ``nn_module_stack``). Paths are the user's model's
    (``get_submodule`` finds them; "" is the model itself), whatever frame the graph was traced from."""

    frame: str | None  # the module whose forward Dynamo compiled ("" the model; None: not known)
    # traced (pre-grad) node name -> its calling modules, innermost first, the frame's last
    nodes: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))

    def stack(self, node: str) -> tuple[str, ...] | None:
        return self.nodes.get(node)

    def caller(self, node: str) -> str | None:
        """The innermost module whose forward called the node; None when the record does not name the node."""
        stack = self.nodes.get(node)
        return stack[0] if stack else None


def parse_graph_callers(data: Any) -> GraphCallers | None:
    """The worker's ``graph_N.modules.json`` (``{"frame": path | null, "nodes": {node: [path, ...]}}``) -> its
    record; None when it names no node (or is not that shape)."""
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), dict):
        return None
    nodes = {str(name): tuple(p for p in stack if isinstance(p, str))
             for name, stack in data["nodes"].items() if isinstance(stack, list)}
    nodes = {name: stack for name, stack in nodes.items() if stack}
    if not nodes:
        return None
    frame = data.get("frame")
    return GraphCallers(frame if isinstance(frame, str) else None, MappingProxyType(nodes))
