"""What a kernel computes, read from its body: the dataflow from each pointer parameter to each store.

Inductor's kernels are in SSA form (``tmp3 = tmp1 * tmp2``), Triton (Python) on the GPU and C++ on the CPU. A
kernel definition can be launched at several call sites with different buffers, so this is per definition and
keyed by parameter names (``in_ptr0``, ``in_out_ptr0``, ``Y``); the call site maps buffers to parameters.

From a set of start values (the loads of the parameter that holds a GEMM's output, or a template's ``acc``) the
walk collects the values derived from them, stops at reductions (``tl.sum``, ``tmp_acc0 = ...``, welford), and
recognises user-level ops in the primitive ops Inductor emits: GELU as erf or as its tanh approximation, SiLU as
``x * sigmoid(x)`` or ``x / (1 + exp(-x))``, ReLU as ``maximum(0, x)``, eval batch norm as ``(x - mean) *
rsqrt(var + eps) * w + b``. Op names are never read from the kernel's name or from RecordFunction strings.

No torch import.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from kernelscope import vocab

# ------------------------------------------------------------------------------------------------------------
# Model


@dataclass(frozen=True, slots=True)
class Value:
    """One SSA value of a kernel body."""

    name: str
    ops: tuple[str, ...]  # primitive ops in the expression: "load", "add", "mul", "erf", "const", "cast", ...
    inputs: tuple[str, ...]  # names of the values it reads
    param: str | None = None  # the pointer a load reads
    index: str = ""  # a load's index expression, as written
    const: float | None = None  # a constant's value
    line: int = 0  # 1-based line in the kernel source
    reduces: bool = False  # a reduction (its value mixes elements: what follows is no epilogue)
    index_inputs: tuple[str, ...] = ()  # a load's index: the values it is computed from (an indirect load's row)


@dataclass(frozen=True, slots=True)
class Store:
    param: str
    value: str
    line: int


@dataclass(frozen=True, slots=True)
class Body:
    lang: str  # "triton" | "cpp"
    values: tuple[Value, ...]
    stores: tuple[Store, ...]
    gemm_values: tuple[str, ...] = ()  # template: the GEMM's own result (acc, or the loads of Y after micro_gemm)
    params: tuple[str, ...] = ()
    _by_name: dict[str, Value] = field(default_factory=dict, compare=False, repr=False)
    _forms: dict[str, int] = field(default_factory=dict, compare=False, repr=False)
    _stored_at: dict[str, str] = field(default_factory=dict, compare=False, repr=False)  # load -> value stored

    def value(self, name: str) -> Value | None:
        if not self._by_name:
            self._by_name.update({v.name: v for v in self.values})
        return self._by_name.get(name)

    def at(self, name: str) -> Value:
        """The value of a name the body defines (an input or a user of one of its values)."""
        v = self.value(name)
        if v is None:
            raise KeyError(name)
        return v

    def inputs_of(self, name: str) -> tuple[str, ...]:
        v = self.value(name)
        return v.inputs if v is not None else ()

    def loads_of(self, params: Iterable[str]) -> tuple[str, ...]:
        ps = set(params)
        return tuple(v.name for v in self.values if v.param in ps and "load" in v.ops)

    def form(self, name: str) -> int:
        """What a value computes, whatever the index it loads at: equal for the same expression over the same
        parameters (one loop nest per slice of the data computes it again, or reads back what an earlier nest
        stored and computes on it again), different for another expression."""
        forms: dict[str, int] = self._forms
        if not forms:
            # a load of a buffer this body stored earlier reads the stored value
            for ld in self.values:
                if ld.param is not None and "load" in ld.ops:
                    st = [x for x in self.stores if x.param == ld.param and x.line < ld.line]
                    if st:
                        self._stored_at[ld.name] = max(st, key=lambda x: x.line).value
        todo, opened = [name], set()
        while todo:
            x = todo[-1]
            if x in forms:
                todo.pop()
                continue
            v = self.value(x)
            if v is None:
                forms[x] = hash(x)
                todo.pop()
                continue
            if x in self._stored_at:
                y = self._stored_at[x]
                if y in forms:
                    forms[x] = forms[y]
                    todo.pop()
                elif y in opened:
                    forms[x] = hash(x)
                    todo.pop()
                else:
                    opened.add(x)
                    todo.append(y)
                continue
            missing = [i for i in v.inputs if i not in forms and i not in opened]
            if missing:
                opened.add(x)
                todo.extend(missing)
                continue
            if any(i not in forms for i in v.inputs):  # an accumulator that reads itself
                forms.update({i: hash(i) for i in v.inputs if i not in forms})
            ins = [forms[i] for i in v.inputs]
            if v.param is None and len(set(ins)) == 1 and set(v.ops) <= vocab.BODY_PASS_OPS:
                forms[x] = ins[0]  # a cast, a view, a copy (a transposed tile, however filled) computes nothing
            else:
                if set(v.ops) <= vocab.BODY_COMMUTATIVE_OPS:
                    ins.sort()
                forms[x] = hash((v.ops, v.param, v.const, tuple(ins)))
            todo.pop()
        return forms[name]

    def operand_params(self) -> frozenset[str]:
        """The parameters whose loads reach a matrix product's operands (the GEMM's inputs and what a fused
        prologue computes them from): ancestors of the ``dot`` values, not through another dot (the accumulator
        it adds to). Empty for a body that runs no dot."""
        dots = set(self.gemm_values)
        seen: set[str] = set()
        todo = [i for d in dots for i in self.inputs_of(d) if i not in dots]
        params: set[str] = set()
        while todo:
            name = todo.pop()
            if name in seen or name in dots:
                continue
            seen.add(name)
            v = self.value(name)
            if v is None:
                continue
            if v.param is not None:
                params.add(v.param)
            todo.extend(v.inputs)
        return frozenset(params)


@dataclass(frozen=True, slots=True)
class Op:
    """A user-level op recognised on the path from the start values."""

    label: str  # "bias", "gelu", "silu", "relu", "add", "mul", "batch_norm", ...
    values: tuple[str, ...]  # the body values it stands for
    line: int
    operands: tuple[str, ...] = ()  # the parameters of the other operands it reads (bias, residual, up_proj)


@dataclass(frozen=True, slots=True)
class Flow:
    """What a kernel does with the start values."""

    ops: tuple[Op, ...]  # pointwise ops on the start values, in order
    outputs: tuple[str, ...]  # parameters whose stores carry a derived value (the chain goes on there)
    reduced: bool  # a reduction consumed a derived value, or a statistic met it: the chain ends in this kernel
    reduced_outputs: tuple[str, ...] = ()  # parameters stored from values past the boundary (statistics)
    derived: tuple[str, ...] = ()  # every derived value (for tests and evidence)
    pooled: tuple[str, ...] = ()  # values that pool a window of the start values (the chain ends there)
    mixed: tuple[str, ...] = ()  # values that combine the chain's data with a statistic of it (x - mean: a norm)
    reduction_inputs: tuple[Op, ...] = ()  # ops of ``ops`` whose values only feed a reduction
    boundary: str = ""  # the first value past the boundary that reads the chain's data (where the chain ends)


# ------------------------------------------------------------------------------------------------------------
# Triton

_TRITON_REDUCE = re.compile(
    r"^(tl\.(sum|max|min|reduce|argmax|argmin|cumsum|cumprod|associative_scan|xor_sum)|triton_helpers\."
    r"(max2|min2|prod|welford\w*|any|online_softmax\w*|exp_sum|cumsum\w*|max_with_index|min_with_index|"
    r"argmax|argmin|bucketize\w*|sort\w*))$"
)
_TRITON_VIEW = vocab.TRITON_VIEW_FNS
_BIN = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv",
        ast.Mod: "mod", ast.Pow: "pow", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor",
        ast.LShift: "shl", ast.RShift: "shr", ast.MatMult: "dot"}
_CMP = {ast.Gt: "gt", ast.GtE: "ge", ast.Lt: "lt", ast.LtE: "le", ast.Eq: "eq", ast.NotEq: "ne"}
_MASK_NAME = re.compile(r"^(x|y|z|r\d*_|r)?mask$|_mask$|^mask$")


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else node.attr
    return ""


def _names(node: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]


def _ptr_of(node: ast.AST, params: set[str], alias: dict[str, str]) -> tuple[str | None, str]:
    """(pointer parameter, index text) of a load/store address ``in_ptr0 + (x0)``."""
    base = node
    while isinstance(base, ast.BinOp) and isinstance(base.op, ast.Add):
        base = base.left
    name = base.id if isinstance(base, ast.Name) else None
    name = alias.get(name, name) if name else None
    index = ast.unparse(node.right) if isinstance(node, ast.BinOp) else ""
    return (name if name in params else None), index


class _TritonReader:
    def __init__(self, params: Sequence[str]):
        self.params = set(params)
        self.alias: dict[str, str] = {}
        self.values: dict[str, Value] = {}
        self.order: list[str] = []
        self.stores: list[Store] = []
        self.gemm_values: list[str] = []
        self.in_loop = False  # the statement read now is inside a loop
        self.carried: set[str] = set()  # loop-carried accumulators

    def _expr_ops(self, node: ast.AST) -> tuple[list[str], float | None, bool]:
        ops: list[str] = []
        const: float | None = None
        reduces = False
        for n in ast.walk(node):
            if isinstance(n, ast.BinOp):
                ops.append(_BIN.get(type(n.op), "binop"))
            elif isinstance(n, ast.UnaryOp):
                if isinstance(n.op, ast.USub):
                    ops.append("neg")
                elif isinstance(n.op, (ast.Not, ast.Invert)):
                    ops.append("not")
            elif isinstance(n, ast.Compare):
                ops.extend(_CMP.get(type(o), "cmp") for o in n.ops)
            elif isinstance(n, ast.Call):
                fn = _dotted(n.func)
                last = fn.rsplit(".", 1)[-1]
                if _TRITON_REDUCE.match(fn) or last in ("welford_reduce", "welford_combine"):
                    reduces = True
                    ops.append("reduce")
                elif last == "to" or last == "cast":
                    ops.append("cast")
                elif fn in ("float", "int"):
                    ops.append("const")  # tl.full([XBLOCK, R0_BLOCK], float("-inf"), tl.float32)
                elif last == "full":
                    ops.append("const")
                    if len(n.args) >= 2 and isinstance(n.args[1], ast.Constant):
                        v = n.args[1].value
                        const = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else const
                elif last in _TRITON_VIEW:
                    ops.append("view")
                elif last == "where":
                    # tl.where(xmask, x, 0): masking a tile's tail, not computation
                    first = n.args[0] if n.args else None
                    names = _names(first) if first is not None else []
                    masked = bool(names) and all(_MASK_NAME.search(x) for x in names)
                    ops.append("view" if masked else "where")
                elif last == "load":
                    ops.append("load")
                elif last in ("dot", "dot_scaled"):
                    ops.append("dot")  # a matrix product (tl.dot_scaled: of block-scaled operands)
                elif last in ("zeros", "arange", "program_id", "num_programs", "zeros_like"):
                    ops.append("index")
                else:
                    # erf, exp, sigmoid, maximum, minimum, rsqrt, sqrt, tanh, abs, ...; libdevice's rounding
                    # variants (sqrt_rn, div_rn) are the same op
                    ops.append(re.sub(r"_r[nzdu]$", "", last))
            elif isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool):
                if const is None and not ops:
                    const = float(n.value)
        return ops, const, reduces

    def assign(self, name: str, value: ast.AST, line: int, aug: ast.operator | None = None) -> None:
        if isinstance(value, ast.Name) and value.id in self.params and aug is None:
            self.alias[name] = value.id  # A = arg_A
            return
        param = None
        index = ""
        ops, const, reduces = self._expr_ops(value)
        if isinstance(value, ast.Call) and _dotted(value.func).endswith("load") and value.args:
            param, index = _ptr_of(value.args[0], self.params, self.alias)
        else:
            for n in ast.walk(value):
                if isinstance(n, ast.Call) and _dotted(n.func).endswith(".load") and n.args:
                    param, index = _ptr_of(n.args[0], self.params, self.alias)
                    break
        inputs = [x for x in _names(value) if x in self.values and not _MASK_NAME.search(x)]
        index_inputs: list[str] = []
        if param is not None:
            index_inputs = [x for x in dict.fromkeys(re.findall(r"[A-Za-z_]\w*", index)) if x in self.values]
            inputs = []  # a load's index values are addresses, not data
        if aug is not None:
            ops = [_BIN.get(type(aug), "binop")] + ops
            if name in self.values:
                inputs = [name] + inputs
        prev = self.values.get(name)
        # a name a loop assigns from its own value (``_tmp5 = tl.where(mask, maximum(_tmp5, tmp4), _tmp5)``,
        # welford's ``tmp3_mean = tl.where(mask, tmp3_mean_next, tmp3_mean)``) carries an accumulator from one
        # iteration to the next: a reduction (parse_triton's _accumulating); the template's ``acc += tl.dot(...)``
        # is the GEMM itself
        if (self.in_loop and prev is not None and (aug is not None or name in _names(value)) and "dot" not in ops
                and param is None):
            self.carried.add(name)
        if prev is not None:  # loops and the C++ tail branches define a name again: one value, both readings
            inputs = list(prev.inputs) + [i for i in inputs if i not in prev.inputs and i != name]
            ops = list(dict.fromkeys(list(prev.ops) + ops))
            param = param or prev.param
            reduces = reduces or prev.reduces
        if "dot" in ops and name not in self.gemm_values:
            self.gemm_values.append(name)
        v = Value(name, tuple(ops) or ("copy",), tuple(dict.fromkeys(i for i in inputs if i != name or aug)),
                  param, index, const, line, reduces, tuple(index_inputs))
        if name not in self.values:
            self.order.append(name)
        self.values[name] = v

    def statement(self, st: ast.stmt, offset: int) -> None:
        line = st.lineno + offset
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            t = st.targets[0]
            if isinstance(t, ast.Name):
                self.assign(t.id, st.value, line)
            elif isinstance(t, ast.Tuple):  # tmp3, tmp4 = triton_helpers.welford(...)
                for e in t.elts:
                    if isinstance(e, ast.Name):
                        self.assign(e.id, st.value, line)
        elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name):
            self.assign(st.target.id, st.value, line, aug=st.op)
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            fn = _dotted(st.value.func)
            if fn.endswith(("tl.store", "atomic_add", "tl.atomic_add")) and len(st.value.args) >= 2:
                param, _ = _ptr_of(st.value.args[0], self.params, self.alias)
                vals = [x for x in _names(st.value.args[1]) if x in self.values]
                if param is not None:
                    for v in vals[:1] or ():
                        self.stores.append(Store(param, v, line))


def _flatten(body: list[ast.stmt], loop: int = 0) -> list[tuple[ast.stmt, int]]:
    """The statements in order, each with the number of loops around it."""
    out: list[tuple[ast.stmt, int]] = []
    for st in body:
        if isinstance(st, (ast.For, ast.While)):
            out.extend(_flatten(st.body, loop + 1))
        elif isinstance(st, ast.With):
            out.extend(_flatten(st.body, loop))
        elif isinstance(st, ast.If):
            out.extend(_flatten(st.body, loop))
            out.extend(_flatten(st.orelse, loop))
        else:
            out.append((st, loop))
    return out


def parse_triton(source: str, name: str, params: Sequence[str]) -> Body | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if fn is None:
        fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef)
                   and any("jit" in _dotted(d if not isinstance(d, ast.Call) else d.func) for d in n.decorator_list)),
                  None)
    if fn is None:
        return None
    ps = list(params) or [a.arg for a in fn.args.args]
    r = _TritonReader(ps)
    for st, loops in _flatten(fn.body):
        r.in_loop = loops > 0
        r.statement(st, 0)
    return Body("triton", _accumulating([r.values[n] for n in r.order], r.carried), tuple(r.stores),
                tuple(r.gemm_values), tuple(ps))


def _accumulating(values: Sequence[Value], acc: set[str]) -> tuple[Value, ...]:
    """A looped reduction (``triton_red_*``) keeps a loop-carried accumulator (``_tmp5 = tl.where(r0_mask & xmask,
    triton_helpers.maximum(_tmp5, tmp4), _tmp5)``, ``_tmp16 + tmp15``) that ``max2`` / ``tl.sum`` closes after the
    loop: the accumulator, and a combine that reads it (``tmp6 = triton_helpers.maximum(_tmp5, tmp4)``), mix the
    elements of a row: a reduction, never an epilogue op (the ``maximum`` is no ReLU)."""
    return tuple(replace(v, reduces=True) if v.name in acc or set(v.inputs) & acc else v for v in values)


# ------------------------------------------------------------------------------------------------------------
# C++

_CPP_ASSIGN = re.compile(r"^\s*(?:auto|float|double|int64_t|int32_t|bool|at::vec::\S+|c10::\w+|[\w:<>]+)?\s*"
                         r"(tmp\w*|local_acc\w*)\s*=\s*(.+?);\s*$")
_CPP_STORE_METHOD = re.compile(r"^\s*(\w+)\.store\(\s*(\w+)\s*\+")
_CPP_STORE_INDEX = re.compile(r"^\s*(\w+)\[(.+)\]\s*=\s*(.+?);\s*$")
# ``loadu(in_ptr0 + ...)``, and a masked load's ``VecMask<float,2>::from(tmp12).template loadu<at::BFloat16,1>(in_ptr0 +
# ...)`` (a pooling window's padded neighbour)
_CPP_LOAD = re.compile(r"(?:loadu|load)(?:<[^<>()]*>)?\(\s*(\w+)\s*\+\s*([^,]*)")
_CPP_INDEX_LOAD = re.compile(r"^\s*(?:c10::convert<[\w:]+>\()?\s*(\w+)\[(.+)\]\)?\s*$")
_CPP_TMP = re.compile(r"\b(tmp\w*|local_acc\w*|local_buffer_data\w*)\b")
_CPP_METHOD = re.compile(r"\.(\w+)\(\)")
_CPP_FUNC = re.compile(r"(?:std::|at::vec::|c10::|::)?\b([a-z_][\w]*)\s*\(")
_CPP_NUM = re.compile(r"static_cast<\w+>\(\s*(-?[\d.]+(?:e[-+]?\d+)?)\s*\)|^\s*(-?[\d.]+(?:e[-+]?\d+)?)\s*$")
# A local tile (``alignas(...) float tmp1[16*16];``) that a transpose fills and vector loads read back: it holds
# data, not a value of its own.
_CPP_LOCAL_ARRAY = re.compile(r"\b[\w:]+\s+(tmp\w*)\s*\[[^\]]*\]\s*;")
# A kernel's scratch buffer (``float* local_buffer_data_0 = buf_local_buffer_data_0.get();``): the softmax stores
# x (then exp(x - max)) there and reads it back in the next loop; each store is a new value of the buffer.
_CPP_LOCAL_BUFFER = re.compile(r"^\s*[\w:]+\s*\*\s*(local_buffer_data_\w*)\s*=")
_CPP_TRANSPOSE = re.compile(r"^\s*(?:at::vec::)?transpose_mxn<.*?>\(\s*(\w+)(?:\s*\+[^,]*)?,[^,]*,\s*(\w+)")
_CPP_OP_NAMES = vocab.CPP_BODY_OPS
# ``auto out_ptr0 = in_out_ptr0;``: a kernel that writes statistics into a buffer it also reads names the buffer
# twice; loads and stores through the second name are the parameter's
_CPP_ALIAS = re.compile(r"^\s*auto\s+(\w+)\s*=\s*(\w+)\s*;\s*$")
# A masked computation (``auto tmp13 = [&] { ...; return tmp16; };``, called as ``tmp12 ? tmp13() : <padding>``):
# the lambda's value is what it returns; the select only masks the padded elements of a window (-inf for a max pool,
# 0 for a sum), like Triton's ``tl.load(..., mask, other=float("-inf"))``: a view of that value, not a where
_CPP_LAMBDA = re.compile(r"^\s*auto\s+(tmp\w*)\s*=\s*\[&\]\s*(\{)?\s*$")
_CPP_RETURN = re.compile(r"^\s*return\s+(tmp\w*)\s*;\s*$")
_CPP_BOOL = re.compile(r"^\s*static_cast<bool>\(\s*(true|false)\s*\)\s*$")
_CPP_MASKED = re.compile(r"^\s*\w+\s*\?\s*(.+?)\s+:\s+(.+)$")


def _cpp_ops(expr: str) -> list[str]:
    ops: list[str] = []
    for m in _CPP_METHOD.finditer(expr):
        ops.append(_CPP_OP_NAMES.get(m.group(1), m.group(1)))
    for m in _CPP_FUNC.finditer(expr):
        f = m.group(1)
        if f in _CPP_OP_NAMES:
            ops.append(_CPP_OP_NAMES[f])
        elif f in ("convert",) or f.startswith("cvt"):
            ops.append("cast")
        elif f in ("where",):
            ops.append("where")
    stripped = re.sub(r"static_cast<[^>]*>|decltype\([^)]*\)|<[^<>]*>", "", expr)
    stripped = re.sub(r"\([^()]*\bint64_t\b[^()]*\)", "", stripped)
    for sym, op in ((r"(?<![+\-*/<>=!&|])\+(?![+=])", "add"), (r"(?<![+\-*/<>=!&|e])-(?![-=>])", "sub"),
                    (r"(?<![*/])\*(?![*=])", "mul"), (r"/(?![/=])", "div"), (r">=", "ge"), (r"<=", "le"),
                    (r"(?<![<>=])>(?![>=])", "gt"), (r"(?<![<>=])<(?![<=])", "lt"), (r"==", "eq"), (r"!=", "ne")):
        if re.search(sym, stripped):
            ops.append(op)
    return ops


def parse_cpp(source: str, params: Sequence[str], *, after_micro_gemm: bool = False) -> Body:
    """C++ kernel body; ``after_micro_gemm``: a GEMM template, whose epilogue follows the last micro-GEMM call
    and reads the GEMM's result back from Y (or a local accumulation buffer)."""
    lines = source.splitlines()
    start = 0
    gemm_params: set[str] = set()
    if after_micro_gemm:
        for i, line in enumerate(lines):
            if re.search(r"\bkernel_micro_gemm\w*<|\bmicro_gemm\w*<|->operator\(\)|brgemm", line):
                start = i
        gemm_params = {"Y", "local_acc_buf", "acc_buf", "Y_2d"} | {p for p in params if p.startswith("Y")}
    ps = set(params) | gemm_params
    alias = {m.group(1): m.group(2) for line in lines if (m := _CPP_ALIAS.match(line)) and m.group(2) in ps
             and m.group(1) not in ps and not _CPP_TMP.fullmatch(m.group(1))}
    aliased = re.compile(r"\b(" + "|".join(map(re.escape, alias)) + r")\b") if alias else None
    r = _CppReader(ps, gemm_params)
    for i in range(start, len(lines)):
        text = lines[i]
        if aliased is not None and not _CPP_ALIAS.match(text):
            text = aliased.sub(lambda mm: alias[mm.group(1)], text)
        r.line(text, i + 1)
    return Body("cpp", tuple(r.values[n] for n in r.order), tuple(r.stores), tuple(dict.fromkeys(r.gemm_values)),
                tuple(params))


