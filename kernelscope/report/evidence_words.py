"""The words of GEMM verdicts: each evidence rule and why-not reason (result.py's ``EvidenceRule``, ``WhyNotReason``)
written as the sentence the reports print, from the facts its record carries.

The analysis records codes and facts; this module is the one place that turns them into English, so the terminal,
Markdown, HTML, compare and upgrade reports all say the same thing. A record of a code this kernelscope does not
know (a newer kernelscope's) prints as its code and facts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kernelscope.result import Evidence, EvidenceRule, WhyNot, WhyNotReason

Facts = Mapping[str, Any]


def _join(v: Any, sep: str = ", ") -> str:
    return sep.join(str(x) for x in v) if isinstance(v, (tuple, list)) else str(v)


def _py(v: Any) -> str:
    """A shape as Python prints a list (``[512, 1024]``), a word as it is."""
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(_py(x) if isinstance(x, (tuple, list)) else repr(x) for x in v) + "]"
    return str(v)


def _ms(t: Any) -> str:
    """A time in ms as autotune tables print it; a choice that failed (inf, written as null) as "inf"."""
    return "inf" if t is None else f"{t:.4f}"


def _code(f: Facts) -> str:
    """The kernel source line that computes an op, quoted, or "its body" when the line is not known."""
    return f"`{f['code']}`" if f.get("code") else "its body"


def _gemm_kind(f: Facts) -> str:
    return "convolution" if f.get("gemm_kind") == "conv" else "GEMM"


def _scope(f: Facts) -> str:
    checked, of = f["checked"], f["of"]
    return f"all {checked} iterations" if checked == of else f"{checked} of {of} iterations checked (evenly spaced)"


def _at(f: Facts) -> str:
    return f" at {_code(f)} ({f['src_where']})" if f.get("src_where") else ""


def fusion_benchmark_words(f: Facts) -> str:
    """"Inductor's epilogue-fusion benchmark (log line 36) timed buf0 + buf1 as one kernel 1.063x faster than
    apart, so it fused them": one FusionBenchmark, from the facts of its evidence."""
    pair = _join(f["buffers"], " + ")
    fused = bool(f.get("fused"))
    if f.get("factor") is None:
        what = f"could not run {pair} fused (no config of the fused kernel ran), so it kept them apart"
    else:
        what = (f"timed {pair} as one kernel {str(f['text']).split('x', 1)[0]}x {'faster' if fused else 'slower'} "
                f"than apart, so it {'fused them' if fused else 'kept them apart'}")
    text = f"Inductor's epilogue-fusion benchmark (log line {f['log_line']}) {what}"
    if f.get("marginal"):
        text += (f"; inside that benchmark's run-to-run spread (under {f['spread']:.2f}x): another compile may "
                 "decide otherwise")
    return text


def autotune_marginal_words(f: Facts) -> str:
    """"autotune choice marginal: Triton won by 2.6% over ATen (bias_addmm) ...": a close autotune table, from
    its winner's kind, margin and runner-up."""
    return (f"autotune choice marginal: {f['winner_backend']} won by {f['margin']:.1%} over "
            f"{f['runner_up_backend']} ({f['runner_up']}), inside autotune's timing noise: another run may pick "
            f"{f['runner_up_backend']}, and this GEMM's backend and epilogue verdict with it")


def _launch(f: Facts, where: str) -> str:
    how = f"its CPU op {f['op']} (External id {f.get('external_id')})" if "op" in f else "launch order"
    return (f"[launch-order] {f['site']} ({where}) ran as {_join(f['kernels'], ' + ')} in {f['region']}, "
            f"matched by {how}")


def _eager_reads(f: Facts) -> str:
    other = " and other data (another GEMM's chain, or a tensor made before)" if f.get("other") else ""
    return (f"[eager-dataflow] {f['op']} on {_py(f['on'])} reads the result of {f['anchor']}{other} "
            f"(kernelscope.flow ranges) ran {f['ran']}")


def _eager_through(f: Facts, family: str) -> str:
    """"[eager-dataflow] the value reaches aten::add through aten::view, aten::reshape ...": one hop of the chain."""
    parts = [_join(f["through"])] if f.get("through") else []
    if f.get("bare"):
        parts.append(f"{f['bare']} torch call(s) that ran no ATen op (they returned a tensor they were given, as "
                     ".contiguous() does on a contiguous tensor)")
    moved = f"; {_join(f['copies'])} copied it" if f.get("copies") else ""
    head = (f"the value reaches {f['op']} through" if family == "eager-dataflow"
            else f"{f['op']} comes after the chain's last op, in call order, past")
    return (f"[{family}] {head} {' and '.join(parts)}{moved}: views and layout copies carry the value on "
            "unchanged")


