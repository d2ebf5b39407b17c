"""The words of GEMM verdicts (kernelscope/report/evidence_words.py): every evidence rule and why-not reason has its
sentence and no other code does; each sentence is the one the analysis wrote before its records were structured;
result.json files written before (sentences) load as legacy records that print as written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelscope.analysis.mode import build_mode_result
from kernelscope.report.evidence_words import (
    EVIDENCE_WORDS,
    WHY_NOT_WORDS,
    evidence_line,
    evidence_text,
    reason_text,
    why_not_text,
)
from kernelscope.result import (
    EVIDENCE_KIND,
    Evidence,
    EvidenceRule,
    GemmEpilogue,
    WhyNot,
    WhyNotReason,
    part_from_json,
    to_json,
)
from kernelscope.result_file import load_result

DATA = Path(__file__).resolve().parent / "data"


def ev(rule: EvidenceRule, where: str = "", **facts: object) -> Evidence:
    return Evidence.of(rule, where, **facts)


R, W = EvidenceRule, WhyNotReason
FB = {"buffers": ("buf0", "buf1"), "fused": True, "factor": 1.063, "text": "1.063x speedup", "log_line": 36,
      "marginal": True, "spread": 1.25}

# (record, the sentence): most are real records of the recorded runs under tests/data, with the sentence the
# analysis wrote for them before records; the rest follow the analysis's own sentences for the cases no recorded
# run reaches.
EVIDENCE = [
    (ev(R.LAUNCH_ORDER_RAN_AS, "graph_0.py:661", site="extern_kernels.bmm", kernels=("aten::bmm",),
        region="## Call CompiledFxGraph None ##", op="aten::bmm", external_id=47),
     "[launch-order] extern_kernels.bmm (graph_0.py:661) ran as aten::bmm in ## Call CompiledFxGraph None ##, "
     "matched by its CPU op aten::bmm (External id 47)"),
    (ev(R.LAUNCH_ORDER_RAN_AS, "x.code.py:158", site="nv_universal_gemm_0", kernels=("kernel_a", "kernel_b"),
        region="the iteration"),
     "[launch-order] nv_universal_gemm_0 (x.code.py:158) ran as kernel_a + kernel_b in the iteration, matched by "
     "launch order"),
    (ev(R.LAUNCH_ORDER_MEMSETS, kernels=("Memset (Device)",)),
     "[launch-order] the GEMM call also launched Memset (Device)"),
    (ev(R.LAUNCH_ORDER_NOT_FOUND, site="extern_kernels.mm", region="the iteration"),
     "[launch-order] extern_kernels.mm was not found among the trace's launches in the iteration"),
    (ev(R.SPLIT_K, kernel="cublasLt::splitKreduce_kernel"),
     "[split-k] cublasLt::splitKreduce_kernel belongs to the GEMM launched before it"),
    (ev(R.CUBLASLT_BIAS, kernel="nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT"),
     "[cublaslt-bias-epilogue] the bias is applied in cuBLASLt's epilogue: "
     "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT"),
    (ev(R.ADDMM_ACTIVATION_NOT_TRACED, callee="extern_kernels._addmm_activation", act="gelu"),
     "[addmm-activation] extern_kernels._addmm_activation applies gelu in the GEMM call; not seen in the trace"),
    (ev(R.ADDMM_ACTIVATION_FALLBACK, op="aten::_addmm_activation", act="gelu", kernel="aten::gelu_"),
     "[addmm-activation] aten::_addmm_activation fell back to a separate gelu kernel aten::gelu_"),
    (ev(R.ADDMM_ACTIVATION_EPILOGUE, op="aten::_addmm_activation", act="gelu",
        kernels=("nvjet_sm90_gelubias_TNT", "cublasLt::splitKreduce_kernel<...>")),
     "[addmm-activation] aten::_addmm_activation launched only nvjet_sm90_gelubias_TNT + "
     "cublasLt::splitKreduce_kernel<...>: gelu applied in the cuBLASLt epilogue"),
    (ev(R.EAGER_OP_LAUNCHED, op="aten::mm", external_id=35, kernels=("aten::mm",)),
     "[eager-op] aten::mm (External id 35) launched aten::mm"),
    (ev(R.EAGER_OP, op="aten::mm"), "[eager-op] aten::mm"),
    (ev(R.EAGER_OP_INSIDE, op="aten::add_", anchor="aten::linear", gemm_op="aten::mm", ran="aten::add_"),
     "[eager-op] aten::add_ inside aten::linear after aten::mm ran aten::add_"),
    (ev(R.LAUNCHING_OP_GEMM, kernel="conv2d_c1_k1_nhwc_specialized", external_id=44, op="aten::cudnn_convolution"),
     "[launching-op] conv2d_c1_k1_nhwc_specialized's name does not say GEMM; the op that launched it (External id "
     "44) is aten::cudnn_convolution, a GEMM-class op: it computes that op's GEMM"),
    (ev(R.LAUNCHING_OP_HELPERS, op="aten::cudnn_convolution", count=1, kernels=("cudnn::kern_precompute_indices",),
        why="cuDNN's index precomputation before precomputed_convolve_sgemm"),
     "[launching-op] aten::cudnn_convolution also launched 1 helper kernel(s) (cudnn::kern_precompute_indices): "
     "cuDNN's index precomputation before precomputed_convolve_sgemm, not the GEMM"),
    (ev(R.EAGER_DATAFLOW_READS, op="aten::mul", on=(2, 16, 64), anchor="aten::linear", other=True, ran="aten::mul"),
     "[eager-dataflow] aten::mul on [2, 16, 64] reads the result of aten::linear and other data (another GEMM's "
     "chain, or a tensor made before) (kernelscope.flow ranges) ran aten::mul"),
    (ev(R.EAGER_DATAFLOW_GELU_TANH, ops=("aten::mul", "aten::pow", "aten::mul", "aten::add", "aten::mul",
                                         "aten::tanh", "aten::add", "aten::mul"), kernels=8),
     "[eager-dataflow] aten::mul, aten::pow, aten::mul, aten::add, aten::mul, aten::tanh, aten::add, aten::mul "
     "compute GELU's tanh form, 0.5 * x * (1 + tanh(c * (x + c' * x ** 3))), one op as compiled code names it; they "
     "ran 8 kernel(s)"),
    (ev(R.EAGER_DATAFLOW_NEXT_GEMM, op="aten::addmm"),
     "[eager-dataflow] chain stops at aten::addmm: the next GEMM reads it"),
    (ev(R.EAGER_DATAFLOW_THROUGH, op="aten::add", through=("aten::view", "aten::reshape", "aten::roll"),
        copies=("aten::reshape", "aten::roll"), bare=1),
     "[eager-dataflow] the value reaches aten::add through aten::view, aten::reshape, aten::roll and 1 torch call(s) "
     "that ran no ATen op (they returned a tensor they were given, as .contiguous() does on a contiguous tensor); "
     "aten::reshape, aten::roll copied it: views and layout copies carry the value on unchanged"),
    (ev(R.EAGER_DATAFLOW_THROUGH, op="aten::layer_norm", through=("aten::view",), copies=(), bare=0),
     "[eager-dataflow] the value reaches aten::layer_norm through aten::view: views and layout copies carry the "
     "value on unchanged"),
    (ev(R.EAGER_SEQUENCE_AFTER, op="aten::relu", on="scalars", anchor="aten::linear", ran="aten::clamp_min"),
     "[eager-sequence] aten::relu on scalars after aten::linear ran aten::clamp_min"),
    (ev(R.EAGER_SEQUENCE_NEXT_GEMM, op="aten::linear"), "[eager-sequence] chain stops at aten::linear: the next GEMM"),
    (ev(R.EAGER_SEQUENCE_THROUGH, op="aten::add", through=("aten::view", "aten::permute", "aten::clone"),
        copies=("aten::clone",)),
     "[eager-sequence] aten::add comes after the chain's last op, in call order, past aten::view, aten::permute, "
     "aten::clone; aten::clone copied it: views and layout copies carry the value on unchanged"),
    (ev(R.EAGER_SEQUENCE_NORM_FEEDER, op="pow", reduction="aten::mean"),
     "[eager-sequence] pow only feeds aten::mean: part of that reduction, not the epilogue"),
    (ev(R.EAGER_SEQUENCE_BOUNDARY, op="aten::max"),
     "[eager-sequence] chain stops at aten::max: not pointwise (the epilogue ends at a reduction, norm, pooling or "
     "attention)"),
    (ev(R.EAGER_SEQUENCE_NOT_ELEMENTWISE, op="aten::softmax"),
     "[eager-sequence] chain stops at aten::softmax: not elementwise"),
    (ev(R.EAGER_SEQUENCE_SHAPE, op="aten::add", shape=(16, 64)),
     "[eager-sequence] chain stops at aten::add: no input of the GEMM's output shape [16, 64]"),
    (ev(R.EAGER_SEQUENCE_SHAPE, op="aten::add", shape=None),
     "[eager-sequence] chain stops at aten::add: no input of the GEMM's output shape None"),
    (ev(R.SOURCE, "llama_block.py:40", op="aten::mm", source="/work/samples/llama_block.py:40"),
     "[source] aten::mm was called at /work/samples/llama_block.py:40 (the profiler range 'kernelscope.source: ...' "
     "the eager worker opens around GEMM-class calls)"),
    (ev(R.TRACE_ONLY_KERNELS, kernels=("aten::bmm",)),
     "[trace-only] GEMM kernel(s) aten::bmm (no Inductor code: verdict read from kernel names and their order, which "
     "list origins, not dataflow)"),
    (ev(R.TRACE_ONLY_IN_NAME, op="mul", kernel="triton_tem_fused_mm_mul_t_1"),
     "[trace-only] 'mul' is in the GEMM kernel's name triton_tem_fused_mm_mul_t_1 (a name also lists prologue ops)"),
    (ev(R.TRACE_ONLY_SEPARATE, kernel="triton_poi_fused_relu_1", op="relu"),
     "[trace-only] triton_poi_fused_relu_1 runs after the GEMM as its own kernel ('relu' from its name)"),
    (ev(R.TRACE_ONLY_STOP, kernel="mkl::_mkl_linear", category="gemm", reductions=(), others=()),
     "[trace-only] chain stops at mkl::_mkl_linear (gemm)"),
    (ev(R.TRACE_ONLY_STOP, kernel="cpp_fused_add_max_0", category="pointwise", reductions=("max",),
        others=("add", "gelu")),
     "[trace-only] chain stops at cpp_fused_add_max_0 (pointwise; its name lists max): it also lists add, gelu, which "
     "may run before the reduction (epilogue ops) or after it; a name does not say which"),
    (ev(R.TRACE_ONLY_POOLING, kernel="graph_0_cpp_fused_avg_pool2d_2", pool="avg_pool2d"),
     "[trace-only] chain stops at graph_0_cpp_fused_avg_pool2d_2: its name lists avg_pool2d (pooling ends the "
     "epilogue)"),
    (ev(R.ITERATIONS_SAME, checked=3, of=3), "[iterations] same kernels and verdict in all 3 iterations"),
    (ev(R.ITERATIONS_SAME, checked=64, of=1000),
     "[iterations] same kernels and verdict in 64 of 1000 iterations checked (evenly spaced)"),
    (ev(R.ITERATIONS_DIFFER, checked=3, of=3, differing=(1, 2),
        details=("aten::addmm -> partial (bias fused, gelu unfused)", "GEMM not found")),
     "[iterations] differs from iteration 0 (all 3 iterations): iteration 1: aten::addmm -> partial (bias fused, "
     "gelu unfused); iteration 2: GEMM not found"),
    (ev(R.CODE_GEMM, "graph_0.py:455", site="cpp_fused_addmm_0", kernel_kind="cpp_gemm_template", op="addmm"),
     "[code-gemm] cpp_fused_addmm_0 (cpp_gemm_template, graph_0.py:455) runs the addmm"),
    (ev(R.CODE_GEMM, "s.code.py:227", site="triton_tem_fused_addmm_t_0", kernel_kind="triton_template", op="addmm",
        node="addmm", node_where="s.code.py:46"),
     "[code-gemm] triton_tem_fused_addmm_t_0 (triton_template, s.code.py:227) runs the addmm (%addmm, s.code.py:46)"),
    (ev(R.CODE_GEMM, "graph_0.py:181", site="triton_tem_fused__to_copy_add_arange_bmm_0", kernel_kind="triton_template",
        op="bmm", node="bmm", node_where="graph_0.py:52", dot_where="graph_0.py:140"),
     "[code-gemm] triton_tem_fused__to_copy_add_arange_bmm_0 (triton_template, graph_0.py:181) runs the bmm (%bmm, "
     "graph_0.py:52): its body's tl.dot (graph_0.py:140) computes it, whatever else the kernel fuses"),
    (ev(R.CODE_GEMM_INSIDE, "graph_0.py:1426", op="aten::mm", inside="transformers::grouped_mm_fallback",
        site="torch.ops.transformers.grouped_mm_fallback.default", index=2, count=4),
     "[code-gemm] aten::mm ran inside transformers::grouped_mm_fallback, which the output code calls at "
     "graph_0.py:1426 (torch.ops.transformers.grouped_mm_fallback.default; GEMM 2 of 4 of that call): its epilogue "
     "is what the code does with the call's result"),
    (ev(R.CODE_GEMM_INSIDE_INNER, op="aten::mm", n=128, width=64, inside="kernelscope_models::two_mm"),
     "[code-gemm] aten::mm's N (128) is not that of kernelscope_models::two_mm's result (64): its result stays "
     "inside the call (another GEMM there reads it), so its epilogue is not the call's and the code does not show "
     "it"),
    (ev(R.CODE_GEMM_OPERATOR, kernel="nv_universal_gemm_0", operator="cutedsl.Sm90Operator", has_epilogue="False"),
     "[code-gemm] nv_universal_gemm_0 runs cutedsl.Sm90Operator with has_epilogue=False"),
    (ev(R.EXTERN_GEMM, "graph_0.py:140", site="extern_kernels.mm", gemm_kind="gemm"),
     "[extern-gemm] extern_kernels.mm (graph_0.py:140) calls a library GEMM: it takes no Inductor epilogue"),
    (ev(R.EXTERN_GEMM, "graph_0.py:12", site="extern_kernels.convolution", gemm_kind="conv"),
     "[extern-gemm] extern_kernels.convolution (graph_0.py:12) calls a library convolution: it takes no Inductor "
     "epilogue"),
    (ev(R.PROLOGUE, kernel="triton_tem_fused_mm_mul_relu_t_0", ops=("mul",)),
     "[prologue] triton_tem_fused_mm_mul_relu_t_0 also computes mul on the GEMM's inputs (prologue fusion): not "
     "epilogue"),
    (ev(R.TEMPLATE_BODY, "graph_0.py:145", op="bias", kernel="triton_tem_fused_addmm_t_0", code="tmp1 = acc + tmp0",
        site_where="graph_0.py:341"),
     "[template-epilogue] bias is computed inside triton_tem_fused_addmm_t_0 on the GEMM's result: `tmp1 = acc + "
     "tmp0` (graph_0.py:145); call site graph_0.py:341"),
    (ev(R.TEMPLATE_FRAGMENT, "graph_0.py:12", op="relu", node="relu", kernel="cutlass_gemm_0"),
     "[template-epilogue] relu: %relu is computed inside cutlass_gemm_0 (graph_0.py:12)"),
    (ev(R.TEMPLATE_FRAGMENT_BIAS, "graph_0.py:10", gemm_op="addmm", kernel="cutlass_gemm_0"),
     "[template-epilogue] addmm's bias is added inside cutlass_gemm_0 (graph_0.py:10)"),
    (ev(R.BIAS_C_OPERAND, "graph_0.py:112", site="extern_kernels.addmm", bias="arg1_1"),
     "[bias-in-call] extern_kernels.addmm (graph_0.py:112) takes the bias arg1_1 as its C operand (beta=1): in the "
     "GEMM call"),
    (ev(R.BIAS_OPERAND, "graph_0.py:674", site="extern_kernels.convolution", bias="_frozen_param301"),
     "[bias-in-call] extern_kernels.convolution (graph_0.py:674) takes the bias _frozen_param301"),
    (ev(R.BIAS_CONV_OPERAND, op="aten::mkldnn_convolution", shape=(8,)),
     "[bias-in-call] aten::mkldnn_convolution takes the bias [8] as an operand: the convolution call adds it"),
    (ev(R.BIAS_COPY, op="aten::addmm", kernel="aten::copy_"),
     "[bias-in-call] aten::addmm copies the broadcast bias into the output (aten::copy_) and the GEMM accumulates "
     "onto it (beta=1): the bias is applied by the GEMM call"),
    (ev(R.BETA_NOT_TRACED, callee="extern_kernels.addmm"),
     "[beta-accumulate] extern_kernels.addmm takes the bias as its C operand (beta=1); not seen in the trace"),
    (ev(R.BETA_NO_KERNEL, op="aten::addmm"),
     "[beta-accumulate] aten::addmm passes the bias to the GEMM as its C operand (beta=1); no separate kernel seen"),
    (ev(R.BETA_RESIDUAL, "graph_0.py:88", site="extern_kernels.addmm", operand="buf3", shape=(512, "s0")),
     "[beta-accumulate] extern_kernels.addmm (graph_0.py:88) adds buf3 (shape [512, 's0'], as large as the output: "
     "a residual, not a bias) as its C operand (beta=1) inside the GEMM call"),
    (ev(R.ONEDNN_POST_OP, "graph_0.py:634", site="torch.ops.mkldnn._linear_pointwise.binary", attr="add"),
     "[onednn-post-op] torch.ops.mkldnn._linear_pointwise.binary (graph_0.py:634) applies 'add' as a oneDNN post-op"),
    (ev(R.DATAFLOW_SEPARATE_KERNEL, "graph_0.py:397", op="add", kernel="triton_poi_fused_add_view_3",
        params=("in_ptr1=buf17",), code="tmp4 = tmp2 + tmp3", src_where="graph_0.py:313"),
     "[dataflow] add runs in triton_poi_fused_add_view_3, a separate kernel, at call site graph_0.py:397: it reads "
     "the GEMM result through in_ptr1=buf17: `tmp4 = tmp2 + tmp3` (graph_0.py:313)"),
    (ev(R.DATAFLOW_SEPARATE_KERNEL, "x.py:9", op="add", kernel="k", params=("in_out_ptr0=buf1",),
        operands=("in_ptr0=arg2_1",), code=None, src_where="x.py:3"),
     "[dataflow] add runs in k, a separate kernel, at call site x.py:9: it reads the GEMM result through "
     "in_out_ptr0=buf1 (other operands in_ptr0=arg2_1): its body (x.py:3)"),
    (ev(R.DATAFLOW_SEPARATE_CALL, "graph_0.py:30", site="torch.ops.aten.gelu.default"),
     "[dataflow] torch.ops.aten.gelu.default (graph_0.py:30) reads the GEMM result in a separate call"),
    (ev(R.DATAFLOW_FRAGMENT_OP, "graph_0.py:31", kernel="cutlass_fused_relu_1", op="relu"),
     "[dataflow] cutlass_fused_relu_1 (graph_0.py:31) reads the GEMM result; 'relu' from its graph fragment (its "
     "body is not readable)"),
    (ev(R.DATAFLOW_IN_NEXT_TEMPLATE, "graph_0.py:472", op="add", kernel="triton_tem_fused_add_addmm_gelu_t_view_3",
        params=("in_ptr4=buf10",), code="tmp6 = tmp4 + tmp5", src_where="graph_0.py:399"),
     "[dataflow] add runs in triton_tem_fused_add_addmm_gelu_t_view_3, the next GEMM's template, at call site "
     "graph_0.py:472: its epilogue reads the GEMM result through in_ptr4=buf10: `tmp6 = tmp4 + tmp5` "
     "(graph_0.py:399)"),
    (ev(R.DATAFLOW_IN_NEXT_PROLOGUE, "graph_0.py:190", op="mul", kernel="triton_tem_fused_mm_mul_relu_t_0",
        params=("in_ptr1=buf0",), code="tmp4 = tmp2 * tmp3", src_where="graph_0.py:131"),
     "[dataflow] mul runs in triton_tem_fused_mm_mul_relu_t_0, the next GEMM's template, at call site "
     "graph_0.py:190: its prologue computes it on the GEMM result (through in_ptr1=buf0) before its matrix "
     "product: `tmp4 = tmp2 * tmp3` (graph_0.py:131)"),
    (ev(R.DATAFLOW_POST_OP_NEXT_GEMM, "graph_0.py:405", attr="add",
        site="torch.ops.mkldnn._convolution_pointwise_.binary"),
     "[dataflow] 'add' runs in torch.ops.mkldnn._convolution_pointwise_.binary (graph_0.py:405), another GEMM's "
     "call: a oneDNN post-op of that GEMM that takes this GEMM's result as its other operand"),
    (ev(R.DATAFLOW_RECOMPUTED, "graph_0.py:397", kernel="triton_poi_fused_add_view_3", op="add"),
     "[dataflow] triton_poi_fused_add_view_3 (graph_0.py:397) recomputes add: counted once"),
    (ev(R.DATAFLOW_NORM_FEEDER, "<memory>:120", op="mul", kernel="triton_red_fused_mean_pow_2",
        norm_kernel="triton_poi_fused_mean_mul_pow_rsqrt_3"),
     "[dataflow] mul in triton_red_fused_mean_pow_2 only feeds a reduction whose statistic normalises the GEMM's "
     "result in triton_poi_fused_mean_mul_pow_rsqrt_3 (<memory>:120): part of that norm, not an epilogue op"),
    (ev(R.DATAFLOW_LATER_GEMM, "graph_0.py:397", kernel="triton_poi_fused_add_view_3", gemms=("extern_kernels.addmm",)),
     "[dataflow] in triton_poi_fused_add_view_3 (graph_0.py:397) ops that also read extern_kernels.addmm's result "
     "belong to that later GEMM"),
    (ev(R.DATAFLOW_NEXT_GEMM, "graph_0.py:623", site="extern_kernels.mm", gemm_kind="gemm"),
     "[dataflow] chain stops at extern_kernels.mm (graph_0.py:623): the next GEMM reads it"),
    (ev(R.DATAFLOW_RESULT_JOINS, "graph_0.py:472", site="triton_tem_fused_add_addmm_gelu_t_view_3"),
     "[dataflow] chain stops at triton_tem_fused_add_addmm_gelu_t_view_3 (graph_0.py:472): that GEMM's own result "
     "joins there"),
    (ev(R.DATAFLOW_NOT_POINTWISE, "graph_0.py:361", site="torch.ops.aten._scaled_dot_product_cudnn_attention.default",
        op="_scaled_dot_product_cudnn_attention"),
     "[dataflow] chain stops at torch.ops.aten._scaled_dot_product_cudnn_attention.default (graph_0.py:361): "
     "_scaled_dot_product_cudnn_attention is not pointwise"),
    (ev(R.DATAFLOW_POOLING, "graph_0.py:480", kernel="cpp_fused_mean_2", code="tmp4 = tmp1 + tmp3;",
        src_where="graph_0.py:311"),
     "[dataflow] chain stops in cpp_fused_mean_2 (graph_0.py:480): it pools a window of the GEMM's output (pooling "
     "is no epilogue op): `tmp4 = tmp1 + tmp3;` (graph_0.py:311)"),
    (ev(R.DATAFLOW_STATISTICS, "graph_0.py:2284", kernel="triton_poi_fused_native_layer_norm_11",
        params=("in_ptr1=buf35", "in_ptr2=buf36"), code="tmp3 = tmp1 - tmp2", src_where="graph_0.py:957"),
     "[dataflow] chain stops in triton_poi_fused_native_layer_norm_11 (graph_0.py:2284) at `tmp3 = tmp1 - tmp2` "
     "(graph_0.py:957): it combines the GEMM's result with statistics an earlier kernel reduced from it "
     "(in_ptr1=buf35, in_ptr2=buf36)"),
    (ev(R.DATAFLOW_REDUCTION, "graph_0.py:2082", kernel="cpp_fused_add_mean_9"),
     "[dataflow] chain stops in cpp_fused_add_mean_9 (graph_0.py:2082): a reduction reads it"),
    (ev(R.DATAFLOW_GRAPH_OUTPUT, outputs=("buf1", "buf7")),
     "[dataflow] the chain ends at the graph output (return buf1, buf7)"),
    (ev(R.MODULE_RANGE, op="mm", module="proj"),
     "[module] mm ran inside the profiler range 'kernelscope.module: proj'"),
    (ev(R.PROVENANCE_CALL_SITE, "resnet.py:280", handle="extern_kernels.addmm:122", node="addmm", traced=("x_6",),
        node_op="linear", module="fc", source="resnet.py:280"),
     "[provenance] call site extern_kernels.addmm:122 computes the GEMM node addmm from the traced node x_6 (linear), "
     "which is fc; called at resnet.py:280 (Inductor provenance)"),
    (ev(R.PROVENANCE_CALL_SITE, "m.py:3", handle="mm:1", node="mm", traced=(), source="m.py:3", code="y = x @ w"),
     "[provenance] call site mm:1 computes the GEMM node mm from the traced node ?; called at m.py:3 `y = x @ w` "
     "(Inductor provenance)"),
    (ev(R.PROVENANCE_SOURCE_NODE, "resnet.py:280", node="x_6", node_op="linear", module="fc", source="resnet.py:280"),
     "[provenance] source node x_6 (linear) of the call site is fc at resnet.py:280 (TORCH_LOGS=graph_code)"),
    (ev(R.PROVENANCE_SOURCE_NODE, node="bmm", node_op="bmm", module=""),
     "[provenance] source node bmm (bmm) of the call site is an unnamed module (TORCH_LOGS=graph_code)"),
    (ev(R.PROVENANCE_CALLER, "modeling_bart.py:1509", node="lm_logits", module="lm_head", stack=("lm_head", ""),
        node_op="linear", source="modeling_bart.py:1509", handle="extern_kernels.mm:40", post="mm_24",
        traced=("lm_logits",), code="lm_logits = self.lm_head(outputs[0])"),
     "[provenance] call site extern_kernels.mm:40 computes the GEMM node mm_24 from the traced node lm_logits "
     "(linear), called in lm_head's forward (nn_module_stack: lm_head < the model); called at modeling_bart.py:1509 "
     "`lm_logits = self.lm_head(outputs[0])` (Inductor provenance, Dynamo's module stack)"),
    (ev(R.PROVENANCE_CALLER, node="matmul", module="layers.0.attn", stack=("layers.0.attn", "layers.0", ""),
        node_op="matmul"),
     "[provenance] source node matmul (matmul) of the call site, called in layers.0.attn's forward (nn_module_stack: "
     "layers.0.attn < layers.0 < the model) (Dynamo's module stack)"),
    (ev(R.PROVENANCE_BY_ORDER, op="convolution", index=1, count=17, node="x", node_op="conv2d", module="conv1"),
     "[provenance] convolution has no GEMM source node at its call site; it is the 1. of 17 such GEMMs and x "
     "(conv2d, conv1) the same place among the graph's remaining GEMM nodes (matched by order)"),
    (ev(R.AUTOTUNE_TABLE, "log:10", op="addmm", sizes="16x4096, 16x4096, 4096x4096", log_line=10,
        choices=("addmm", "bias_addmm", "triton_mm_3"), times=(0.076, 0.0971, None)),
     "[autotune-log] AUTOTUNE addmm(16x4096, 16x4096, 4096x4096) at log line 10: addmm 0.0760 ms, bias_addmm "
     "0.0971 ms, triton_mm_3 inf ms"),
    (ev(R.FUSION_BENCHMARK, "log:36", **FB),
     "[fusion-benchmark] Inductor's epilogue-fusion benchmark (log line 36) timed buf0 + buf1 as one kernel 1.063x "
     "faster than apart, so it fused them; inside that benchmark's run-to-run spread (under 1.25x): another compile "
     "may decide otherwise"),
    (ev(R.FUSION_BENCHMARK, "log:132", **{**FB, "fused": False, "factor": None, "text": "infx slowdown",
                                          "marginal": False, "log_line": 132}),
     "[fusion-benchmark] Inductor's epilogue-fusion benchmark (log line 132) could not run buf0 + buf1 fused (no "
     "config of the fused kernel ran), so it kept them apart"),
    (ev(R.FUSION_LOG, "log:46", log_line=46, node1="op2", node2="op3", reason="no shared data"),
     "[fusion-log] log line 46: cannot fuse op2 with op3: no shared data"),
    (ev(R.NVGEMM_FAILED, "log:42", count=10, log_line=42, error="expects arch to be sm_90a, but got sm_100a"),
     "[nvgemm-log] 10 NVUniversalGemmCaller choices failed (log line 42: expects arch to be sm_90a, but got "
     "sm_100a)"),
    (ev(R.NVGEMM_FAILED, count=3), "[nvgemm-log] 3 NVUniversalGemmCaller choices failed"),
    (Evidence(R.AUTOTUNE_MARGINAL.value, "rule", "autotune", {"winner_backend": "Triton", "margin": 0.0393,
                                                              "runner_up": "addmm", "runner_up_backend": "ATen"}),
     "autotune choice marginal: Triton won by 3.9% over ATen (addmm), inside autotune's timing noise: another run "
     "may pick ATen, and this GEMM's backend and epilogue verdict with it"),
    (Evidence(R.FUSION_BENCHMARK_MARGINAL.value, "rule", "autotune", FB),
     "fusion benchmark marginal: Inductor's epilogue-fusion benchmark (log line 36) timed buf0 + buf1 as one kernel "
     "1.063x faster than apart, so it fused them; inside that benchmark's run-to-run spread (under 1.25x): another "
     "compile may decide otherwise"),
    (Evidence("legacy", "code", "graph_0.py:3", {"text": "[dataflow] as it was written"}),
     "[dataflow] as it was written"),
]

RAN = {"ops": ("gelu",), "kernels": ("triton_poi_fused_gelu_0",)}
WHY = [
    (WhyNot.of(W.EAGER_CPU, ops=("add",), kernels=("aten::add",)),
     "eager: ATen runs add as separate ops (aten::add); the CPU GEMM call applies no epilogue"),
    (WhyNot.of(W.EAGER_LIBRARY, ops=("add", "relu"), kernels=("k1", "k2"), library="cuBLAS/cuBLASLt"),
     "eager: ATen runs add, relu as separate kernels (k1, k2); a cuBLAS/cuBLASLt GEMM call only takes a bias "
     "(cuBLASLt epilogue) or, through torch._addmm_activation, a GELU/ReLU"),
    (WhyNot.of(W.MAX_AUTOTUNE_UNKNOWN, **RAN, library="cuBLAS/cuBLASLt"),
     "Inductor called the ATen/cuBLAS/cuBLASLt GEMM, which cannot take an Inductor epilogue; gelu ran in "
     "triton_poi_fused_gelu_0 (whether max-autotune was on is not known)"),
    (WhyNot.of(W.MAX_AUTOTUNE_OFF, **RAN, library="MKL/oneDNN"),
     "max-autotune is off, so Inductor called the ATen/MKL/oneDNN GEMM, which cannot take an Inductor epilogue; "
     "gelu ran in triton_poi_fused_gelu_0"),
    (WhyNot.of(W.AUTOTUNE_PICKED, **RAN, winner="addmm", winner_ms=0.076),
     "the library GEMM addmm (0.0760 ms) won the autotune; a library GEMM cannot take an Inductor epilogue, so gelu "
     "ran in triton_poi_fused_gelu_0"),
    (WhyNot.of(W.AUTOTUNE_PICKED, **RAN, winner="addmm", winner_ms=0.0672, template="triton_mm_1", template_ms=0.07,
               margin=0.0417),
     "the library GEMM addmm (0.0672 ms) won the autotune over triton_mm_1 (0.0700 ms); a library GEMM cannot take "
     "an Inductor epilogue, so gelu ran in triton_poi_fused_gelu_0"),
    (WhyNot.of(W.AUTOTUNE_RANKED_TEMPLATE, **RAN, winner="triton_mm_97", winner_ms=0.0394),
     "the library GEMM ran although the autotune table for these sizes ranked triton_mm_97 (0.0394 ms) first; a "
     "library GEMM cannot take an Inductor epilogue, so gelu ran in triton_poi_fused_gelu_0"),
    (WhyNot.of(W.AUTOTUNE_RANKED_TEMPLATE, **RAN, winner="triton_mm_97", winner_ms=0.0394, library_choice="addmm",
               library_ms=0.041),
     "the library GEMM ran although the autotune table for these sizes ranked triton_mm_97 (0.0394 ms) first and "
     "addmm at 0.0410 ms; a library GEMM cannot take an Inductor epilogue, so gelu ran in triton_poi_fused_gelu_0"),
    (WhyNot.of(W.NO_FUSIBLE_BACKEND, **RAN, backends=("ATEN",)),
     "max_autotune_gemm_backends=ATEN offers no template that can take an epilogue; gelu ran in "
     "triton_poi_fused_gelu_0"),
    (WhyNot.of(W.LIBRARY_GEMM, **RAN, library="cuBLAS/cuBLASLt"),
     "the autotuner picked the ATen/cuBLAS/cuBLASLt GEMM, which cannot take an Inductor epilogue; gelu ran in "
     "triton_poi_fused_gelu_0"),
    (WhyNot.of(W.FREEZING_OFF),
     "Inductor's C++ GEMM template needs constant weights (freezing=True), which was off"),
    (WhyNot.of(W.NVGEMM_NO_EPILOGUE_OPERATOR, **RAN, sm="sm90"),
     "NVGEMM on sm90: cutlass.operators has no epilogue-fusion-capable operator for this GPU (those target SM100), "
     "so gelu ran in triton_poi_fused_gelu_0"),
    (WhyNot.of(W.NVGEMM_NO_EPILOGUE, **RAN),
     "the NVGEMM kernel was generated without an epilogue; gelu ran in triton_poi_fused_gelu_0"),
    (WhyNot.of(W.CUTLASS_NO_EPILOGUE, ops=("mul", "add", "relu"), kernels=("triton_poi_fused_add_mul_relu_0",)),
     "Inductor's CUTLASS C++ GEMM carries no epilogue (EVT epilogue fusion is off unless CUTLASS_EPILOGUE_FUSION=1); "
     "mul, add, relu ran in triton_poi_fused_add_mul_relu_0"),
    (WhyNot.of(W.IN_NEXT_GEMM, ops=("silu", "mul"), kernels=("graph_0_gemm_m32n128k64_kernel",)),
     "silu, mul ran in the next GEMM's template (graph_0_gemm_m32n128k64_kernel), which reads this GEMM's result "
     "back from memory: fused there, not here"),
    (WhyNot.of(W.SEPARATE_KERNEL, **RAN), "gelu left in a separate kernel (triton_poi_fused_gelu_0)"),
    (WhyNot.of(W.NO_FUSION_LOG),
     "no fusion log was captured to say why (TORCH_LOGS=fusion shows Inductor's fusion decisions)"),
    (WhyNot.of(W.NVGEMM_COMPILE_FAILED, count=10, error="expects arch to be sm_90a, but got sm_100a", arch="sm_90a"),
     "every NVGEMM choice failed to compile in the autotune workers (10 choices: expects arch to be sm_90a, but got "
     "sm_100a); set CUTE_DSL_ARCH=sm_90a"),
    (WhyNot.of(W.NVGEMM_COMPILE_FAILED, count=2, arch="the GPU's arch"),
     "every NVGEMM choice failed to compile in the autotune workers (2 choices); set CUTE_DSL_ARCH=the GPU's arch"),
    (WhyNot.of(W.NVGEMM_NO_BIAS_CHOICE, op="addmm", sm="sm90"),
     "NVGEMM offers no choice for addmm on sm90: its bias needs an epilogue-capable operator, and cutlass.operators "
     "has those for SM100 only"),
    (WhyNot.of(W.FUSION_BENCHMARK_NO_CONFIG, text="infx slowdown", buffers=("buf1", "buf2"), log_line=91),
     "benchmark_epilogue_fusion rejected the fused template: none of its configs ran (infx slowdown)"),
    (WhyNot.of(W.FUSION_BENCHMARK_REJECTED, text="1.004x slowdown", factor=1.004, buffers=("buf4", "buf5"),
               log_line=69),
     "benchmark_epilogue_fusion judged the fused template slower (1.004x slowdown)"),
    (WhyNot.of(W.FUSION_LOG, nodes1=("op2", "op15"), nodes2=("op3", "op16"), reasons=("no shared data", "x")),
     "Inductor's fusion log: cannot fuse op2 with op3: no shared data; cannot fuse op15 with op16: x"),
    (WhyNot.of(W.AUTOTUNE_MARGINAL, winner_backend="ATen", margin=0.016, runner_up="triton_mm_4",
               runner_up_backend="Triton"),
     "autotune choice marginal: ATen won by 1.6% over Triton (triton_mm_4), inside autotune's timing noise: another "
     "run may pick Triton, and this GEMM's backend and epilogue verdict with it"),
    (WhyNot.of(W.FUSION_BENCHMARK_MARGINAL, **FB),
     "fusion benchmark marginal: Inductor's epilogue-fusion benchmark (log line 36) timed buf0 + buf1 as one kernel "
     "1.063x faster than apart, so it fused them; inside that benchmark's run-to-run spread (under 1.25x): another "
     "compile may decide otherwise"),
    (WhyNot.of(W.LEGACY, text="max-autotune is off; as it was written"), "max-autotune is off; as it was written"),
]


def test_every_rule_and_reason_has_words_and_no_other_code_does():
    assert set(EVIDENCE_WORDS) == {r.value for r in EvidenceRule}
    assert set(WHY_NOT_WORDS) == {r.value for r in WhyNotReason}
    # every rule's family has its kind
    assert {r.value.partition(".")[0] for r in EvidenceRule} == set(EVIDENCE_KIND)


def test_the_table_below_says_every_code():
    assert {e.rule for e, _ in EVIDENCE} == {r.value for r in EvidenceRule}
    assert {r.reason for r, _ in WHY} == {r.value for r in WhyNotReason}


@pytest.mark.parametrize(("record", "words"), EVIDENCE, ids=[f"{e.rule}-{i}" for i, (e, _) in enumerate(EVIDENCE)])
def test_evidence_words(record: Evidence, words: str):
    assert evidence_text(record) == words
    # the words survive result.json: facts come back as they were (tuples, not lists), the record equal
    back = part_from_json(Evidence, json.loads(json.dumps(to_json(record))))
    assert back == record and hash(back) == hash(record) and evidence_text(back) == words
    assert evidence_line(record).text == words and evidence_line(record).kind == record.kind


@pytest.mark.parametrize(("record", "words"), WHY, ids=[f"{r.reason}-{i}" for i, (r, _) in enumerate(WHY)])
def test_why_not_words(record: WhyNot, words: str):
    assert reason_text(record) == words
    back = part_from_json(WhyNot, json.loads(json.dumps(to_json(record))))
    assert back == record and hash(back) == hash(record)


def test_a_why_not_joins_its_reasons_in_order():
    reasons = (WhyNot.of(W.SEPARATE_KERNEL, **RAN), WhyNot.of(W.NO_FUSION_LOG))
    assert why_not_text(reasons) == ("gelu left in a separate kernel (triton_poi_fused_gelu_0); no fusion log was "
                                     "captured to say why (TORCH_LOGS=fusion shows Inductor's fusion decisions)")
    assert why_not_text(()) == ""


def test_a_code_without_words_prints_its_code_and_facts():
    # a newer kernelscope's code: said as recorded, not dropped, not an error
    assert evidence_text(Evidence("dataflow.new-rule", "code", "", {"op": "gelu", "kernels": ("k1", "k2")})) == \
        "[dataflow.new-rule] op=gelu, kernels=k1, k2"
    assert reason_text(WhyNot("new-reason")) == "[new-reason]"


def test_a_rule_gives_its_kind_and_drops_facts_not_known():
    e = Evidence.of(R.LAUNCH_ORDER_RAN_AS, "g.py:1", site="s", kernels=["k"], region="r", op=None)
    assert (e.rule, e.kind, e.family, e.facts) == ("launch-order.ran-as", "trace", "launch-order",
                                                   {"site": "s", "kernels": ("k",), "region": "r"})


def test_analysis_records_round_trip_through_result_json():
    # GIVEN a recorded max-autotune mode (autotune tables, fusion benchmarks, marginal decisions)
    root = DATA / "h200-torch2.14.1-kernelscope-run" / "seed-bf16"
    cap = json.loads((root / "modes" / "max-autotune_ATEN-TRITON-NVGEMM" / "capture.json").read_text())
    gemms = build_mode_result(root, cap).gemms
    assert gemms and all(g.evidence for g in gemms) and any(g.why_not for g in gemms)
    # WHEN written as JSON and read back THEN every record is equal, and says the same words
    for g in gemms:
        back = part_from_json(GemmEpilogue, json.loads(json.dumps(to_json(g))))
        assert back == g
        assert [evidence_text(e) for e in back.evidence] == [evidence_text(e) for e in g.evidence]
        assert all(e.rule in EVIDENCE_WORDS for e in g.evidence) and all(r.reason in WHY_NOT_WORDS for r in g.why_not)


RESULTS = sorted(DATA.rglob("result.json"))


@pytest.mark.parametrize("path", RESULTS, ids=[str(p.relative_to(DATA).parent) for p in RESULTS])
def test_a_recorded_result_prints_its_sentences_as_written(path: Path):
    # GIVEN a result.json written with sentences (/1 and /2: evidence {kind, text, where} or a bare string, why_not
    # one string) WHEN it is loaded THEN each is a legacy record that prints exactly as written
    raw = json.loads(path.read_text())
    result = load_result(path)
    points = [raw, *raw.get("points", ())]
    loaded = [result, *result.points]
    for raw_part, part in zip(points, loaded):
        for raw_mode, mode in zip(raw_part["modes"], part.modes):
            for raw_g, g in zip(raw_mode.get("gemms", ()), mode.gemms):
                texts = [e if isinstance(e, str) else e["text"] for e in raw_g["evidence"]]
                assert [evidence_text(e) for e in g.evidence] == texts
                assert all(e.rule == "legacy" for e in g.evidence)
                assert why_not_text(g.why_not) == raw_g["why_not"]
                wheres = [e.get("where", "") if isinstance(e, dict) else "" for e in raw_g["evidence"]]
                assert [e.where for e in g.evidence] == wheres