class _CppReader:
    """A C++ kernel body read line by line into SSA values. Inductor's C++ reuses a name in each loop nest (a new
    version per value), fills local tiles and scratch buffers (data in = data out), and wraps a masked
    computation in a lambda."""

    def __init__(self, ps: set[str], gemm_params: set[str]):
        self.ps = ps  # the parameters, with the GEMM template's result buffers
        self.gemm_params = gemm_params
        self.values: dict[str, Value] = {}
        self.order: list[str] = []
        self.stores: list[Store] = []
        self.gemm_values: list[str] = []
        self.texts: dict[str, str] = {}  # name -> what its current version is (a load's address, an expression)
        self.version: dict[str, int] = {}
        self.tiles: set[str] = set()  # local arrays (tiles) in scope
        self.scratch: set[str] = set()  # local buffers, one value per store
        self.stored: dict[str, str] = {}  # parameter -> the last value this kernel stored into it
        self.lambdas: list[str] = []  # the masked-computation lambdas whose body is being read (innermost last)
        self.lambda_names: set[str] = set()

    def latest(self, x: str) -> str:
        """The current SSA version of a name."""
        return f"{x}#{self.version[x]}" if self.version.get(x) else x

    def fill(self, tile: str, value: str | None, ln: int) -> None:
        """A tile's value: what was stored or transposed into it (one value per tile, data in = data out)."""
        cur = self.latest(tile)
        old = self.values.get(cur)
        ins = tuple(dict.fromkeys((old.inputs if old else ()) + ((value,) if value else ())))
        self.values[cur] = Value(cur, ("copy",), ins, None, "", None, old.line if old else ln)

    def line(self, text: str, ln: int) -> None:
        """Read one line (``ln``: its 1-based number): the first reading that recognises it, else an assignment."""
        for read in (self._lambda, self._local_buffer, self._local_array, self._transpose, self._store_method,
                     self._store_index):
            if read(text, ln):
                return
        m = _CPP_ASSIGN.match(text)
        if m:
            self._assign(m.group(1), m.group(2), ln)

    def _lambda(self, text: str, ln: int) -> bool:
        """A masked computation's lambda opens (``auto tmp13 = [&] {``) or returns its value: a view of it."""
        m = _CPP_LAMBDA.match(text)
        if m:
            self.lambdas.append(m.group(1))
            return True
        m = _CPP_RETURN.match(text)
        if not (m and self.lambdas):
            return False
        name = self.lambdas.pop()
        ret = self.latest(m.group(1))
        if ret in self.values:
            if name in self.texts and self.texts[name] != f"lambda {ret}":
                self.version[name] = self.version.get(name, 0) + 1
            self.texts[name] = f"lambda {ret}"
            self.lambda_names.add(name)
            cur = self.latest(name)
            if cur not in self.values:
                self.order.append(cur)
            self.values[cur] = Value(cur, ("view",), (ret,), None, "", None, ln)
        return True

    def _local_buffer(self, text: str, ln: int) -> bool:
        """A scratch buffer's declaration."""
        m = _CPP_LOCAL_BUFFER.match(text)
        if m:
            self.tiles.add(m.group(1))
            self.scratch.add(m.group(1))
        return m is not None

    def _local_array(self, text: str, ln: int) -> bool:
        """A local tile's declaration: a new value of that name."""
        m = _CPP_LOCAL_ARRAY.search(text)
        if not (m and "=" not in text):
            return False
        name = m.group(1)
        self.version[name] = self.version.get(name, 0) + (1 if name in self.texts or self.latest(name) in self.values
                                                          else 0)
        self.texts[name] = f"tile {ln}"
        self.tiles.add(name)
        self.order.append(self.latest(name))
        self.fill(name, None, ln)
        return True

    def _transpose(self, text: str, ln: int) -> bool:
        """A transpose from a tile or a parameter into a tile or a parameter: it moves the data."""
        m = _CPP_TRANSPOSE.match(text)
        if not m:
            return False
        src, dst = m.group(1), m.group(2)
        if src in self.tiles:
            val: str | None = self.latest(src)
        elif src in self.ps:
            val = f"__transpose{ln}"
            # reading back what this kernel stored (a copy then its transpose) is that stored value
            prior = self.stored.get(src)
            self.values[val] = Value(val, ("copy",) if prior else ("load",), (prior,) if prior else (),
                                     None if prior else src, "", None, ln)
            self.order.append(val)
        else:
            val = None
        if dst in self.tiles:
            self.fill(dst, val, ln)
        elif dst in self.ps and val is not None:
            self.stores.append(Store(dst, val, ln))
            self.stored[dst] = val
        return True

    def _store_method(self, text: str, ln: int) -> bool:
        """``tmp3.store(out_ptr0 + ...)``: into a scratch buffer (a new value of it), a tile, or a parameter."""
        m = _CPP_STORE_METHOD.match(text)
        if not m:
            return False
        value, into = self.latest(m.group(1)), m.group(2)
        if into in self.scratch and value in self.values:
            self.version[into] = self.version.get(into, 0) + 1
            self.order.append(self.latest(into))
            self.fill(into, self.latest(m.group(1)), ln)
            return True
        if into in self.tiles and value in self.values:
            self.fill(into, value, ln)
            return True
        if into in self.ps:
            if value in self.values:
                self.stores.append(Store(into, value, ln))
                self.stored[into] = value
            return True
        return False

    def _store_index(self, text: str, ln: int) -> bool:
        """``out_ptr0[x0] = tmp3;``: into a scratch buffer (a new value of it) or a parameter."""
        m = _CPP_STORE_INDEX.match(text)
        if not (m and (m.group(1) in self.scratch or m.group(1) in self.ps)):
            return False
        vals = [self.latest(x) for x in _CPP_TMP.findall(m.group(3)) if self.latest(x) in self.values]
        if m.group(1) in self.scratch:
            if vals:
                self.version[m.group(1)] = self.version.get(m.group(1), 0) + 1
                self.order.append(self.latest(m.group(1)))
                self.fill(m.group(1), vals[-1], ln)
        elif vals:
            self.stores.append(Store(m.group(1), vals[-1], ln))
        return True

    def _load_in(self, expr: str) -> tuple[str, str | None, str]:
        """What an assignment's right-hand side loads: (the expression, with a tile's or scratch buffer's load
        replaced by that buffer's value; the parameter a load reads, or None; its index)."""
        lm = _CPP_LOAD.search(expr)
        if lm and lm.group(1) in self.tiles:
            # a vector load from a tile: the tile's data, not an add of the address
            return self.latest(lm.group(1)), None, ""
        if lm and lm.group(1) in self.ps:
            return expr, lm.group(1), lm.group(2).strip()
        im = _CPP_INDEX_LOAD.match(expr)
        if im and im.group(1) in self.scratch:
            return self.latest(im.group(1)), None, ""
        if im and im.group(1) in self.ps:
            return expr, im.group(1), im.group(2).strip()
        return expr, None, ""

    def _assign(self, name: str, expr: str, ln: int) -> None:
        """``auto tmp3 = <expr>;``: a load, a masked select, or an expression, as a value (or a new version)."""
        expr, param, index = self._load_in(expr)
        latest = self.latest
        values = self.values
        accumulate = name.startswith("tmp_acc") or bool(re.search(rf"\b{re.escape(name)}\b", expr))
        # what the value is: a load by its address, anything else by its text with the names it reads resolved
        canon = f"load {param} {index}" if param is not None else _CPP_TMP.sub(lambda mm: latest(mm.group(1)), expr)
        if name in self.texts and self.texts[name] != canon and not accumulate:
            # a later loop reuses the name for another value (Inductor's C++ restarts tmp0 in each loop nest):
            # a new SSA version; the same value again (a vector loop and its scalar tail) stays one value
            self.version[name] = self.version.get(name, 0) + 1
        cur = latest(name)
        self.texts[name] = canon
        self.tiles.discard(name)
        reduces = name.startswith("tmp_acc") or "welford" in expr or "reduce" in expr
        index_inputs: list[str] = []
        if param is not None:
            ops, inputs = ["load"], []
            index_inputs = [x for x in dict.fromkeys(latest(t) for t in _CPP_TMP.findall(index)) if x in values]
            if param in self.gemm_params:
                self.gemm_values.append(cur)
        elif (mm := _CPP_MASKED.match(expr)) and any(f"{x}()" in expr for x in self.lambda_names):
            # ``tmp12 ? tmp13() : at::vec::VectorizedN<float,2>(-std::numeric_limits<float>::infinity())``
            ops = ["view"]
            refs = [latest(x) for x in _CPP_TMP.findall(f"{mm.group(1)} {mm.group(2)}") if x != name]
            inputs = [x for x in dict.fromkeys(refs) if x in values]
        else:
            ops = _cpp_ops(expr)
            refs = [latest(x) for x in _CPP_TMP.findall(expr) if x != name]
            inputs = [x for x in refs if x in values]
            if cur in values and name in _CPP_TMP.findall(expr):  # tmp_acc0 = tmp_acc0 + tmp1
                inputs = [cur] + inputs
        const = None
        cm = _CPP_NUM.search(expr)
        if param is None and cm and not inputs:
            try:
                const = float(cm.group(1) or cm.group(2))
                ops = ["const"]
            except (TypeError, ValueError):
                pass
        if param is None and not inputs and (bm := _CPP_BOOL.match(expr)):
            const, ops = (1.0 if bm.group(1) == "true" else 0.0), ["const"]
        if param is None and not ops and inputs:
            ops = ["view"]  # Vectorized<float>(tmp3): a broadcast of a value
        if any(values[x].reduces for x in inputs if x in values and x.split("#")[0].startswith("tmp_acc")):
            reduces = True
        prev = values.get(cur)
        if prev is not None:
            inputs = list(prev.inputs) + [x for x in inputs if x not in prev.inputs]
            ops = list(dict.fromkeys(list(prev.ops) + ops))
            param = param or prev.param
            reduces = reduces or prev.reduces
            const = prev.const if const is None else const
            # an accumulator's line is where it first sums something (tmp_acc0_vec = tmp_acc0_vec + tmp2), not its
            # declaration (float tmp_acc0 = 0;)
            ln = prev.line if prev.inputs or not inputs else ln
        else:
            self.order.append(cur)
        values[cur] = Value(cur, tuple(ops) or ("copy",), tuple(dict.fromkeys(inputs)), param, index, const, ln,
                            reduces, tuple(index_inputs) or (prev.index_inputs if prev is not None else ()))