def _trace_only_stop(f: Facts) -> str:
    reductions = f.get("reductions") or ()
    others = f.get("others") or ()
    return (f"[trace-only] chain stops at {f['kernel']} ({f['category']}"
            + (f"; its name lists {_join(reductions)}" if reductions else "") + ")"
            + (f": it also lists {_join(others)}, which may run before the reduction (epilogue ops) or after it; "
               "a name does not say which" if others else ""))


def _iterations_differ(f: Facts) -> str:
    said = "; ".join(f"iteration {i}: {d}" for i, d in zip(f["differing"], f["details"]))
    return f"[iterations] differs from iteration 0 ({_scope(f)}): {said[:2000]}"


def _code_gemm(f: Facts, where: str) -> str:
    node = f" (%{f['node']}, {f['node_where']})" if f.get("node") else ""
    dot = (f": its body's tl.dot ({f['dot_where']}) computes it, whatever else the kernel fuses"
           if f.get("dot_where") else "")
    return f"[code-gemm] {f['site']} ({f['kernel_kind']}, {where}) runs the {f['op']}{node}{dot}"


def _separate_kernel(f: Facts, where: str) -> str:
    operands = f" (other operands {_join(f['operands'])})" if f.get("operands") else ""
    return (f"[dataflow] {f['op']} runs in {f['kernel']}, a separate kernel, at call site {where}: it reads the "
            f"GEMM result through {_join(f['params'])}{operands}: {_code(f)} ({f['src_where']})")


def _provenance_call_site(f: Facts) -> str:
    text = (f"[provenance] call site {f['handle']} computes the GEMM node {f['node']} from the traced node "
            f"{_join(f.get('traced') or ()) or '?'}")
    if "node_op" in f:
        text += f" ({f['node_op']}), which is {f.get('module') or 'an unnamed module'}"
    if f.get("source"):
        text += f"; called at {f['source']}"
        if f.get("code"):
            text += f" `{f['code']}`"
    return text + " (Inductor provenance)"


def _provenance_caller(f: Facts) -> str:
    op = f" ({f['node_op']})" if f.get("node_op") else ""
    if f.get("handle"):
        text = (f"[provenance] call site {f['handle']} computes the GEMM node {f.get('post') or '?'} from the traced "
                f"node {f['node']}{op}")
    else:
        text = f"[provenance] source node {f['node']}{op} of the call site"
    stack = " < ".join(p or "the model" for p in f.get("stack") or ())
    text += f", called in {_module(f['module'])}'s forward (nn_module_stack: {stack})"
    if f.get("source"):
        text += f"; called at {f['source']}"
        if f.get("code"):
            text += f" `{f['code']}`"
    return text + (" (Inductor provenance, Dynamo's module stack)" if f.get("handle") else " (Dynamo's module stack)")


def _module(path: str) -> str:
    return path or "the model"


def _nvgemm_failed(f: Facts) -> str:
    err = f" (log line {f.get('log_line')}: {f['error']})" if f.get("error") else ""
    return f"[nvgemm-log] {f['count']} NVUniversalGemmCaller choices failed{err}"


def _autotune_table(f: Facts) -> str:
    choices = ", ".join(f"{c} {_ms(t)} ms" for c, t in zip(f["choices"], f["times"]))
    return f"[autotune-log] AUTOTUNE {f['op']}({f['sizes']}) at log line {f['log_line']}: {choices}"