# ------------------------------------------------------------------------------------------------------------
# The walk


def walk(body: Body, starts: Sequence[str], *, blocked: Sequence[str] = (), statistics: Sequence[str] = (),
         broadcast: dict[str, bool] | None = None, blocked_values: Sequence[str] = ()) -> Flow:
    """Values derived from ``starts`` up to the epilogue's boundary; the user-level ops among them; the outputs
    they reach.

    The boundary is a value derived from the start values through a reduction: a reduction of them (``tl.sum``,
    a loop-carried accumulator, ``tmp_acc0``, welford, a pooling window), or anything that mixes in such a value
    (``x - mean``) or a ``statistics`` load (mean/rstd an earlier kernel reduced from the GEMM's output). Ops before
    it are the epilogue's; an op whose value only feeds a reduction (RMSNorm's ``x * x``) is that reduction's
    when the GEMM's data is normalised with the statistic (in this kernel: ``Flow.mixed``; in a later one: the
    caller drops ``Flow.reduction_inputs``), and the epilogue's when the reduction consumes the chain (avg pool's
    mean after BN + add + ReLU, a max, a logsumexp).

    ``blocked``: parameters whose loads carry a value the chain must not pass (the output of a GEMM that
    depends on this GEMM: an op that also reads it belongs to that later GEMM's epilogue, not this one's);
    ``blocked_values``: values of the body likewise (a later template's own GEMM result, which it computed from
    this GEMM's).
    ``statistics``: parameters that hold values derived from the GEMM's output through a reduction.
    ``broadcast``: per parameter, whether the call site's buffer is smaller than the output (a bias row)."""
    start = set(starts)
    _order = {v.name: i for i, v in enumerate(body.values)}
    stopped = (set(body.loads_of(blocked)) | set(blocked_values)) - start
    windows = pool_windows(body, start)
    cls = _classes(body, start, stopped, set(body.loads_of(statistics)) - start, windows)
    derived = sorted((n for n, k in cls.items() if k == "derived"), key=lambda n: _order.get(n, 0))
    dset = set(derived)
    past = {n for n, k in cls.items() if k == "past"}
    ends = [v.name for v in body.values if v.name in past and set(v.inputs) & dset]
    mixed = tuple(n for n in ends if not body.at(n).reduces and n not in windows)
    reduced = bool(ends)
    outputs = tuple(dict.fromkeys(s.param for s in body.stores if s.value in dset))
    red_out = tuple(dict.fromkeys(s.param for s in body.stores if s.value in past))
    users: dict[str, list[str]] = {}
    for v in body.values:
        for i in v.inputs:
            users.setdefault(i, []).append(v.name)
    only_reduction = _reduction_feeders(body, derived, users)
    # (a load is no op: the start's, or the chain's own value read back from where the kernel stored it)
    kept = [d for d in derived if d not in start and body.at(d).param is None
            and (d not in only_reduction or not mixed)]
    ops = label(body, kept, start, broadcast or {}, _window_padding(body, derived, windows, users))
    if windows:
        ops = _one_op_per_window(ops)
    # (a window of values that mix in a later GEMM's output is that GEMM's pool, not this chain's)
    pooled = tuple(w for w in (v.name for v in body.values) if w in windows and w in past and set(body.at(w).inputs) &
                   (dset | windows))
    feeding = tuple(o for o in ops if set(o.values) <= only_reduction)
    return Flow(tuple(ops), outputs, reduced, red_out, tuple(derived), pooled, mixed, feeding,
                ends[0] if ends else "")


def _classes(body: Body, start: set[str], blocked_values: set[str], stat_values: set[str],
             windows: set[str]) -> dict[str, str]:
    """Each value's class: derived (the epilogue's data), past (beyond the boundary), other (mixes in a blocked
    value); values that read none of these have none."""
    # parameters a value of the chain ("derived"), one past the boundary ("past") or a blocked one ("other") was
    # stored into, and where: reading one back later in the kernel carries that value (a looped RMSNorm stores
    # the residual sum into its in_out_ptr0 in its first loop and normalises what it reads back in the second)
    reloaded: dict[str, tuple[int, str]] = {}
    rank = {"derived": 1, "other": 2, "past": 3}

    def kind(v: Value, cls: dict[str, str]) -> str | None:
        """derived (the epilogue's data), past (beyond the boundary), other (mixes in a blocked value)."""
        if v.param is not None and v.param in reloaded and v.line > reloaded[v.param][0]:
            return reloaded[v.param][1]
        if v.name in stat_values:
            return "past"
        if v.name in blocked_values:
            return "other"
        if v.name in start:
            return "derived"
        seen = {cls[i] for i in v.inputs if i in cls}
        if not seen:
            return None
        if v.reduces or v.name in windows or "dot" in v.ops:
            # a matrix product reached from its operands (a prologue's values) mixes K of them: past the boundary
            return "past" if seen & {"derived", "past"} else "other"
        return "past" if "past" in seen else "other" if "other" in seen else "derived"

    for _ in range(3):
        cls: dict[str, str] = {}
        # to a fixpoint: an accumulator (tmp_acc0 = tmp_acc0 + tmp3) is defined before the values it sums, so a
        # value read as derived can turn out to be past the boundary; a class only ever rises
        for _pass in range(len(body.values) + 1):
            changed = False
            for v in body.values:
                k = kind(v, cls)
                if k is not None and rank[k] > rank.get(cls.get(v.name, ""), 0):
                    cls[v.name] = k
                    changed = True
            if not changed:
                break
        more: dict[str, tuple[int, str]] = {}
        for st in body.stores:
            k = cls.get(st.value)
            if k is None or st.value in blocked_values:
                continue
            old = more.get(st.param) or reloaded.get(st.param)
            new = (min(st.line, old[0]), max(k, old[1], key=rank.__getitem__)) if old else (st.line, k)
            if new != reloaded.get(st.param):
                more[st.param] = new
        if not more:
            break
        reloaded.update(more)
    return cls