R = EvidenceRule
# Every rule's sentence: (facts, where) -> words. tests/test_evidence_words.py checks that every EvidenceRule has
# one and that no other code does.
EVIDENCE_WORDS: dict[str, Callable[[Facts, str], str]] = {
    R.LAUNCH_ORDER_RAN_AS: _launch,
    R.LAUNCH_ORDER_MEMSETS: lambda f, w: f"[launch-order] the GEMM call also launched {_join(f['kernels'])}",
    R.LAUNCH_ORDER_NOT_FOUND: lambda f, w: (f"[launch-order] {f['site']} was not found among the trace's launches "
                                            f"in {f['region']}"),
    R.SPLIT_K: lambda f, w: f"[split-k] {f['kernel']} belongs to the GEMM launched before it",
    R.CUBLASLT_BIAS: lambda f, w: f"[cublaslt-bias-epilogue] the bias is applied in cuBLASLt's epilogue: {f['kernel']}",
    R.ADDMM_ACTIVATION_NOT_TRACED: lambda f, w: (f"[addmm-activation] {f['callee']} applies {f['act']} in the GEMM "
                                                 "call; not seen in the trace"),
    R.ADDMM_ACTIVATION_FALLBACK: lambda f, w: (f"[addmm-activation] {f['op']} fell back to a separate {f['act']} "
                                               f"kernel {f['kernel']}"),
    R.ADDMM_ACTIVATION_EPILOGUE: lambda f, w: (f"[addmm-activation] {f['op']} launched only "
                                               f"{_join(f['kernels'], ' + ')}: {f['act']} applied in the cuBLASLt "
                                               "epilogue"),
    R.EAGER_OP_LAUNCHED: lambda f, w: (f"[eager-op] {f['op']} (External id {f.get('external_id')}) launched "
                                       f"{_join(f['kernels'], ' + ')}"),
    R.EAGER_OP: lambda f, w: f"[eager-op] {f['op']}",
    R.EAGER_OP_INSIDE: lambda f, w: f"[eager-op] {f['op']} inside {f['anchor']} after {f['gemm_op']} ran {f['ran']}",
    R.LAUNCHING_OP_GEMM: lambda f, w: (f"[launching-op] {f['kernel']}'s name does not say GEMM; the op that launched "
                                       f"it (External id {f.get('external_id')}) is {f['op']}, a GEMM-class op: it "
                                       "computes that op's GEMM"),
    R.LAUNCHING_OP_HELPERS: lambda f, w: (f"[launching-op] {f['op']} also launched {f['count']} helper kernel(s) "
                                          f"({_join(f['kernels'])}): {f['why']}, not the GEMM"),
    R.EAGER_DATAFLOW_READS: lambda f, w: _eager_reads(f),
    R.EAGER_DATAFLOW_GELU_TANH: lambda f, w: (
        f"[eager-dataflow] {_join(f['ops'])} compute GELU's tanh form, 0.5 * x * (1 + tanh(c * (x + c' * x ** 3))), "
        f"one op as compiled code names it; they ran {f['kernels']} kernel(s)"),
    R.EAGER_DATAFLOW_NEXT_GEMM: lambda f, w: f"[eager-dataflow] chain stops at {f['op']}: the next GEMM reads it",
    R.EAGER_DATAFLOW_THROUGH: lambda f, w: _eager_through(f, "eager-dataflow"),
    R.EAGER_SEQUENCE_AFTER: lambda f, w: (f"[eager-sequence] {f['op']} on {_py(f['on'])} after {f['anchor']} "
                                          f"ran {f['ran']}"),
    R.EAGER_SEQUENCE_NEXT_GEMM: lambda f, w: f"[eager-sequence] chain stops at {f['op']}: the next GEMM",
    R.EAGER_SEQUENCE_THROUGH: lambda f, w: _eager_through(f, "eager-sequence"),
    R.EAGER_SEQUENCE_NORM_FEEDER: lambda f, w: (f"[eager-sequence] {f['op']} only feeds {f['reduction']}: part of "
                                                "that reduction, not the epilogue"),
    R.EAGER_SEQUENCE_BOUNDARY: lambda f, w: (f"[eager-sequence] chain stops at {f['op']}: not pointwise (the "
                                             "epilogue ends at a reduction, norm, pooling or attention)"),
    R.EAGER_SEQUENCE_NOT_ELEMENTWISE: lambda f, w: f"[eager-sequence] chain stops at {f['op']}: not elementwise",
    R.EAGER_SEQUENCE_SHAPE: lambda f, w: (f"[eager-sequence] chain stops at {f['op']}: no input of the GEMM's "
                                          f"output shape {_py(f.get('shape'))}"),
    R.SOURCE: lambda f, w: (f"[source] {f['op']} was called at {f['source']} (the profiler range "
                            "'kernelscope.source: ...' the eager worker opens around GEMM-class calls)"),
    R.TRACE_ONLY_KERNELS: lambda f, w: (f"[trace-only] GEMM kernel(s) {_join(f['kernels'], ' + ')} (no Inductor "
                                        "code: verdict read from kernel names and their order, which list origins, "
                                        "not dataflow)"),
    R.TRACE_ONLY_IN_NAME: lambda f, w: (f"[trace-only] '{f['op']}' is in the GEMM kernel's name {f['kernel']} (a "
                                        "name also lists prologue ops)"),
    R.TRACE_ONLY_SEPARATE: lambda f, w: (f"[trace-only] {f['kernel']} runs after the GEMM as its own kernel "
                                         f"('{f['op']}' from its name)"),
    R.TRACE_ONLY_STOP: lambda f, w: _trace_only_stop(f),
    R.TRACE_ONLY_POOLING: lambda f, w: (f"[trace-only] chain stops at {f['kernel']}: its name lists {f['pool']} "
                                        "(pooling ends the epilogue)"),
    R.ITERATIONS_SAME: lambda f, w: f"[iterations] same kernels and verdict in {_scope(f)}",
    R.ITERATIONS_DIFFER: lambda f, w: _iterations_differ(f),
    R.CODE_GEMM: _code_gemm,
    R.CODE_GEMM_OPERATOR: lambda f, w: (f"[code-gemm] {f['kernel']} runs {f['operator']} with "
                                        f"has_epilogue={f['has_epilogue']}"),
    R.CODE_GEMM_INSIDE: lambda f, w: (f"[code-gemm] {f['op']} ran inside {f['inside']}, which the output code calls "
                                      f"at {w} ({f['site']}; GEMM {f['index']} of {f['count']} of that call): its "
                                      "epilogue is what the code does with the call's result"),
    R.CODE_GEMM_INSIDE_INNER: lambda f, w: (f"[code-gemm] {f['op']}'s N ({f['n']}) is not that of "
                                            f"{f['inside']}'s result ({f['width']}): its result stays inside the "
                                            "call (another GEMM there reads it), so its epilogue is not the call's "
                                            "and the code does not show it"),
    R.EXTERN_GEMM: lambda f, w: (f"[extern-gemm] {f['site']} ({w}) calls a library {_gemm_kind(f)}: it takes no "
                                 "Inductor epilogue"),
    R.PROLOGUE: lambda f, w: (f"[prologue] {f['kernel']} also computes {_join(f['ops'])} on the GEMM's inputs "
                              "(prologue fusion): not epilogue"),
    R.TEMPLATE_BODY: lambda f, w: (f"[template-epilogue] {f['op']} is computed inside {f['kernel']} on the GEMM's "
                                   f"result: {_code(f)} ({w}); call site {f['site_where']}"),
    R.TEMPLATE_FRAGMENT: lambda f, w: (f"[template-epilogue] {f['op']}: %{f['node']} is computed inside "
                                       f"{f['kernel']} ({w})"),
    R.TEMPLATE_FRAGMENT_BIAS: lambda f, w: (f"[template-epilogue] {f['gemm_op']}'s bias is added inside "
                                            f"{f['kernel']} ({w})"),
    R.BIAS_C_OPERAND: lambda f, w: (f"[bias-in-call] {f['site']} ({w}) takes the bias {f['bias']} as its C operand "
                                    "(beta=1): in the GEMM call"),
    R.BIAS_OPERAND: lambda f, w: f"[bias-in-call] {f['site']} ({w}) takes the bias {f['bias']}",
    R.BIAS_CONV_OPERAND: lambda f, w: (f"[bias-in-call] {f['op']} takes the bias {_py(f['shape'])} as an operand: "
                                       "the convolution call adds it"),
    R.BIAS_COPY: lambda f, w: (f"[bias-in-call] {f['op']} copies the broadcast bias into the output ({f['kernel']}) "
                               "and the GEMM accumulates onto it (beta=1): the bias is applied by the GEMM call"),
    R.BETA_NOT_TRACED: lambda f, w: (f"[beta-accumulate] {f['callee']} takes the bias as its C operand (beta=1); "
                                     "not seen in the trace"),
    R.BETA_NO_KERNEL: lambda f, w: (f"[beta-accumulate] {f['op']} passes the bias to the GEMM as its C operand "
                                    "(beta=1); no separate kernel seen"),
    R.BETA_RESIDUAL: lambda f, w: (f"[beta-accumulate] {f['site']} ({w}) adds {f['operand']} (shape "
                                   f"{_py(f['shape'])}, as large as the output: a residual, not a bias) as its C "
                                   "operand (beta=1) inside the GEMM call"),
    R.ONEDNN_POST_OP: lambda f, w: f"[onednn-post-op] {f['site']} ({w}) applies '{f['attr']}' as a oneDNN post-op",
    R.DATAFLOW_SEPARATE_KERNEL: _separate_kernel,
    R.DATAFLOW_SEPARATE_CALL: lambda f, w: f"[dataflow] {f['site']} ({w}) reads the GEMM result in a separate call",
    R.DATAFLOW_FRAGMENT_OP: lambda f, w: (f"[dataflow] {f['kernel']} ({w}) reads the GEMM result; '{f['op']}' from "
                                          "its graph fragment (its body is not readable)"),
    R.DATAFLOW_IN_NEXT_TEMPLATE: lambda f, w: (f"[dataflow] {f['op']} runs in {f['kernel']}, the next GEMM's "
                                               f"template, at call site {w}: its epilogue reads the GEMM result "
                                               f"through {_join(f['params'])}: {_code(f)} ({f['src_where']})"),
    R.DATAFLOW_IN_NEXT_PROLOGUE: lambda f, w: (f"[dataflow] {f['op']} runs in {f['kernel']}, the next GEMM's "
                                               f"template, at call site {w}: its prologue computes it on the GEMM "
                                               f"result (through {_join(f['params'])}) before its matrix product: "
                                               f"{_code(f)} ({f['src_where']})"),
    R.DATAFLOW_POST_OP_NEXT_GEMM: lambda f, w: (f"[dataflow] '{f['attr']}' runs in {f['site']} ({w}), another "
                                                "GEMM's call: a oneDNN post-op of that GEMM that takes this GEMM's "
                                                "result as its other operand"),
    R.DATAFLOW_RECOMPUTED: lambda f, w: f"[dataflow] {f['kernel']} ({w}) recomputes {f['op']}: counted once",
    R.DATAFLOW_NORM_FEEDER: lambda f, w: (f"[dataflow] {f['op']} in {f['kernel']} only feeds a reduction whose "
                                          f"statistic normalises the GEMM's result in {f['norm_kernel']} ({w}): "
                                          "part of that norm, not an epilogue op"),
    R.DATAFLOW_LATER_GEMM: lambda f, w: (f"[dataflow] in {f['kernel']} ({w}) ops that also read "
                                         f"{_join(f['gemms'])}'s result belong to that later GEMM"),
    R.DATAFLOW_NEXT_GEMM: lambda f, w: (f"[dataflow] chain stops at {f['site']} ({w}): the next {_gemm_kind(f)} "
                                        "reads it"),
    R.DATAFLOW_RESULT_JOINS: lambda f, w: (f"[dataflow] chain stops at {f['site']} ({w}): that GEMM's own result "
                                           "joins there"),
    R.DATAFLOW_NOT_POINTWISE: lambda f, w: f"[dataflow] chain stops at {f['site']} ({w}): {f['op']} is not pointwise",
    R.DATAFLOW_POOLING: lambda f, w: (f"[dataflow] chain stops in {f['kernel']} ({w}): it pools a window of the "
                                      f"GEMM's output (pooling is no epilogue op): {_code(f)} ({f['src_where']})"),
    R.DATAFLOW_STATISTICS: lambda f, w: (f"[dataflow] chain stops in {f['kernel']} ({w}){_at(f)}: it combines the "
                                         "GEMM's result with statistics an earlier kernel reduced from it "
                                         f"({_join(f['params'])})"),
    R.DATAFLOW_REDUCTION: lambda f, w: f"[dataflow] chain stops in {f['kernel']} ({w}){_at(f)}: a reduction reads it",
    R.DATAFLOW_GRAPH_OUTPUT: lambda f, w: (f"[dataflow] the chain ends at the graph output (return "
                                           f"{_join(f['outputs'])})"),
    R.MODULE_RANGE: lambda f, w: (f"[module] {f['op']} ran inside the profiler range 'kernelscope.module: "
                                  f"{f['module']}'"),
    R.PROVENANCE_CALL_SITE: lambda f, w: _provenance_call_site(f),
    R.PROVENANCE_SOURCE_NODE: lambda f, w: (f"[provenance] source node {f['node']} ({f['node_op']}) of the call site "
                                            f"is {f.get('module') or 'an unnamed module'}"
                                            + (f" at {f['source']}" if f.get("source") else "")
                                            + " (TORCH_LOGS=graph_code)"),
    R.PROVENANCE_CALLER: lambda f, w: _provenance_caller(f),
    R.PROVENANCE_BY_ORDER: lambda f, w: (f"[provenance] {f['op']} has no GEMM source node at its call site; it is the "
                                         f"{f['index']}. of {f['count']} such GEMMs and {f['node']} ({f['node_op']}, "
                                         f"{f['module']}) the same place among the graph's remaining GEMM nodes "
                                         "(matched by order)"),
    R.AUTOTUNE_TABLE: lambda f, w: _autotune_table(f),
    R.FUSION_BENCHMARK: lambda f, w: f"[fusion-benchmark] {fusion_benchmark_words(f)}",
    R.FUSION_LOG: lambda f, w: (f"[fusion-log] log line {f['log_line']}: cannot fuse {f['node1']} with "
                                f"{f['node2']}: {f['reason']}"),
    R.NVGEMM_FAILED: lambda f, w: _nvgemm_failed(f),
    R.AUTOTUNE_MARGINAL: lambda f, w: autotune_marginal_words(f),
    R.FUSION_BENCHMARK_MARGINAL: lambda f, w: f"fusion benchmark marginal: {fusion_benchmark_words(f)}",
    R.LEGACY: lambda f, w: str(f.get("text", "")),
}