def _reduction_feeders(body: Body, derived: Sequence[str], users: dict[str, list[str]]) -> set[str]:
    """Derived values that only feed a reduction (x * x before a mean): part of that reduction, not epilogue ops,
    when the GEMM's data is normalised with the statistic; one also used otherwise (the residual add before an
    RMSNorm) is an epilogue op."""
    stored = {s.value for s in body.stores}
    only_reduction: set[str] = set()
    for name in reversed(derived):
        us = users.get(name, [])
        if name in stored or not us:
            continue
        # (a ReLU before a max-pool window is the conv's epilogue op, as it is in eager: not the window's)
        if all(((vu := body.value(u)) is not None and vu.reduces) or u in only_reduction for u in us):
            only_reduction.add(name)
    return only_reduction


def _window_padding(body: Body, derived: Sequence[str], windows: set[str], users: dict[str, list[str]]) -> set[str]:
    """A pooling window element's padding (``tl.where(tmp2, relu, -inf)`` before the max): it masks, it is no op."""
    dset = set(derived)

    def feeds_window(name: str) -> bool:
        todo = users.get(name, [])
        for _ in range(4):
            if set(todo) & windows:
                return True
            todo = [u for t in todo if t in dset and _primary(body.at(t)) in _PASS for u in users.get(t, [])]
        return False

    return {n for n in derived if _primary(body.at(n)) == "where" and feeds_window(n)}


def _one_op_per_window(ops: Sequence[Op]) -> list[Op]:
    """Every element of a pooling window gets the same epilogue (a ReLU on each of 4 neighbours): one op."""
    merged: dict[tuple[str, tuple[str, ...]], Op] = {}
    for o in ops:
        key = (o.label, o.operands)
        prev = merged.get(key)
        merged[key] = o if prev is None else replace(prev, values=prev.values + o.values)
    return list(merged.values())


_WINDOW_OPS = vocab.BODY_WINDOW_OPS
_PASS = vocab.BODY_PASS_OPS


def pool_windows(body: Body, starts: Iterable[str]) -> set[str]:
    """Values that combine several elements of one start buffer with max/min/add: a pooling window
    (max_pool2d's max of 9 neighbours of a conv output, avg_pool2d's sum of 4 before its divide). Pooling is not an
    epilogue op: it mixes elements, so the chain ends there, as at a reduction. Each operand of the combine is one
    element of the window: it reads the start buffer at its own offsets, and every element is computed the same
    way; what Inductor applies to each element before the combine (the ReLU of ``relu -> max_pool2d``, BN + add +
    ReLU before ResNet's last mean) is the epilogue's, once. Masking a padded element (``tmp12 ? tmp13() : -inf``,
    ``tl.load(..., mask, other=float("-inf"))``) computes nothing. Elements computed differently (a chunked
    SwiGLU's ``silu(gate) * up`` over two halves of one buffer, RoPE's ``x2 * cos + x1 * sin``) are no window.
    Rows gathered by an index (a mixture of experts' ``sum(weight_k * expert_out[perm[2t + k]])`` over a token's
    top-k experts, Inductor's unrolled ``sum(dim=1)`` of two rows) are a window too: each element reads another
    parameter (its routing weight) at offsets that follow its own row's index."""
    start = set(starts)
    data: dict[str, bool] = {}  # the value carries loaded data (not an index, a mask or a constant)
    pos: dict[str, frozenset[tuple[str, str]]] = {}  # the start elements (parameter, offset) it is computed from
    reads: dict[str, frozenset[tuple[str, str]]] = {}  # the other parameters' elements it reads
    loads: dict[str, frozenset[str]] = {}  # the load values (start and other) it is computed from
    empty: frozenset[tuple[str, str]] = frozenset()
    none: frozenset[str] = frozenset()
    for _ in range(2):  # an accumulator is defined before the values it sums
        for v in body.values:
            ins = [i for i in v.inputs if i != v.name]
            if v.name in start:
                data[v.name], pos[v.name], reads[v.name] = True, frozenset({(v.param or v.name, v.index)}), empty
                loads[v.name] = frozenset({v.name})
            elif v.param is not None:
                data[v.name], pos[v.name], reads[v.name] = True, empty, frozenset({(v.param, v.index)})
                loads[v.name] = frozenset({v.name})
            else:
                data[v.name] = _primary(v) not in ("const", "index") and any(data.get(i, False) for i in ins)
                pos[v.name] = empty.union(*(pos.get(i, empty) for i in ins))
                reads[v.name] = empty.union(*(reads.get(i, empty) for i in ins))
                loads[v.name] = none.union(*(loads.get(i, none) for i in ins))


    def through(name: str) -> str:
        """Past the values that carry one element unchanged: casts, views, a padded element's mask."""
        for _ in range(16):
            v = body.value(name)
            if v is None or name in start or v.param is not None:
                break
            ins = [i for i in v.inputs if i != name and data.get(i, False)]
            if len(ins) != 1 or _primary(v) not in _PASS | {"where"}:
                break
            name = ins[0]
        return name

    sigs: dict[str, tuple[object, ...]] = {}

    def sig(name: str, depth: int = 0) -> tuple[object, ...]:
        """How an element is computed: its ops and the parameters it reads, without the offsets."""
        name = through(name)
        if name in sigs:
            return sigs[name]
        v = body.value(name)
        c = _const_of(body, name)
        if v is None or depth > 48:
            out: tuple[object, ...] = ("?",)
        elif name in start or v.param is not None:
            out = ("load", v.param or "start")
        elif c is not None:
            out = ("const", round(c, 6))
        elif not data.get(name, False):
            out = ("index",)
        else:
            kids = [sig(i, depth + 1) for i in v.inputs if i != name]
            p = _primary(v)
            out = (p, tuple(sorted(kids, key=repr)) if p in _COMMUTATIVE else tuple(kids))
        sigs[name] = out
        return out

    found: set[str] = set()

    def elements(name: str, op: str) -> list[str]:
        """The operands of a combine, through the windows it extends (``max(max(a, b), c)``)."""
        out: list[str] = []
        for i in body.at(name).inputs:
            j = through(i)
            if i == name or not data.get(j, False):
                continue
            out += elements(j, op) if j in found and _primary(body.at(j)) == op else [j]
        return out

    for v in body.values:
        p = _primary(v)
        if p not in _WINDOW_OPS or v.name in start or v.reduces:
            continue
        els = elements(v.name, p)
        where = [pos.get(e, empty) for e in els]
        if len(els) < 2 or not all(where) or sum(map(len, where)) != len(empty.union(*where)):
            continue  # every element reads the start buffer, each at its own offsets
        if len({sig(e) for e in els}) != 1:
            continue
        # another parameter an element reads: per channel (the same offsets in every element: BN's mean, a
        # bias) or at the element's own offsets (the residual added to each element)
        other: dict[str, list[set[str]]] = {}
        gathered = _gathered_reads(body, els, start, loads)
        for e, w in zip(els, where):
            own = {ix for _, ix in w}
            per: dict[str, set[str]] = {}
            for q, ix in reads.get(e, empty):
                per.setdefault(q, set()).add(ix)
            for q, ixs in per.items():
                at_own = ixs <= own or {(q, ix) for ix in ixs} <= gathered[e]
                other.setdefault(q, []).append(ixs if not at_own else set())
        if all(len(x) == len(els) and all(ix == x[0] for ix in x) for x in other.values()):
            found.add(v.name)
    return found


def _index_values(body: Body, name: str) -> set[str]:
    """The values a load's index is computed from, through their own inputs and indices."""
    out: set[str] = set()
    todo = list(body.at(name).index_inputs)
    while todo:
        x = todo.pop()
        if x in out or (w := body.value(x)) is None:
            continue
        out.add(x)
        todo += [*w.inputs, *w.index_inputs]
    return out


def _gathered_reads(body: Body, els: Sequence[str], start: set[str], loads: dict[str, frozenset[str]]
                    ) -> dict[str, set[tuple[str, str]]]:
    """Per window element (``loads``: the load values each is computed from), the other parameters' elements it
    reads at an index computed from a value only its own start loads' indices use (the row ``perm[2t + k]`` that
    element gathered)."""
    own = {e: set().union(*(_index_values(body, x) for x in loads.get(e, ()) if x in start)) for e in els}
    out: dict[str, set[tuple[str, str]]] = {}
    for e in els:
        mine = own[e] - set().union(*(own[f] for f in els if f != e))
        out[e] = {(w.param, w.index) for x in loads.get(e, ()) if x not in start
                  and (w := body.at(x)).param is not None and mine and _index_values(body, x) & mine}
    return out