def _ran_in(f: Facts) -> str:
    return f"{_join(f['ops'])} ran in {_join(f['kernels'])}"


def _autotune_picked(f: Facts) -> str:
    over = f" over {f['template']} ({_ms(f.get('template_ms'))} ms)" if f.get("template") else ""
    return (f"the library GEMM {f['winner']} ({_ms(f.get('winner_ms'))} ms) won the autotune{over}; a library GEMM "
            f"cannot take an Inductor epilogue, so {_ran_in(f)}")


def _autotune_ranked_template(f: Facts) -> str:
    lib = f" and {f['library_choice']} at {_ms(f.get('library_ms'))} ms" if f.get("library_choice") else ""
    return (f"the library GEMM ran although the autotune table for these sizes ranked {f['winner']} "
            f"({_ms(f.get('winner_ms'))} ms) first{lib}; a library GEMM cannot take an Inductor epilogue, so "
            f"{_ran_in(f)}")


def _nvgemm_compile_failed(f: Facts) -> str:
    err = f": {f['error']}" if f.get("error") else ""
    return (f"every NVGEMM choice failed to compile in the autotune workers ({f['count']} choices{err}); set "
            f"CUTE_DSL_ARCH={f['arch']}")


W = WhyNotReason
# Every reason's sentence: facts -> words. tests/test_evidence_words.py checks that every WhyNotReason has one and
# that no other code does.
WHY_NOT_WORDS: dict[str, Callable[[Facts], str]] = {
    W.EAGER_CPU: lambda f: (f"eager: ATen runs {_join(f['ops'])} as separate ops ({_join(f['kernels'])}); the CPU "
                            "GEMM call applies no epilogue"),
    W.EAGER_LIBRARY: lambda f: (f"eager: ATen runs {_join(f['ops'])} as separate kernels ({_join(f['kernels'])}); "
                                f"a {f['library']} GEMM call only takes a bias (cuBLASLt epilogue) or, through "
                                "torch._addmm_activation, a GELU/ReLU"),
    W.MAX_AUTOTUNE_UNKNOWN: lambda f: (f"Inductor called the ATen/{f['library']} GEMM, which cannot take an Inductor "
                                       f"epilogue; {_ran_in(f)} (whether max-autotune was on is not known)"),
    W.MAX_AUTOTUNE_OFF: lambda f: (f"max-autotune is off, so Inductor called the ATen/{f['library']} GEMM, which "
                                   f"cannot take an Inductor epilogue; {_ran_in(f)}"),
    W.AUTOTUNE_PICKED: _autotune_picked,
    W.AUTOTUNE_RANKED_TEMPLATE: _autotune_ranked_template,
    W.NO_FUSIBLE_BACKEND: lambda f: (f"max_autotune_gemm_backends={_join(f['backends'], ',')} offers no template "
                                     f"that can take an epilogue; {_ran_in(f)}"),
    W.LIBRARY_GEMM: lambda f: (f"the autotuner picked the ATen/{f['library']} GEMM, which cannot take an Inductor "
                               f"epilogue; {_ran_in(f)}"),
    W.FREEZING_OFF: lambda f: "Inductor's C++ GEMM template needs constant weights (freezing=True), which was off",
    W.NVGEMM_NO_EPILOGUE_OPERATOR: lambda f: (f"NVGEMM on {f['sm']}: cutlass.operators has no "
                                              "epilogue-fusion-capable operator for this GPU (those target SM100), so "
                                              f"{_ran_in(f)}"),
    W.NVGEMM_NO_EPILOGUE: lambda f: f"the NVGEMM kernel was generated without an epilogue; {_ran_in(f)}",
    W.CUTLASS_NO_EPILOGUE: lambda f: ("Inductor's CUTLASS C++ GEMM carries no epilogue (EVT epilogue fusion is off "
                                      f"unless CUTLASS_EPILOGUE_FUSION=1); {_ran_in(f)}"),
    W.IN_NEXT_GEMM: lambda f: (f"{_join(f['ops'])} ran in the next GEMM's template ({_join(f['kernels'])}), which "
                               "reads this GEMM's result back from memory: fused there, not here"),
    W.SEPARATE_KERNEL: lambda f: f"{_join(f['ops'])} left in a separate kernel ({_join(f['kernels'])})",
    W.NO_FUSION_LOG: lambda f: ("no fusion log was captured to say why (TORCH_LOGS=fusion shows Inductor's fusion "
                                "decisions)"),
    W.NVGEMM_COMPILE_FAILED: _nvgemm_compile_failed,
    W.NVGEMM_NO_BIAS_CHOICE: lambda f: (f"NVGEMM offers no choice for {f['op']} on {f['sm']}: its bias needs an "
                                        "epilogue-capable operator, and cutlass.operators has those for SM100 only"),
    W.FUSION_BENCHMARK_NO_CONFIG: lambda f: ("benchmark_epilogue_fusion rejected the fused template: none of its "
                                             f"configs ran ({f['text']})"),
    W.FUSION_BENCHMARK_REJECTED: lambda f: f"benchmark_epilogue_fusion judged the fused template slower ({f['text']})",
    W.FUSION_LOG: lambda f: "Inductor's fusion log: " + "; ".join(
        f"cannot fuse {a} with {b}: {r}" for a, b, r in zip(f["nodes1"], f["nodes2"], f["reasons"])),
    W.AUTOTUNE_MARGINAL: autotune_marginal_words,
    W.FUSION_BENCHMARK_MARGINAL: lambda f: f"fusion benchmark marginal: {fusion_benchmark_words(f)}",
    W.LEGACY: lambda f: str(f.get("text", "")),
}