_COMMUTATIVE = vocab.BODY_COMMUTATIVE_OPS


_NOISE = vocab.BODY_NOISE_OPS
_KEY_OPS = vocab.BODY_KEY_OPS


def _primary(v: Value) -> str:
    ops = [o for o in v.ops if o not in _NOISE]
    return ops[0] if ops else (v.ops[0] if v.ops else "copy")


def _const_of(body: Body, name: str, depth: int = 4) -> float | None:
    v = body.value(name)
    while v is not None and depth > 0:
        if v.const is not None and (set(v.ops) <= _PASS | {"const"}):
            return v.const
        if len(v.inputs) == 1 and set(v.ops) <= _PASS:
            v = body.value(v.inputs[0])
            depth -= 1
            continue
        if len(v.inputs) == 3 and v.ops == ("view",):
            # ``c ? a : b`` on a constant condition (Inductor's C++ writes ``true ? 1.0 : -1.0``)
            c = _const_of(body, v.inputs[0], depth - 1)
            if c is None:
                return None
            v = body.value(v.inputs[1] if c else v.inputs[2])
            depth -= 1
            continue
        return None
    return None


def _is_const(body: Body, name: str) -> bool:
    return _const_of(body, name) is not None


def _params_under(body: Body, name: str, depth: int = 3) -> set[str]:
    """Parameters a value is loaded from (through views and casts)."""
    v = body.value(name)
    if v is None:
        return set()
    if v.param is not None:
        return {v.param}
    if depth <= 0 or not set(v.ops) <= _PASS:
        return set()
    out: set[str] = set()
    for i in v.inputs:
        out |= _params_under(body, i, depth - 1)
    return out


def label(body: Body, derived: Sequence[str], start: set[str], broadcast: dict[str, bool],
          padded: Iterable[str] = ()) -> list[Op]:
    """Group derived values into user-level ops (recognising decomposed activations), in body order; ``padded``:
    selects that only mask a pooling window's padded elements (no op)."""
    dv = _Derived(body, derived, start, set(derived) | set(start))
    taken: set[str] = set()  # values an earlier recogniser grouped
    groups = _gelu_groups(dv, taken)
    groups += _sigmoid_groups(dv, taken)
    groups += _batch_norm_groups(dv, taken)
    groups += _clamp_groups(dv, taken, set(padded))
    groups += _pointwise_groups(dv, taken, broadcast)
    return _ops_of(dv, groups)


_Groups = list[tuple[str, list[str]]]  # (op label, the values it stands for)


@dataclass(frozen=True, slots=True)
class _Derived:
    """The values a walk derived from its start values, and what the op recognisers ask of them."""

    body: Body
    derived: Sequence[str]  # in body order
    start: set[str]
    dset: set[str]  # derived and start

    def users(self, name: str) -> list[str]:
        """The derived values that read ``name``."""
        return [d for d in self.derived if name in self.body.inputs_of(d)]

    def anc(self, name: str) -> set[str]:
        """The chain's values ``name`` is computed from."""
        out: set[str] = set()
        todo = [name]
        while todo:
            n = todo.pop()
            v = self.body.value(n)
            if v is None:
                continue
            for i in v.inputs:
                if i in self.dset and i not in out:
                    out.add(i)
                    todo.append(i)
        return out

    def prim(self, name: str) -> str:
        """A value's primary op."""
        v = self.body.value(name)
        return _primary(v) if v else ""

    def consts_in(self, names: Iterable[str]) -> set[float]:
        """The constants these values read (rounded)."""
        out: set[float] = set()
        for n in names:
            v = self.body.value(n)
            if v is None:
                continue
            for i in v.inputs:
                c = _const_of(self.body, i)
                if c is not None:
                    out.add(round(c, 6))
        return out


def _gelu_groups(dv: _Derived, taken: set[str]) -> _Groups:
    """GELU (erf or tanh form): the erf/tanh, its inputs on the chain, the +1 after it and the product with x/2."""
    body, derived, dset, start = dv.body, dv.derived, dv.dset, dv.start
    groups: _Groups = []
    for d in derived:
        p = dv.prim(d)
        if d in taken or p not in ("erf", "tanh"):
            continue
        # the activation's own arithmetic: ancestors whose other operands are constants (x * 0.7071, x**3 *
        # 0.044715 + x), never an add of a parameter (the bias before the GELU is an op of its own)
        before = {b for b in dv.anc(d) if all(i in dset or i in start or _is_const(body, i)
                                              for i in body.at(b).inputs)}
        cs = dv.consts_in(before | {d})
        is_gelu = (p == "erf" and (0.707107 in cs or 0.707106 in cs or not cs)) or \
                  (p == "tanh" and (0.044715 in cs or 0.797885 in cs))
        if not is_gelu:
            continue
        gelu = {d} | {b for b in before if b not in start}
        after = [u for u in dv.users(d) if dv.prim(u) == "add"]
        for a in after:
            gelu.add(a)
            for u in dv.users(a):
                if dv.prim(u) == "mul":
                    gelu.add(u)
                    for i in body.at(u).inputs:  # x * 0.5
                        if i in dset and dv.prim(i) == "mul" and i not in start:
                            gelu.add(i)
        groups.append(("gelu" if p == "erf" else "gelu-tanh", sorted(gelu, key=derived.index)))
        taken |= gelu
    return groups


def _sigmoid_groups(dv: _Derived, taken: set[str]) -> _Groups:
    """Sigmoid as 1 / (1 + exp(-x)) (C++), or tl.sigmoid / .sigmoid(); times x it is SiLU."""
    body, dset, start = dv.body, dv.dset, dv.start
    groups: _Groups = []
    for d in dv.derived:
        if d in taken:
            continue
        p = dv.prim(d)
        grp: list[str] = []
        sig_input: str | None = None
        ops = set(body.at(d).ops)
        if p == "sigmoid" or ({"neg", "exp", "add"} <= ops and ops & {"div", "reciprocal"}
                              and ops <= {"neg", "exp", "add", "div", "reciprocal", "const", "cast", "view"}):
            # tl.sigmoid, .sigmoid(), or one C++ expression: 1 / (1 + x.neg().exp()) (the GEMM template's epilogue)
            grp = [d]
            ins = [i for i in body.at(d).inputs if i in dset or i in start]
            sig_input = ins[0] if ins else None
        elif p == "exp":
            v = body.at(d)
            src = v.inputs[0] if v.inputs else None
            if src is not None and dv.prim(src) == "neg" and src in dset:
                x = next((i for i in body.at(src).inputs), None)
                adds = [u for u in dv.users(d) if dv.prim(u) == "add"]
                if adds:
                    divs = [u for u in dv.users(adds[0]) if dv.prim(u) in ("div", "reciprocal")]
                    if divs:
                        dvv = body.at(divs[0])
                        numer = dvv.inputs[0] if dvv.inputs else None
                        grp = [src, d, adds[0], divs[0]]
                        if numer is not None and numer != adds[0] and not _is_const(body, numer):
                            groups.append(("silu", grp))  # x / (1 + exp(-x))
                            taken |= set(grp)
                            continue
                        sig_input = x
                        d = divs[0]
        if not grp:
            continue
        silu = [u for u in dv.users(d) if dv.prim(u) == "mul" and sig_input is not None
                and sig_input in body.at(u).inputs]
        if silu:
            grp.append(silu[0])
            groups.append(("silu", grp))
        else:
            groups.append(("sigmoid", grp))
        taken |= set(grp)
    return groups