def _unknown(code: str, facts: Facts) -> str:
    """A code this kernelscope has no words for: the code and its facts, as recorded."""
    shown = ", ".join(f"{k}={_join(v) if isinstance(v, (tuple, list)) else v}" for k, v in facts.items())
    return f"[{code}] {shown}" if shown else f"[{code}]"


def evidence_text(e: Evidence) -> str:
    """One piece of evidence as the reports print it: "[dataflow] chain stops at ...: the next GEMM reads it"."""
    words = EVIDENCE_WORDS.get(e.rule)
    return words(e.facts, e.where) if words is not None else _unknown(e.rule, e.facts)


def reason_text(r: WhyNot) -> str:
    """One why-not reason as a sentence."""
    words = WHY_NOT_WORDS.get(r.reason)
    return words(r.facts) if words is not None else _unknown(r.reason, r.facts)


def why_not_text(reasons: Sequence[WhyNot]) -> str:
    """A GEMM's why-not, its reasons in order: "gelu left in a separate kernel (...); no fusion log was ..."."""
    return "; ".join(reason_text(r) for r in reasons)


@dataclass(frozen=True, slots=True)
class EvidenceLine:
    """One piece of evidence as a report shows it: its kind, its sentence, where to look."""

    kind: str
    text: str
    where: str = ""


def evidence_line(e: Evidence) -> EvidenceLine:
    return EvidenceLine(e.kind, evidence_text(e), e.where)