def _batch_norm_groups(dv: _Derived, taken: set[str]) -> _Groups:
    """Eval batch norm: (x - mean) * rsqrt(var + eps) [or * (1/sqrt(var + eps))] * w + b, per channel."""
    body = dv.body
    groups: _Groups = []
    for d in dv.derived:
        if d in taken or dv.prim(d) != "sub":
            continue
        chain = [d]
        cur = d
        saw_scale = False
        for _ in range(4):
            nxt = [u for u in dv.users(cur) if dv.prim(u) in ("mul", "add") and u not in taken]
            if not nxt:
                break
            u = nxt[0]
            others = [i for i in body.at(u).inputs if i != cur]
            if dv.prim(u) == "mul" and any(_derives_rsqrt(body, o) for o in others):
                saw_scale = True
            chain.append(u)
            cur = u
            if dv.prim(u) == "add" and saw_scale:
                break  # + b ends it: an add after that (the residual of a ResNet block) is an op of its own
        if saw_scale:
            groups.append(("batch_norm", chain))
            taken |= set(chain)
    return groups


def _clamp_groups(dv: _Derived, taken: set[str], pad: set[str]) -> _Groups:
    """ReLU / clamp / hardtanh: maximum with 0, minimum with a constant; leaky ReLU: where(x > 0, x, x * a); a
    select that computes (not one that moves elements by position or masks a window's padding)."""
    body, dset = dv.body, dv.dset
    groups: _Groups = []
    for d in dv.derived:
        if d in taken:
            continue
        p = dv.prim(d)
        v = body.at(d)
        if p == "maximum":
            other = [i for i in v.inputs if i not in dset]
            c = _const_of(body, other[0]) if other else None
            mins = [u for u in dv.users(d) if dv.prim(u) == "minimum"]
            if mins:
                groups.append(("hardtanh", [d, mins[0]]))
                taken |= {d, mins[0]}
            else:
                groups.append(("relu" if c in (0.0, None) else "clamp", [d]))
                taken.add(d)
        elif p == "minimum":
            groups.append(("clamp", [d]))
            taken.add(d)
        elif p == "where":
            cmp = [i for i in v.inputs if i in dset and dv.prim(i) in ("gt", "ge", "lt", "le")]
            muls = [i for i in v.inputs if i in dset and dv.prim(i) == "mul"]
            grp = [d] + cmp + muls
            chain_in = [i for i in v.inputs if i in dset and dv.prim(i) != "const"]
            if v.inputs and v.inputs[0] not in dset and _positional(body, v.inputs[0]):
                # tl.where(x1 < 1, cls_token, conv_out): a cat (ViT's class token before the patch embedding's
                # conv; Llama's rotate_half, both halves the GEMM's) or a pad (`tl.where(x2 < 197, q * scale,
                # 0)`: ViT's 197 tokens padded to 200 for a bmm) selects by position along one index: it moves
                # elements, it computes nothing; what it selects (the scale) is an op of its own. A causal mask
                # compares two indices: that is computation.
                taken.add(d)
                continue
            if muls and cmp:
                groups.append(("leaky_relu", grp))
            elif cmp:
                groups.append(("relu", grp))
            elif d in pad and len(chain_in) == 1 and not any(_reads_data(body, i) for i in v.inputs if i not in dset):
                pass  # tl.where(tmp2, x, -inf) on an index condition: a pooling window's padded element, no op
            else:
                groups.append(("where", grp))
            taken |= set(grp)
        elif p in ("gt", "ge", "lt", "le"):
            wh = [u for u in dv.users(d) if dv.prim(u) == "where"]
            if wh:
                continue  # taken with its where
    return groups


def _pointwise_groups(dv: _Derived, taken: set[str], broadcast: dict[str, bool]) -> _Groups:
    """Everything else: one op per primitive; an add of a broadcast parameter straight on the start is the bias,
    and a sum of several tensors is one add."""
    body, dset, start = dv.body, dv.dset, dv.start
    groups: _Groups = []
    for d in dv.derived:
        if d in taken or d in start:
            continue
        p = dv.prim(d)
        if p in _NOISE or p in ("gt", "ge", "lt", "le", "eq", "ne", "not", "and", "or"):
            continue
        if p in ("mul", "div") and any(_const_of(body, i) == 1.0 for i in body.at(d).inputs):
            continue  # x * 1.0 (Inductor's softmax writes one before its max): computes nothing
        lab = p
        if p == "add":
            v = body.at(d)
            other = [i for i in v.inputs if i not in dset]
            params = set().union(*(_params_under(body, o) for o in other)) if other else set()
            near = any(i in start or ((vi := body.value(i)) is not None and set(vi.ops) <= _PASS
                                      and bool(set(vi.inputs) & start)) for i in v.inputs)
            if params and near and all(broadcast.get(pp, False) for pp in params):
                lab = "bias"
            elif other and all(_is_const(body, o) for o in other):
                lab = "add"
            else:
                # a sum of several tensors (x + o_proj + down_proj, summed in whatever order Inductor chose)
                # is one add on this chain (the recognisers before this one make no add)
                prev = next((gi for gi, (gl, gv) in enumerate(groups) if gl == "add"
                             and set(body.at(d).inputs) & set(gv)), None)
                if prev is not None:
                    groups[prev][1].append(d)
                    taken.add(d)
                    continue
        groups.append((lab, [d]))
        taken.add(d)
    return groups


def _ops_of(dv: _Derived, groups: _Groups) -> list[Op]:
    """The groups as ops in body order, each with the line that shows it and the parameters of its other
    operands."""
    body, derived, dset, start = dv.body, dv.derived, dv.dset, dv.start
    ops: list[Op] = []
    for lab, vals in groups:
        # the line that shows the op: its characteristic value (the erf of a GELU), else its first real op
        key = [x for x in vals if dv.prim(x) in _KEY_OPS] or [x for x in vals if dv.prim(x) not in _NOISE] or vals
        lines = [vx.line for x in key if (vx := body.value(x)) is not None]
        operand_params: set[str] = set()
        for x in vals:
            for i in body.inputs_of(x):
                if i not in dset and i not in start:
                    operand_params |= _params_under(body, i)
        ops.append(Op(lab, tuple(vals), min(lines) if lines else 0, tuple(sorted(operand_params))))
    ops.sort(key=lambda o: min(derived.index(x) for x in o.values))
    return ops


_INDEX_VAR = re.compile(r"^(?:[xyz]|r\d*_?)\d+$|^(?:[xyz]|r\d*_?)index$")
_POSITION_OPS = vocab.BODY_POSITION_OPS


def _positional(body: Body, cond: str) -> bool:
    """Whether a condition selects by position along one index: computed from one index variable (``x1``,
    ``r0_3``) and constants only, by copies, comparisons and and/or: ``x1 < 1``, ``(x1 >= 1) & (x1 < 197)`` (a
    load anywhere under it is data, not position)."""
    index_vars: set[str] = set()
    seen: set[str] = set()
    todo = [cond]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if _INDEX_VAR.match(n):
            index_vars.add(n)
            continue  # its own index arithmetic (x1 = xindex // 6 % 197) is where along the index it lies
        v = body.value(n)
        if v is None:
            continue
        if v.param is not None or not set(v.ops) <= _POSITION_OPS:
            return False
        todo.extend(v.inputs)
    return len(index_vars) == 1


def _reads_data(body: Body, name: str) -> bool:
    """Whether a value is computed from a load (a mask loaded from a tensor), not from indices and constants."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        v = body.value(todo.pop())
        if v is None or v.name in seen:
            continue
        if v.param is not None:
            return True
        seen.add(v.name)
        todo.extend(v.inputs)
    return False


def _derives_rsqrt(body: Body, name: str, depth: int = 5) -> bool:
    """Whether a value is computed from a (reciprocal) square root: the inverse standard deviation of a norm."""
    v = body.value(name)
    if v is None or depth <= 0:
        return False
    if any(o in ("rsqrt", "reciprocal", "sqrt") for o in v.ops):
        return True
    return any(_derives_rsqrt(body, i, depth - 1) for i in v.inputs)


def body_of(kind: str, name: str, source: str, params: Sequence[str]) -> Body | None:
    """The body of a kernel definition, when its language is one this module reads."""
    if not source:
        return None
    if kind.startswith("triton"):
        return parse_triton(source, name, params)
    if kind in ("cpp_kernel", "cpp_gemm_template"):
        return parse_cpp(source, params, after_micro_gemm=kind == "cpp_gemm_template")
    return None
