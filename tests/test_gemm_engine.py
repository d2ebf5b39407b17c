"""The GEMM engine on real recorded models: verdicts follow the wrapper's call sites and buffers, and the
kernels' bodies, never kernel names.

Fixtures: tests/data/cpu-torch2.14.1 (2-core VM, torch 2.14.1; the README there lists, per GEMM, what the output code
shows) and tests/data/h200-torch2.11-real-models (one H200, torch 2.11.0+cu130, bf16; recorded by
`kernelscope profile` through ../shared/tools/device_batch.py). The table below was read against the output code:

* llama_block (2 identical decoder layers): one kernel definition serves both layers (``*_mul_silu_2`` launched at
  two call sites): each layer's gate_proj gets silu and the mul, each up_proj the mul (class 1: reused kernels,
  class 2: one kernel reading two GEMMs). The residual add before each RMSNorm is the o_proj / down_proj epilogue
  in every mode, eager included; the norm's pow/mean belong to the norm (class 4). Module paths come from the
  profiler ranges (eager) and TORCH_LOGS=graph_code (compiled); C++ templates, whose call sites carry no
  comment, take the graph's GEMM nodes in order.
* bert_layer: addmm's bias is in the GEMM call (cuBLASLt's bias epilogue on the H200; on the CPU a copy of the
  bias that the GEMM accumulates onto: one reading in every path). With freezing on the CPU, _mkl_linear takes
  no bias: the bias adds run in separate kernels (one kernel adds q/k/v's three biases in place).
* pool_attention: where the epilogue ends (class 4): the conv outputs' pooling kernels read a window of several
  elements (max of 4 neighbours, sum of 4 then / 4): pooling is no epilogue op, so conv1 keeps bias + relu and
  conv2 the bias in every mode, eager included; the softmax after bmm(q, k^T) ends that chain after the scale mul,
  SDPA and the bmm end q/k/v's. The compiled bmm carry no module path (graph_code names no parameter for them).
* conv_bn_relu: convolutions are GEMM-class ops with implicit-GEMM M/N/K (M = 8*56*56 = 25088, N = 64,
  K = 64*3*3 = 576 on the H200): eval BatchNorm + ReLU run after cuDNN's conv in a Triton kernel; on the CPU
  freezing folds BN into the conv and oneDNN applies ReLU (and the residual add) as post-ops (class 6).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelscope import vocab
from kernelscope.analysis.gemm import analyze_gemms
from kernelscope.analysis.gemm.body import parse_cpp, parse_triton, pool_windows, walk
from kernelscope.analysis.gemm.coverage import compare_with_eager
from kernelscope.analysis.kernels import analyze_kernels
from kernelscope.analysis.mode import build_mode_result
from kernelscope.inductor_code import load_output_code
from kernelscope.report.evidence_words import evidence_text
from kernelscope.report.words import say, say_all
from kernelscope.result import GemmCoverage, ModeResult

from .zoo_fixtures import extract_run, zoo_run

ROOT = Path(__file__).parent.parent

EXPECTED = [
    ('tests/data/cpu-torch2.14.1/conv_bn_relu', 'default', 'GEMMs 2: fused 2', [
        ('conv1', 'convolution', 'MKL/oneDNN', 'fused', ('bias', 'relu'), ()),
        ('conv2', 'convolution', 'MKL/oneDNN', 'fused', ('bias', 'add', 'relu'), ()),
    ]),
    ('tests/data/cpu-torch2.14.1/conv_bn_relu', 'eager', 'GEMMs 2: unfused 2', [
        ('conv1', 'convolution', 'MKL/oneDNN', 'unfused', (), ('batch_norm', 'relu')),
        ('conv2', 'convolution', 'MKL/oneDNN', 'unfused', (), ('batch_norm', 'add', 'relu')),
    ]),
    ('tests/data/cpu-torch2.14.1/conv_bn_relu', 'max-autotune', 'GEMMs 2: fused 2', [
        ('conv1', 'convolution', 'MKL/oneDNN', 'fused', ('bias', 'relu'), ()),
        ('conv2', 'convolution', 'MKL/oneDNN', 'fused', ('bias', 'add', 'relu'), ()),
    ]),
    # torchvision ResNet-18, bf16, 64 px, batch 2 (tests/data/cpu-torch2.14.1/tv_resnet18_bf16, README there), read
    # from modes/default/code/graph_0.py. Freezing folds each BN into its conv: every extern_kernels.convolution
    # takes a bias (_frozen_param301 ... 339: in the call). conv1 (674): ReLU runs on each of the 9 neighbours of
    # max_pool2d(3, 2, 1) in cpp_fused_max_pool2d_with_indices_relu_1 (679): a masked load in a lambda, then
    # `tmp16 = at::vec::clamp_min(tmp15, decltype(tmp15)(0));` (164) before `tmp29 = at::vec::maximum(tmp17,
    # tmp28);` (184): the ReLU is conv1's epilogue (before: lost in the lambda, "fused (bias)"). Each block's conv1:
    # cpp_fused_relu_{2,4,6,8} in place (`tmp2 = at::vec::clamp_min(...)`, 313, 385, 457, 529); conv2 (and the
    # downsample conv, whose output is the other operand): cpp_fused_add_relu_{3,5,7,9} (`tmp4 = tmp1 + tmp3;`,
    # then clamp_min: 350-351, 422-423, 494-495, 566-567). layer4.1.conv2 (817): cpp_fused_add_mean_relu_10 (822)
    # adds layer4.0's output (buf33) and ReLUs each of the 4 pixels (`tmp4 = tmp1 + tmp3;` 613, clamp_min 614), then
    # sums them (`tmp14 = tmp6 + tmp13;` 621, ..., 633) and divides by 4 (636): the mean's sum is a window, past the
    # boundary (before: "add, relu, add, div"). fc: extern_kernels.addmm (828) with the bias as C.
    ('tests/data/cpu-torch2.14.1/tv_resnet18_bf16.tar.gz', 'default', 'GEMMs 21: fused 1, partial 20', [
        ('conv1', 'convolution', 'ATen CPU', 'partial', ('bias',), ('relu',)),
        *[(f'layer{i}.{j}.{c}', 'convolution', 'ATen CPU', 'partial', ('bias',), ops)
          for i in range(1, 5) for j in range(2)
          for c, ops in (('conv1', ('relu',)), ('conv2', ('add', 'relu')),
                         *((('downsample.0', ('add', 'relu')),) if i > 1 and j == 0 else ()))],
        ('fc', 'addmm', 'ATen CPU', 'fused', ('bias',), ()),
    ]),
    # eager: BN is not folded (aten::native_batch_norm after aten::_slow_conv2d_forward), ReLU is aten::clamp_min_,
    # the residual aten::add_; aten::max_pool2d and aten::adaptive_avg_pool2d end the chains
    ('tests/data/cpu-torch2.14.1/tv_resnet18_bf16.tar.gz', 'eager', 'GEMMs 21: fused 1, unfused 20', [
        ('conv1', 'convolution', 'ATen CPU', 'unfused', (), ('batch_norm', 'relu')),
        *[(f'layer{i}.{j}.{c}', 'convolution', 'ATen CPU', 'unfused', (), ops)
          for i in range(1, 5) for j in range(2)
          for c, ops in (('conv1', ('batch_norm', 'relu')), ('conv2', ('batch_norm', 'add', 'relu')),
                         *((('downsample.0', ('batch_norm', 'add', 'relu')),) if i > 1 and j == 0 else ()))],
        ('fc', 'addmm', 'ATen CPU', 'fused', ('bias',), ()),
    ]),
    # pool_attention, read from modes/<mode>/code/graph_0.py (tests/data/cpu-torch2.14.1/README.md has the table)
    ('tests/data/cpu-torch2.14.1/pool_attention', 'default', 'GEMMs 8: fused 2, unfused 6', [
        # _convolution_pointwise(buf1, W, buf0, ..., 'relu') (594): bias operand + relu post-op; the max of 4 loads
        # in cpp_fused_max_pool2d_with_indices_1 (603, body 167-169) is the pool, no epilogue op
        ('conv1', 'convolution', 'MKL/oneDNN', 'fused', ('bias', 'relu'), ()),
        # _convolution_pointwise(buf4, W, b, ..., 'none') (607); cpp_fused_avg_pool2d_2 (615) sums 4 loads, / 4
        ('conv2', 'convolution', 'MKL/oneDNN', 'fused', ('bias',), ()),
        # _mkl_linear(..., None, 32) (619); cpp_fused__unsafe_view_add_gelu_3(buf9, b) (624): tmp2 = tmp0 + tmp1
        # (251), erf (258)
        ('proj', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('bias', 'gelu')),
        # _mkl_linear (627, 634, 641); one cpp_fused__unsafe_view_add_addmm_gelu_view_4 definition adds each bias
        # in place at its own call site (631, 638, 645; 299); then SDPA (648) and the bmm copies
        ('attn.q', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('bias',)),
        ('attn.k', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('bias',)),
        ('attn.v', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('bias',)),
        # extern_kernels.bmm (661); the softmax kernel _6 (670) computes tmp12 = tmp2 * tmp10 (x * 0.25, 469),
        # then its max/sum reductions end the chain
        ('', 'bmm', 'ATen CPU', 'unfused', (), ('mul',)),
        # extern_kernels.bmm (679); cpp_fused_add_transpose_view_7(buf30, buf29) (684): SDPA out + bmm out (555)
        ('', 'bmm', 'ATen CPU', 'unfused', (), ('add',)),
    ]),
    ('tests/data/cpu-torch2.14.1/pool_attention', 'eager', 'GEMMs 8: fused 4, partial 1, unfused 3', [
        # aten::mkldnn_convolution with the bias operand ([8], [16]): in the conv call; aten::relu separate;
        # aten::max_pool2d / aten::avg_pool2d end the chains
        ('conv1', 'convolution', 'MKL/oneDNN', 'partial', ('bias',), ('relu',)),
        ('conv2', 'convolution', 'MKL/oneDNN', 'fused', ('bias',), ()),
        # the tokens are a transposed view: aten::linear runs aten::mm, then its own aten::add_ for the bias
        ('proj', 'mm', 'ATen CPU', 'unfused', (), ('bias', 'gelu')),
        # aten::linear > aten::addmm (bias copied into the output, beta=1)
        ('attn.q', 'addmm', 'ATen CPU', 'fused', ('bias',), ()),
        ('attn.k', 'addmm', 'ATen CPU', 'fused', ('bias',), ()),
        ('attn.v', 'addmm', 'ATen CPU', 'fused', ('bias',), ()),
        # aten::bmm, aten::mul (the scale), aten::softmax ends it; aten::bmm, aten::add (+ SDPA's), graph output
        ('attn', 'bmm', 'ATen CPU', 'unfused', (), ('mul',)),
        ('attn', 'bmm', 'ATen CPU', 'unfused', (), ('add',)),
    ]),
    ('tests/data/cpu-torch2.14.1/pool_attention', 'max-autotune', 'GEMMs 8: fused 6, unfused 2', [
        # convs and bmm as in default (1347, 1360; bmm 1402, 1420; softmax _6 1411, add _7 1425)
        ('conv1', 'convolution', 'MKL/oneDNN', 'fused', ('bias', 'relu'), ()),
        ('conv2', 'convolution', 'MKL/oneDNN', 'fused', ('bias',), ()),
        # template cpp_fused__unsafe_view_add_avg_pool2d_gelu_mm_transpose_view_3 (1372): epilogue bias (613) and
        # erf (620) stored to Y; its avg_pool2d is its input's
        ('proj', 'mm', 'Inductor C++ template', 'fused', ('bias', 'gelu'), ()),
        # template cpp_fused__unsafe_view_add_addmm_gelu_view_4, 3 call sites (1377, 1381, 1385): bias (1041)
        ('attn.q', 'addmm', 'Inductor C++ template', 'fused', ('bias',), ()),
        ('attn.k', 'addmm', 'Inductor C++ template', 'fused', ('bias',), ()),
        ('attn.v', 'addmm', 'Inductor C++ template', 'fused', ('bias',), ()),
        ('', 'bmm', 'ATen CPU', 'unfused', (), ('mul',)),
        ('', 'bmm', 'ATen CPU', 'unfused', (), ('add',)),
    ]),
    ('tests/data/cpu-torch2.14.1/pool_attention', 'max-autotune:CPP', 'GEMMs 8: fused 6, unfused 2', [
        ('conv1', 'convolution', 'MKL/oneDNN', 'fused', ('bias', 'relu'), ()),
        ('conv2', 'convolution', 'MKL/oneDNN', 'fused', ('bias',), ()),
        ('proj', 'mm', 'Inductor C++ template', 'fused', ('bias', 'gelu'), ()),
        ('attn.q', 'addmm', 'Inductor C++ template', 'fused', ('bias',), ()),
        # k's copies in _5 (2421), one a transpose_mxn through a local tile, compute nothing
        ('attn.k', 'addmm', 'Inductor C++ template', 'fused', ('bias',), ()),
        ('attn.v', 'addmm', 'Inductor C++ template', 'fused', ('bias',), ()),
        # C++ bmm templates (const int64_t B = 4; no epilogue code): _6 (2426) then the softmax _7 (2435,
        # tmp12 = tmp2 * tmp10 at 1746); _8 (2443) then cpp_fused_add_transpose_view_9 (2448)
        ('', 'bmm', 'Inductor C++ template', 'unfused', (), ('mul',)),
        ('', 'bmm', 'Inductor C++ template', 'unfused', (), ('add',)),
    ]),
    ('tests/data/cpu-torch2.14.1/bert_layer', 'default', 'GEMMs 6: unfused 6', [
        ('attention.self.query', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('bias',)),
        ('attention.self.key', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('bias',)),
        ('attention.self.value', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('bias',)),
        ('attention.output.dense', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('bias', 'add')),
        ('intermediate.dense', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('bias', 'gelu')),
        ('output.dense', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('bias', 'add')),
    ]),
    ('tests/data/cpu-torch2.14.1/bert_layer', 'eager', 'GEMMs 6: fused 3, partial 3', [
        ('attention.self.query', 'addmm', 'ATen CPU', 'fused', ('bias',), ()),
        ('attention.self.key', 'addmm', 'ATen CPU', 'fused', ('bias',), ()),
        ('attention.self.value', 'addmm', 'ATen CPU', 'fused', ('bias',), ()),
        ('attention.output.dense', 'addmm', 'ATen CPU', 'partial', ('bias',), ('add',)),
        ('intermediate.dense', 'addmm', 'ATen CPU', 'partial', ('bias',), ('gelu',)),
        ('output.dense', 'addmm', 'ATen CPU', 'partial', ('bias',), ('add',)),
    ]),
    ('tests/data/cpu-torch2.14.1/bert_layer', 'max-autotune', 'GEMMs 6: fused 3, unfused 3', [
        ('attention.self.query', 'addmm', 'Inductor C++ template', 'fused', ('bias',), ()),
        ('attention.self.key', 'addmm', 'Inductor C++ template', 'fused', ('bias',), ()),
        ('attention.self.value', 'addmm', 'Inductor C++ template', 'fused', ('bias',), ()),
        ('attention.output.dense', 'addmm', 'Inductor C++ template', 'unfused', (), ('bias', 'add')),
        ('intermediate.dense', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('bias', 'gelu')),
        ('output.dense', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('bias', 'add')),
    ]),
    ('tests/data/cpu-torch2.14.1/llama_block', 'default', 'GEMMs 14: unfused 8, none 6', [
        ('layers.0.self_attn.q_proj', '_mkl_linear', 'MKL/oneDNN', 'none', (), ()),
        ('layers.0.self_attn.k_proj', '_mkl_linear', 'MKL/oneDNN', 'none', (), ()),
        ('layers.0.self_attn.v_proj', '_mkl_linear', 'MKL/oneDNN', 'none', (), ()),
        ('layers.0.self_attn.o_proj', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('add',)),
        ('layers.0.mlp.gate_proj', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('silu', 'mul')),
        ('layers.0.mlp.up_proj', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('mul',)),
        ('layers.0.mlp.down_proj', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('add',)),
        ('layers.1.self_attn.q_proj', '_mkl_linear', 'MKL/oneDNN', 'none', (), ()),
        ('layers.1.self_attn.k_proj', '_mkl_linear', 'MKL/oneDNN', 'none', (), ()),
        ('layers.1.self_attn.v_proj', '_mkl_linear', 'MKL/oneDNN', 'none', (), ()),
        ('layers.1.self_attn.o_proj', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('add',)),
        ('layers.1.mlp.gate_proj', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('silu', 'mul')),
        ('layers.1.mlp.up_proj', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('mul',)),
        ('layers.1.mlp.down_proj', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('add',)),
    ]),
    ('tests/data/cpu-torch2.14.1/llama_block', 'eager', 'GEMMs 14: unfused 8, none 6', [
        ('layers.0.self_attn.q_proj', 'mm', 'ATen CPU', 'none', (), ()),
        ('layers.0.self_attn.k_proj', 'mm', 'ATen CPU', 'none', (), ()),
        ('layers.0.self_attn.v_proj', 'mm', 'ATen CPU', 'none', (), ()),
        ('layers.0.self_attn.o_proj', 'mm', 'ATen CPU', 'unfused', (), ('add',)),
        ('layers.0.mlp.gate_proj', 'mm', 'ATen CPU', 'unfused', (), ('silu', 'mul')),
        ('layers.0.mlp.up_proj', 'mm', 'ATen CPU', 'unfused', (), ('mul',)),
        ('layers.0.mlp.down_proj', 'mm', 'ATen CPU', 'unfused', (), ('add',)),
        ('layers.1.self_attn.q_proj', 'mm', 'ATen CPU', 'none', (), ()),
        ('layers.1.self_attn.k_proj', 'mm', 'ATen CPU', 'none', (), ()),
        ('layers.1.self_attn.v_proj', 'mm', 'ATen CPU', 'none', (), ()),
        ('layers.1.self_attn.o_proj', 'mm', 'ATen CPU', 'unfused', (), ('add',)),
        ('layers.1.mlp.gate_proj', 'mm', 'ATen CPU', 'unfused', (), ('silu', 'mul')),
        ('layers.1.mlp.up_proj', 'mm', 'ATen CPU', 'unfused', (), ('mul',)),
        ('layers.1.mlp.down_proj', 'mm', 'ATen CPU', 'unfused', (), ('add',)),
    ]),
    ('tests/data/cpu-torch2.14.1/llama_block', 'max-autotune', 'GEMMs 14: fused 2, unfused 6, none 6', [
        ('layers.0.self_attn.q_proj', 'mm', 'Inductor C++ template', 'none', (), ()),
        ('layers.0.self_attn.k_proj', 'mm', 'Inductor C++ template', 'none', (), ()),
        ('layers.0.self_attn.v_proj', 'mm', 'Inductor C++ template', 'none', (), ()),
        ('layers.0.self_attn.o_proj', 'mm', 'Inductor C++ template', 'unfused', (), ('add',)),
        ('layers.0.mlp.gate_proj', 'mm', 'Inductor C++ template', 'unfused', (), ('silu', 'mul')),
        ('layers.0.mlp.up_proj', 'mm', 'Inductor C++ template', 'fused', ('mul',), ()),
        ('layers.0.mlp.down_proj', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('add',)),
        ('layers.1.self_attn.q_proj', 'mm', 'Inductor C++ template', 'none', (), ()),
        ('layers.1.self_attn.k_proj', 'mm', 'Inductor C++ template', 'none', (), ()),
        ('layers.1.self_attn.v_proj', 'mm', 'Inductor C++ template', 'none', (), ()),
        ('layers.1.self_attn.o_proj', 'mm', 'Inductor C++ template', 'unfused', (), ('add',)),
        ('layers.1.mlp.gate_proj', 'mm', 'Inductor C++ template', 'unfused', (), ('silu', 'mul')),
        ('layers.1.mlp.up_proj', 'mm', 'Inductor C++ template', 'fused', ('mul',), ()),
        ('layers.1.mlp.down_proj', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('add',)),
    ]),
    ('tests/data/cpu-torch2.14.1/llama_block', 'max-autotune:CPP', 'GEMMs 14: fused 3, unfused 5, none 6', [
        ('layers.0.self_attn.q_proj', 'mm', 'Inductor C++ template', 'none', (), ()),
        ('layers.0.self_attn.k_proj', 'mm', 'Inductor C++ template', 'none', (), ()),
        ('layers.0.self_attn.v_proj', 'mm', 'Inductor C++ template', 'none', (), ()),
        # o_proj's residual add runs in the RMSNorm's kernel (cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_2) and
        # again in down_proj's template, which sums the whole residual stream (`tmp2 = tmp0 + tmp1;`, 1873): one op
        ('layers.0.self_attn.o_proj', 'mm', 'Inductor C++ template', 'unfused', (), ('add',)),
        ('layers.0.mlp.gate_proj', 'mm', 'Inductor C++ template', 'unfused', (), ('silu', 'mul')),
        ('layers.0.mlp.up_proj', 'mm', 'Inductor C++ template', 'fused', ('mul',), ()),
        ('layers.0.mlp.down_proj', 'mm', 'Inductor C++ template', 'unfused', (), ('add',)),
        ('layers.1.self_attn.q_proj', 'mm', 'Inductor C++ template', 'none', (), ()),
        ('layers.1.self_attn.k_proj', 'mm', 'Inductor C++ template', 'none', (), ()),
        ('layers.1.self_attn.v_proj', 'mm', 'Inductor C++ template', 'none', (), ()),
        ('layers.1.self_attn.o_proj', 'mm', 'Inductor C++ template', 'unfused', (), ('add',)),
        ('layers.1.mlp.gate_proj', 'mm', 'Inductor C++ template', 'unfused', (), ('silu', 'mul')),
        ('layers.1.mlp.up_proj', 'mm', 'Inductor C++ template', 'fused', ('mul',), ()),
        # the residual add in the template's epilogue (`tmp8 = tmp6 + tmp7;`, 1876); then the final RMSNorm,
        # cpp_fused_add_mean_mul_pow_rsqrt_9 (2082), reads Y through `auto in_ptr0 = in_out_ptr0;`: x * x into
        # tmp_acc0 (1934-1935) and `tmp9 = tmp1 * tmp8;` / `tmp10 = tmp0 * tmp9;` (x * rsqrt(mean) * w, 1956-1957)
        # past the mean. This read 'partial' with those two muls unfused while the alias went unread.
        ('layers.1.mlp.down_proj', 'mm', 'Inductor C++ template', 'fused', ('add',), ()),
    ]),
    # GEMM + reduction (tests/data/cpu-torch2.14.1/README.md has the lines): the bias add before the reduction is an
    # unfused epilogue op when freezing or the C++ template leaves it to the reduction's kernel; the norm, softmax
    # and max, and everything mixed with their statistics, are past the boundary
    # groupnorm_hardtanh: `tmp2 = tmp0 + tmp1` (77) into the mean's `tmp_acc0_vec = tmp_acc0_vec + tmp2` (78);
    # max_sub_gelu: `tmp2 = tmp0 + tmp1` (66) only feeds `tmp_acc0_vec = at::vec::maximum(tmp_acc0_vec, tmp2)` (67)
    *[(f'tests/data/cpu-torch2.14.1/{model}.tar.gz', mode, summary, [('gemm', *row)])
      for model in ('kb_gemm_groupnorm_hardtanh', 'kb_gemm_max_sub_gelu')
      for mode, summary, row in (
          ('default', 'GEMMs 1: unfused 1', ('_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('bias',))),
          ('eager', 'GEMMs 1: fused 1', ('addmm', 'ATen CPU', 'fused', ('bias',), ())),
          ('max-autotune', 'GEMMs 1: unfused 1', ('addmm', 'Inductor C++ template', 'unfused', (), ('bias',))))],
    # bias (87), folded eval BN as sub, mul, mul, add (88-91), the scale (143, 151) before the softmax's max
    *[('tests/data/cpu-torch2.14.1/kb_gemm_bn_scale_softmax.tar.gz', mode, f'GEMMs 1: {verdict} 1',
       [('gemm', op, backend, verdict, fused, unfused)])
      for mode, op, backend, verdict, fused, unfused in (
          ('default', '_mkl_linear', 'MKL/oneDNN', 'unfused', (), ('bias', 'sub', 'mul', 'mul', 'add', 'mul')),
          ('eager', 'addmm', 'ATen CPU', 'partial', ('bias',), ('batch_norm', 'mul')),
          ('max-autotune', 'addmm', 'Inductor C++ template', 'unfused', (), ('bias', 'sub', 'mul', 'mul', 'add',
                                                                           'mul')))],
    ('tests/data/h200-torch2.11-real-models/conv_bn_relu', 'default', 'GEMMs 2: unfused 2', [
        ('conv1', 'convolution', 'cuDNN', 'unfused', (), ('batch_norm', 'relu')),
        ('conv2', 'convolution', 'cuDNN', 'unfused', (), ('batch_norm', 'add', 'relu')),
    ]),
    ('tests/data/h200-torch2.11-real-models/conv_bn_relu', 'eager', 'GEMMs 2: unfused 2', [
        ('conv1', 'convolution', 'cuDNN', 'unfused', (), ('batch_norm', 'relu')),
        ('conv2', 'convolution', 'cuDNN', 'unfused', (), ('batch_norm', 'add', 'relu')),
    ]),
    ('tests/data/h200-torch2.11-real-models/conv_bn_relu', 'max-autotune', 'GEMMs 2: unfused 2', [
        ('conv1', 'convolution', 'Triton template', 'unfused', (), ('batch_norm', 'relu')),
        ('conv2', 'convolution', 'Triton template', 'unfused', (), ('batch_norm', 'add', 'relu')),
    ]),
    ('tests/data/h200-torch2.11-real-models/bert_layer', 'default', 'GEMMs 6: fused 3, partial 3', [
        ('attention.self.query', 'addmm', 'cuBLASLt', 'fused', ('bias',), ()),
        ('attention.self.key', 'addmm', 'cuBLASLt', 'fused', ('bias',), ()),
        ('attention.self.value', 'addmm', 'cuBLASLt', 'fused', ('bias',), ()),
        ('attention.output.dense', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('add',)),
        ('intermediate.dense', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('gelu',)),
        ('output.dense', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('add',)),
    ]),
    ('tests/data/h200-torch2.11-real-models/bert_layer', 'eager', 'GEMMs 6: fused 3, partial 3', [
        ('attention.self.query', 'addmm', 'cuBLASLt', 'fused', ('bias',), ()),
        ('attention.self.key', 'addmm', 'cuBLASLt', 'fused', ('bias',), ()),
        ('attention.self.value', 'addmm', 'cuBLASLt', 'fused', ('bias',), ()),
        ('attention.output.dense', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('add',)),
        ('intermediate.dense', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('gelu',)),
        ('output.dense', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('add',)),
    ]),
    ('tests/data/h200-torch2.11-real-models/bert_layer', 'max-autotune', 'GEMMs 6: fused 3, partial 3', [
        ('attention.self.query', 'addmm', 'Triton template', 'fused', ('bias',), ()),
        ('attention.self.key', 'addmm', 'cuBLASLt', 'fused', ('bias',), ()),
        ('attention.self.value', 'addmm', 'cuBLASLt', 'fused', ('bias',), ()),
        ('attention.output.dense', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('add',)),
        ('intermediate.dense', 'addmm', 'Triton template', 'partial', ('bias',), ('gelu',)),
        ('output.dense', 'addmm', 'Triton template', 'partial', ('bias',), ('add',)),
    ]),
    ('tests/data/h200-torch2.11-real-models/llama_block', 'default', 'GEMMs 14: unfused 8, none 6', [
        ('layers.0.self_attn.q_proj', 'mm', 'cuBLASLt', 'none', (), ()),
        ('layers.0.self_attn.k_proj', 'mm', 'cuBLASLt', 'none', (), ()),
        ('layers.0.self_attn.v_proj', 'mm', 'cuBLASLt', 'none', (), ()),
        ('layers.0.self_attn.o_proj', 'mm', 'cuBLASLt', 'unfused', (), ('add',)),
        ('layers.0.mlp.gate_proj', 'mm', 'cuBLASLt', 'unfused', (), ('silu', 'mul')),
        ('layers.0.mlp.up_proj', 'mm', 'cuBLASLt', 'unfused', (), ('mul',)),
        ('layers.0.mlp.down_proj', 'mm', 'cuBLASLt', 'unfused', (), ('add',)),
        ('layers.1.self_attn.q_proj', 'mm', 'cuBLASLt', 'none', (), ()),
        ('layers.1.self_attn.k_proj', 'mm', 'cuBLASLt', 'none', (), ()),
        ('layers.1.self_attn.v_proj', 'mm', 'cuBLASLt', 'none', (), ()),
        ('layers.1.self_attn.o_proj', 'mm', 'cuBLASLt', 'unfused', (), ('add',)),
        ('layers.1.mlp.gate_proj', 'mm', 'cuBLASLt', 'unfused', (), ('silu', 'mul')),
        ('layers.1.mlp.up_proj', 'mm', 'cuBLASLt', 'unfused', (), ('mul',)),
        ('layers.1.mlp.down_proj', 'mm', 'cuBLASLt', 'unfused', (), ('add',)),
    ]),
    # recorded before the eager worker's kernelscope.flow ranges: the call order decides, and up_proj's GEMM
    # between the silu and the mul ends gate_proj's chain at silu (h200-torch2.11-provenance/llama_block, recorded
    # with the flow ranges, gives gate_proj silu and mul as the compiled code: tests/test_provenance.py)
    ('tests/data/h200-torch2.11-real-models/llama_block', 'eager', 'GEMMs 14: unfused 8, none 6', [
        ('layers.0.self_attn.q_proj', 'mm', 'cuBLASLt', 'none', (), ()),
        ('layers.0.self_attn.k_proj', 'mm', 'cuBLASLt', 'none', (), ()),
        ('layers.0.self_attn.v_proj', 'mm', 'cuBLASLt', 'none', (), ()),
        ('layers.0.self_attn.o_proj', 'mm', 'cuBLASLt', 'unfused', (), ('add',)),
        ('layers.0.mlp.gate_proj', 'mm', 'cuBLASLt', 'unfused', (), ('silu',)),
        ('layers.0.mlp.up_proj', 'mm', 'cuBLASLt', 'unfused', (), ('mul',)),
        ('layers.0.mlp.down_proj', 'mm', 'cuBLASLt', 'unfused', (), ('add',)),
        ('layers.1.self_attn.q_proj', 'mm', 'cuBLASLt', 'none', (), ()),
        ('layers.1.self_attn.k_proj', 'mm', 'cuBLASLt', 'none', (), ()),
        ('layers.1.self_attn.v_proj', 'mm', 'cuBLASLt', 'none', (), ()),
        ('layers.1.self_attn.o_proj', 'mm', 'cuBLASLt', 'unfused', (), ('add',)),
        ('layers.1.mlp.gate_proj', 'mm', 'cuBLASLt', 'unfused', (), ('silu',)),
        ('layers.1.mlp.up_proj', 'mm', 'cuBLASLt', 'unfused', (), ('mul',)),
        ('layers.1.mlp.down_proj', 'mm', 'cuBLASLt', 'unfused', (), ('add',)),
    ]),
    ('tests/data/h200-torch2.11-real-models/llama_block', 'max-autotune', 'GEMMs 14: unfused 8, none 6', [
        ('layers.0.self_attn.q_proj', 'mm', 'Triton template', 'none', (), ()),
        ('layers.0.self_attn.k_proj', 'mm', 'Triton template', 'none', (), ()),
        ('layers.0.self_attn.v_proj', 'mm', 'Triton template', 'none', (), ()),
        ('layers.0.self_attn.o_proj', 'mm', 'Triton template', 'unfused', (), ('add',)),
        ('layers.0.mlp.gate_proj', 'mm', 'Triton template', 'unfused', (), ('silu', 'mul')),
        ('layers.0.mlp.up_proj', 'mm', 'Triton template', 'unfused', (), ('mul',)),
        ('layers.0.mlp.down_proj', 'mm', 'Triton template', 'unfused', (), ('add',)),
        ('layers.1.self_attn.q_proj', 'mm', 'Triton template', 'none', (), ()),
        ('layers.1.self_attn.k_proj', 'mm', 'Triton template', 'none', (), ()),
        ('layers.1.self_attn.v_proj', 'mm', 'Triton template', 'none', (), ()),
        ('layers.1.self_attn.o_proj', 'mm', 'Triton template', 'unfused', (), ('add',)),
        ('layers.1.mlp.gate_proj', 'mm', 'Triton template', 'unfused', (), ('silu', 'mul')),
        ('layers.1.mlp.up_proj', 'mm', 'Triton template', 'unfused', (), ('mul',)),
        ('layers.1.mlp.down_proj', 'mm', 'cuBLASLt', 'unfused', (), ('add',)),
    ]),
    ('tests/data/h200-torch2.11-real-models/mlp', 'default', 'GEMMs 3: partial 3', [
        ('fc1', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('gelu-tanh',)),
        ('fc2', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('silu',)),
        ('fc3', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('relu', 'add')),
    ]),
    ('tests/data/h200-torch2.11-real-models/mlp', 'eager', 'GEMMs 3: partial 3', [
        ('fc1', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('gelu',)),
        ('fc2', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('silu',)),
        ('fc3', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('relu', 'add')),
    ]),
    ('tests/data/h200-torch2.11-real-models/mlp', 'max-autotune', 'GEMMs 3: fused 1, partial 2', [
        ('fc1', 'addmm', 'Triton template', 'fused', ('bias', 'gelu-tanh'), ()),
        ('fc2', 'addmm', 'Triton template', 'partial', ('bias',), ('silu',)),
        ('fc3', 'addmm', 'Triton template', 'partial', ('bias',), ('relu', 'add')),
    ]),
    ('tests/data/h200-torch2.11-real-models/transformer_block', 'default', 'GEMMs 4: fused 1, partial 3', [
        ('qkv', 'addmm', 'cuBLASLt', 'fused', ('bias',), ()),
        ('proj', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('add',)),
        ('fc1', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('gelu',)),
        ('fc2', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('add',)),
    ]),
    ('tests/data/h200-torch2.11-real-models/transformer_block', 'eager', 'GEMMs 4: fused 1, partial 3', [
        ('qkv', 'addmm', 'cuBLASLt', 'fused', ('bias',), ()),
        ('proj', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('add',)),
        ('fc1', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('gelu',)),
        ('fc2', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('add',)),
    ]),
    ('tests/data/h200-torch2.11-real-models/transformer_block', 'max-autotune', 'GEMMs 4: fused 1, partial 3', [
        ('qkv', 'addmm', 'Triton template', 'fused', ('bias',), ()),
        ('proj', 'addmm', 'Triton template', 'partial', ('bias',), ('add',)),
        ('fc1', 'addmm', 'cuBLASLt', 'partial', ('bias',), ('gelu',)),
        ('fc2', 'addmm', 'Triton template', 'partial', ('bias',), ('add',)),
    ]),
]


_CACHE: dict[tuple[str, str], object] = {}


def mode_result(folder: str, mode: str):
    key = (folder, mode)
    if key not in _CACHE:
        d = extract_run(ROOT / folder) if folder.endswith(".tar.gz") else ROOT / folder
        cap = next(json.loads(p.read_text()) for p in d.glob("modes/*/capture.json")
                   if json.loads(p.read_text()).get("mode") == mode)
        _CACHE[key] = build_mode_result(d, cap)
    return _CACHE[key]


@pytest.mark.parametrize(("folder", "mode", "summary", "rows"), EXPECTED,
                         ids=[f"{Path(f).name.removesuffix('.tar.gz')}-{Path(f).parent.name.split('-')[0]}-{m}"
                              for f, m, _, _ in EXPECTED])
def test_real_model_verdicts(folder, mode, summary, rows):
    m = mode_result(folder, mode)
    assert m.gemm_summary == summary
    assert [(g.module, g.op, g.backend, g.verdict, g.fused, g.unfused) for g in m.gemms] == rows
    # every verdict carries typed evidence with a place to look
    for g in m.gemms:
        assert g.evidence and all(e.kind in ("code", "trace", "log", "provenance", "rule", "note") for e in g.evidence)


def test_eager_and_compiled_agree_on_the_epilogue_boundary():
    # The same rule in every path: the residual add before RMSNorm is an epilogue op, the norm ends the chain.
    for folder in ("tests/data/cpu-torch2.14.1/llama_block", "tests/data/h200-torch2.11-real-models/llama_block"):
        got = {mode: [(g.module, g.unfused) for g in mode_result(folder, mode).gemms if "o_proj" in g.module]
               for mode in ("eager", "default", "max-autotune")}
        assert got["eager"] == got["default"] == got["max-autotune"] == [
            ("layers.0.self_attn.o_proj", ("add",)), ("layers.1.self_attn.o_proj", ("add",))]


def test_reused_kernel_is_read_at_each_call_site():
    # triton_poi_fused__unsafe_view_mul_silu_2 is one definition launched for layer 0 (buf15, buf14) and layer 1:
    # each launch's own buffers say which GEMMs it reads.
    m = mode_result("tests/data/h200-torch2.11-real-models/llama_block", "default")
    gates = [g for g in m.gemms if g.module.endswith("gate_proj")]
    ups = [g for g in m.gemms if g.module.endswith("up_proj")]
    assert [g.unfused_kernels for g in gates] == [("triton_poi_fused__unsafe_view_mul_silu_2",)] * 2
    assert [g.unfused for g in gates] == [("silu", "mul")] * 2 and [g.unfused for g in ups] == [("mul",)] * 2
    sites = [[e.where for e in g.evidence if e.rule == "dataflow.separate-kernel" and e.facts["op"] == "silu"]
             for g in gates]
    assert len({s[0] for s in sites}) == 2  # two different call sites, one per layer


def test_identical_layers_are_grouped():
    m = mode_result("tests/data/h200-torch2.11-real-models/llama_block", "default")
    groups = {g.label: (g.count, g.summary) for g in m.gemm_groups}
    assert groups["layers.0-1.mlp.gate_proj"] == (2, "silu, mul unfused")
    assert groups["layers.0-1.self_attn.q_proj"] == (2, "no epilogue")
    # down_proj of the last layer is followed by the graph output: it differs and stands alone
    assert all(g.group for g in m.gemms)


def _gemm(i: int, module: str, *, verdict: str = "unfused", fused: tuple[str, ...] = (),
          unfused: tuple[str, ...] = ("mul",), n: int = 2816):
    from kernelscope.result import GemmEpilogue

    return GemmEpilogue(id=f"gemm{i}", kernels=("nvjet",), backend="cuBLASLt", m=512, n=n, k=1024, dtype="bfloat16",
                        time_us_per_iter=2.0, op="mm", fused=fused, unfused=unfused, verdict=verdict, module=module)


def test_a_layer_that_differs_names_its_group_and_how():
    # GIVEN 4 layers' up_proj, layer 2's mul fused, and two GEMMs without a module path (a trace alone)
    from kernelscope.analysis.gemm.summary import group_gemms

    gemms = [_gemm(i, f"layers.{i}.mlp.up_proj") for i in range(4)]
    gemms[2] = _gemm(2, "layers.2.mlp.up_proj", verdict="fused", fused=("mul",), unfused=())
    gemms += [_gemm(4, "", verdict="none", unfused=(), n=1024), _gemm(5, "", verdict="none", unfused=(), n=1024)]
    out, groups = group_gemms(gemms)
    # THEN every GEMM is in one group; layer 2 stands alone right after the group it differs from
    assert [(g.label, g.count, g.differs_from) for g in groups] == [
        ("layers.{0-1,3}.mlp.up_proj", 3, ""),
        ("layers.2.mlp.up_proj", 1, "layers.{0-1,3}.mlp.up_proj"),
        ("mm 512 × 1024 × 1024", 2, ""),
    ]
    assert groups[1].difference == ("verdict fused (theirs: unfused); fused mul (theirs: none); "
                                    "unfused none (theirs: mul)")
    assert [g.pattern for g in groups] == ["layers.#.mlp.up_proj", "layers.#.mlp.up_proj", "mm 512 × 1024 × 1024"]
    assert groups[0].time_us_per_iter == 6.0
    assert all(g.group for g in out)


def test_a_result_from_before_is_grouped_again():
    # result.json files written before every GEMM had a group (none for GEMMs without a module path, no pattern)
    from kernelscope.analysis.gemm.summary import group_gemms, mode_groups
    from kernelscope.result import GemmGroup

    gemms = [_gemm(i, f"layers.{i}.mlp.up_proj") for i in range(2)] + [_gemm(2, "", n=1024)]
    old = (GemmGroup("layers.0-1.mlp.up_proj", 2, ("gemm0", "gemm1"), "mm", "cuBLASLt", "unfused"),)
    assert mode_groups(gemms, old) == group_gemms(gemms)[1]
    assert mode_groups(gemms, ()) == group_gemms(gemms)[1]
    new = group_gemms(gemms)[1]
    assert mode_groups(gemms, new) == new  # a result written with every GEMM in a group is read as it is


def test_unfused_epilogues_say_what_they_cost():
    m = mode_result("tests/data/h200-torch2.11-real-models/conv_bn_relu", "default")
    cost = m.epilogue_cost
    assert cost is not None and cost.kernels == 2 and cost.of_kernels == 7
    assert 0 < cost.pct_time < 100 and cost.time_us_per_iter > 0
    conv1 = m.gemms[0]
    assert [c.op for c in conv1.costs] == ["batch_norm", "relu"]
    # the round trip of conv1's bf16 output: 25088 x 64 x 2 bytes written and read back
    assert conv1.costs[0].bytes_per_iter == 2 * 25088 * 64 * 2
    assert conv1.costs[0].time_us_per_iter > 0


def test_names_are_not_computation():
    # cpp_fused_add_mean_mm_mul_pow_rsqrt_view_1 (q/k/v of llama on the CPU) lists add, mean, mul, pow, rsqrt
    # from the RMSNorm whose output it reads: its body after the micro-GEMM computes nothing, so no epilogue.
    m = mode_result("tests/data/cpu-torch2.14.1/llama_block", "max-autotune")
    q = m.gemms[0]
    assert q.module == "layers.0.self_attn.q_proj" and q.verdict == "none" and q.epilogue == ()


def test_conv_m_n_k_and_cudnn_label():
    for mode in ("eager", "default"):
        g = mode_result("tests/data/h200-torch2.11-real-models/conv_bn_relu", mode).gemms[0]
        assert (g.kind, g.op, g.m, g.n, g.k, g.backend) == ("conv", "convolution", 25088, 64, 576, "cuDNN")


# --- kernel bodies ------------------------------------------------------------------------------------------

GELU_TANH = '''
def k(in_out_ptr0, XBLOCK : tl.constexpr):
    tmp0 = tl.load(in_out_ptr0 + (x0), None).to(tl.float32)
    tmp1 = tl.full([1], 0.5, tl.float32)
    tmp2 = tmp0 * tmp1
    tmp3 = tmp0 * tmp0
    tmp4 = tmp3 * tmp0
    tmp5 = tl.full([1], 0.044715, tl.float32)
    tmp6 = tmp4 * tmp5
    tmp7 = tmp0 + tmp6
    tmp8 = tl.full([1], 0.7978845608028654, tl.float32)
    tmp9 = tmp7 * tmp8
    tmp10 = libdevice.tanh(tmp9)
    tmp11 = tl.full([1], 1.0, tl.float32)
    tmp12 = tmp10 + tmp11
    tmp13 = tmp2 * tmp12
    tl.store(in_out_ptr0 + (x0), tmp13, None)
'''

SILU_SIGMOID_AND_RELU = '''
def k(in_out_ptr0, in_ptr0, XBLOCK : tl.constexpr):
    tmp0 = tl.load(in_out_ptr0 + (x0), None).to(tl.float32)
    tmp1 = tl.load(in_ptr0 + (x1), None).to(tl.float32)
    tmp2 = tmp0 + tmp1
    tmp3 = tl.sigmoid(tmp2)
    tmp4 = tmp2 * tmp3
    tmp5 = tl.full([1], 0, tl.int32)
    tmp6 = triton_helpers.maximum(tmp5, tmp4)
    tl.store(in_out_ptr0 + (x0), tmp6, None)
'''

CPP_SILU = '''
extern "C"  void  kernel(float* in_out_ptr0, const float* in_ptr0)
{
    auto tmp0 = at::vec::Vectorized<float>::loadu(in_out_ptr0 + static_cast<int64_t>(x0), static_cast<int64_t>(16));
    auto tmp7 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x0), static_cast<int64_t>(16));
    auto tmp1 = tmp0.neg();
    auto tmp2 = tmp1.exp();
    auto tmp3 = static_cast<float>(1.0);
    auto tmp4 = at::vec::Vectorized<float>(tmp3);
    auto tmp5 = tmp2 + tmp4;
    auto tmp6 = tmp0 / tmp5;
    auto tmp8 = tmp6 * tmp7;
    tmp8.store(in_out_ptr0 + static_cast<int64_t>(x0));
}
'''


def test_gelu_tanh_form_is_one_op():
    b = parse_triton(GELU_TANH, "k", ["in_out_ptr0", "XBLOCK"])
    f = walk(b, b.loads_of(["in_out_ptr0"]))
    assert [o.label for o in f.ops] == ["gelu-tanh"] and f.outputs == ("in_out_ptr0",)


def test_bias_silu_relu_with_a_broadcast_row():
    b = parse_triton(SILU_SIGMOID_AND_RELU, "k", ["in_out_ptr0", "in_ptr0", "XBLOCK"])
    f = walk(b, b.loads_of(["in_out_ptr0"]), broadcast={"in_ptr0": True})
    assert [o.label for o in f.ops] == ["bias", "silu", "relu"]
    # the same add with a full-size operand is a residual add, not a bias
    f = walk(b, b.loads_of(["in_out_ptr0"]), broadcast={"in_ptr0": False})
    assert [o.label for o in f.ops] == ["add", "silu", "relu"]


def test_cpp_silu_as_x_over_one_plus_exp_and_swiglu_mul():
    b = parse_cpp(CPP_SILU, ["in_out_ptr0", "in_ptr0"])
    assert [o.label for o in walk(b, b.loads_of(["in_out_ptr0"])).ops] == ["silu", "mul"]
    assert [o.label for o in walk(b, b.loads_of(["in_ptr0"])).ops] == ["mul"]  # the up_proj side


# The C++ GEMM template's epilogue writes the sigmoid as one expression (hf_llama's gate_proj, max-autotune:CPP,
# torch 2.14.1 on the CPU)
CPP_SILU_ONE_EXPR = '''
extern "C" void kernel(const float* X, const float* W, bfloat16* Y)
{
    auto tmp0 = at::vec::Vectorized<float>::loadu(local_acc_buf + static_cast<int64_t>(x1 + Nc_blocks*Nr*x0), static_cast<int64_t>(16));
    auto tmp1 = decltype(tmp0)(1)/(decltype(tmp0)(1) + tmp0.neg().exp());
    auto tmp2 = tmp0 * tmp1;
    auto tmp3 = at::vec::convert<at::BFloat16>(tmp2);
    tmp3.store(Y + static_cast<int64_t>(n_start + x1 + 128L*m_start + 128L*x0), static_cast<int64_t>(16));
}
'''  # noqa: E501  (Inductor C++ as it prints it)


def test_cpp_sigmoid_in_one_expression_times_x_is_silu():
    b = parse_cpp(CPP_SILU_ONE_EXPR, ["X", "W", "Y"], after_micro_gemm=True)
    assert [o.label for o in walk(b, b.gemm_values).ops] == ["silu"]


def test_a_blocked_operand_cuts_the_chain():
    # an op that also reads a later GEMM's output belongs to that GEMM's epilogue
    b = parse_triton(SILU_SIGMOID_AND_RELU, "k", ["in_out_ptr0", "in_ptr0", "XBLOCK"])
    f = walk(b, b.loads_of(["in_out_ptr0"]), blocked=["in_ptr0"])
    assert f.ops == () and f.outputs == ()


def test_addmm_activation_fallback_runs_the_activation_separately():
    # torch._addmm_activation on the CPU (tests/models/addmm_activation.py): the bias goes into the GEMM call
    # (aten::copy_ then BLAS with beta=1), the GELU is a separate op aten::gelu_ (on the H200, cuBLASLt's
    # gelubias kernel applies both: tests/data/h200-torch2.11-kernelscope/addmm_activation).
    m = mode_result("tests/data/cpu-torch2.14.1/addmm_activation", "eager")
    (g,) = m.gemms
    assert (g.op, g.fused, g.unfused, g.unfused_kernels) == (
        "_addmm_activation", ("bias",), ("gelu",), ("aten::gelu_",))
    assert "[addmm-activation] aten::_addmm_activation fell back to a separate gelu kernel aten::gelu_" in \
        [evidence_text(e) for e in g.evidence]


def test_iterations_that_disagree_are_said():
    # tests/models/alternating.py takes GELU on odd calls and ReLU on even ones: the same kernel count per
    # iteration, other kernels. Iteration 0 (relu) is reported, and the difference is named.
    m = mode_result("tests/data/cpu-torch2.14.1/alternating", "eager")
    assert m.iterations.consistent is False and [n.code for n in m.iterations.notes][1:] == ["kernels-differ"]
    assert "different kernels" in say_all(m.iterations.notes)
    (g,) = m.gemms
    assert g.unfused == ("relu",)
    differs = [e for e in g.evidence if e.rule == "iterations.differ"]
    assert len(differs) == 1 and any("gelu unfused" in d for d in differs[0].facts["details"])
    assert evidence_text(differs[0]).startswith("[iterations] differs from iteration 0")


def test_autotune_tables_match_by_the_exact_selection_key():
    from kernelscope.analysis.gemm import table_matches

    assert table_matches("mm", "512x1024, 1024x2816", "mm", 512, 2816, 1024)
    assert not table_matches("mm", "2x128, 128x64", "mm", 32, 64, 128)  # no substring match: 2x128 is not 32x128
    assert not table_matches("mm", "1024x1024, 1024x1024", "mm", 1024, 1024, 512)
    assert table_matches("addmm", "16x4096, 16x4096, 4096x4096", "addmm", 16, 4096, 4096)  # bias first
    assert table_matches("packed_linear", "32x64, 1982689x1, 256x64", "_mkl_linear", 32, 256, 64)
    assert not table_matches("bmm", "8x32x64, 8x64x16", "mm", 32, 16, 64)
    assert table_matches("convolution", "8x64x56x56, 64x64x3x3", "convolution", 25088, 64, 576)


def test_identical_layers_share_the_autotune_table_that_ran():
    # llama on the H200, max-autotune: 14 GEMMs, 6 AUTOTUNE tables, two per selection key (Inductor benchmarked
    # each key again). Read from the output code: q_proj of layer 0 runs triton_tem_fused_add_mean_mm_..._1 with
    # BLOCK_N=32, num_stages=5 (the first 1024x1024 table's winner); k/v/o of layer 0 and q/k/v/o of layer 1 run
    # triton_tem_fused_mm_t_view_2 with BLOCK_N=128, num_stages=4 (the second table's winner); layer 1's
    # down_proj runs cuBLASLt's nvjet kernel: the second 2816x1024 table, whose winner is ATen's mm.
    from kernelscope.analysis.autotune import autotune_for_gemm, kernel_config, row_config

    m = mode_result("tests/data/h200-torch2.11-real-models/llama_block", "max-autotune")
    tables = [(a.sizes, a.winner_backend, a.gemms) for a in m.autotune]
    assert tables == [
        ("512x1024, 1024x1024", "Triton", ("gemm0",)),
        ("512x1024, 1024x1024", "Triton", ("gemm1", "gemm2", "gemm3", "gemm7", "gemm8", "gemm9", "gemm10")),
        ("512x1024, 1024x2816", "Triton", ("gemm4",)),
        ("512x1024, 1024x2816", "Triton", ("gemm5", "gemm11", "gemm12")),
        ("512x2816, 2816x1024", "Triton", ("gemm6",)),
        ("512x2816, 2816x1024", "ATen", ("gemm13",)),
    ]
    served = [gid for a in m.autotune for gid in a.gemms]
    assert sorted(served) == sorted(g.id for g in m.gemms)  # every GEMM has exactly one table
    codes = {k.name: k.source for c in _codes("tests/data/h200-torch2.11-real-models/llama_block", "max-autotune")
             for k in c.kernels}
    for g in m.gemms:
        a = autotune_for_gemm(m.autotune, g.id)
        assert a is not None and a.serves(g.id)
        win = next(c for c in a.choices if c.name == a.winner)
        if g.backend == "Triton template":  # the table's winner is the config that ran
            assert dict(row_config(win.detail)) == dict(kernel_config(codes[g.kernels[0]])), g.id
        else:
            assert a.winner_backend == "ATen", g.id
    assert dict(row_config("ACC_TYPE='tl.float32', ALLOW_TF32=False, BLOCK_K=128, BLOCK_M=64, BLOCK_N=32, "
                           "EVEN_K=True, GROUP_M=8, USE_FAST_ACCUM=False, num_stages=5, num_warps=4")) == {
        "BLOCK_M": 64, "BLOCK_N": 32, "BLOCK_K": 128, "GROUP_M": 8, "num_stages": 5, "num_warps": 4}
    assert row_config("mm 0.0101 ms 100.0%") == ()
    # BERT: q's table went to the Triton template that ran; k, v and o ran cuBLASLt: the ATen-won table
    m = mode_result("tests/data/h200-torch2.11-real-models/bert_layer", "max-autotune")
    assert [(a.winner_backend, a.gemms) for a in m.autotune][:2] == [
        ("Triton", ("gemm0",)), ("ATen", ("gemm1", "gemm2", "gemm3"))]


def _codes(folder: str, mode: str):
    from kernelscope.analysis.mode import load_codes

    d = ROOT / folder
    cap = next(json.loads(p.read_text()) for p in d.glob("modes/*/capture.json")
               if json.loads(p.read_text()).get("mode") == mode)
    return load_codes([d / p for p in cap.get("inductor_code") or ()])


def test_cpu_eager_counts_the_ops_that_do_work_once():
    # conv_bn_relu eager on the CPU: 2 convs, 2 batch norms, the residual add and 2 ReLUs; the resize_ and
    # as_strided_ nested in mkldnn_convolution are not kernels.
    m = mode_result("tests/data/cpu-torch2.14.1/conv_bn_relu", "eager")
    assert m.kernels_per_iter == 7
    assert {k.name: k.calls_per_iter for k in m.kernels} == {
        "aten::mkldnn_convolution": 2, "aten::native_batch_norm": 2, "aten::add": 1, "aten::clamp_min_": 2}
    # llama: RMSNorm's mean is one op (ATen runs it as sum then div_), its pow counts, addmm's bias copy does not
    m = mode_result("tests/data/cpu-torch2.14.1/llama_block", "eager")
    calls = {k.name: k.calls_per_iter for k in m.kernels}
    assert calls["aten::mean"] == 5 and calls["aten::pow"] == 5 and "aten::sum" not in calls
    assert "aten::fill_" not in calls and "aten::copy_" not in calls
    # BERT in eval: dropout returns its input and is no kernel
    m = mode_result("tests/data/cpu-torch2.14.1/bert_layer", "eager")
    assert "aten::dropout" not in {k.name for k in m.kernels}
    assert {k.name: k.calls_per_iter for k in m.kernels}["aten::addmm"] == 6


def test_backend_labels_come_from_the_launch_not_from_substrings():
    from kernelscope.analysis import patterns

    # an Inductor kernel named after the ATen ops it absorbed stays Triton
    assert patterns.classify("triton_poi_fused__scaled_dot_product_cudnn_attention_view_0") == ("pointwise", "Triton")
    assert patterns.classify("triton_per_fused__softmax_flash_attention_2")[1] == "Triton"
    # cuDNN's own kernels: SDPA, and convolutions as implicit GEMMs (H200, torch 2.11)
    assert patterns.classify("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3") == \
        ("attention", "cuDNN")
    assert patterns.classify("sm80_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc") == ("gemm", "cuDNN")


# --- where the epilogue ends --------------------------------------------------------------------------------

POOL = "tests/data/cpu-torch2.14.1/pool_attention"
POOL_MODES = ("eager", "default", "max-autotune", "max-autotune:CPP")
POOL_COMPILED = POOL_MODES[1:]


def _texts(g) -> list[str]:
    return [evidence_text(e) for e in g.evidence]


def _kernel_body(mode_dir: str, name: str):
    code = load_output_code(ROOT / POOL / "modes" / mode_dir / "code" / "graph_0.py")[0]
    kd = code.kernel(name)
    assert kd is not None, name
    return parse_cpp(kd.source, kd.params)


# A Triton max_pool2d(2) after conv + ReLU (Inductor's form: the ReLU on each of the 4 neighbours, then max).
TRITON_RELU_MAXPOOL = """
def k(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex % 8
    x1 = xindex // 8
    tmp0 = tl.load(in_ptr0 + (2*x0 + 32*x1), xmask).to(tl.float32)
    tmp1 = tl.full([1], 0, tl.int32)
    tmp2 = triton_helpers.maximum(tmp1, tmp0)
    tmp3 = tl.load(in_ptr0 + (1 + 2*x0 + 32*x1), xmask).to(tl.float32)
    tmp4 = triton_helpers.maximum(tmp1, tmp3)
    tmp5 = triton_helpers.maximum(tmp4, tmp2)
    tmp6 = tl.load(in_ptr0 + (16 + 2*x0 + 32*x1), xmask).to(tl.float32)
    tmp7 = triton_helpers.maximum(tmp1, tmp6)
    tmp8 = triton_helpers.maximum(tmp7, tmp5)
    tmp9 = tl.load(in_ptr0 + (17 + 2*x0 + 32*x1), xmask).to(tl.float32)
    tmp10 = triton_helpers.maximum(tmp1, tmp9)
    tmp11 = triton_helpers.maximum(tmp10, tmp8)
    tl.store(out_ptr0 + (xindex), tmp11, xmask)
"""

# A chunked SwiGLU after one GEMM of width 256: gate and up are the two halves of one buffer (offsets 0 and 128).
CPP_CHUNKED_SWIGLU = """
extern "C"  void  kernel(const float* in_ptr0, float* out_ptr0)
{
    auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x1 + 256L*x0), static_cast<int64_t>(16));
    auto tmp6 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(128L + x1 + 256L*x0), static_cast<int64_t>(16));
    auto tmp1 = tmp0.neg();
    auto tmp2 = tmp1.exp();
    auto tmp3 = static_cast<float>(1.0);
    auto tmp4 = at::vec::Vectorized<float>(tmp3);
    auto tmp5 = tmp2 + tmp4;
    auto tmp7 = tmp0 / tmp5;
    auto tmp8 = tmp7 * tmp6;
    tmp8.store(out_ptr0 + static_cast<int64_t>(x1 + 128L*x0));
}
"""  # noqa: E501  (Inductor C++ as it prints it)

TRITON_CHUNKED_SWIGLU = """
def k(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:]
    x0 = xindex % 128
    x1 = xindex // 128
    tmp0 = tl.load(in_ptr0 + (x0 + 256*x1), None).to(tl.float32)
    tmp3 = tl.load(in_ptr0 + (128 + x0 + 256*x1), None).to(tl.float32)
    tmp1 = tl.sigmoid(tmp0)
    tmp2 = tmp0 * tmp1
    tmp4 = tmp2 * tmp3
    tl.store(out_ptr0 + (xindex), tmp4, None)
"""


def _cpp_relu_neighbour(n: int, mask: str, offset: int) -> str:
    """One neighbour as Inductor prints it: tmp<n> the lambda, tmp<n+4> the padded element."""
    return f"""    auto tmp{n} = [&]
    {{
        auto tmp{n + 1} = at::vec::VecMask<float,2>::from({mask}).template loadu<at::BFloat16,1>(in_ptr0 + static_cast<int64_t>(({offset}L) + x3 + 128L*x2 + 4096L*x1 + 65536L*x0));
        auto tmp{n + 2} = at::vec::convert<float,2,at::BFloat16,1>(tmp{n + 1});
        auto tmp{n + 3} = at::vec::clamp_min(tmp{n + 2}, decltype(tmp{n + 2})(0));
        return tmp{n + 3};
    }}
    ;
    auto tmp{n + 4} = {mask} ? tmp{n}() : at::vec::VectorizedN<float,2>(-std::numeric_limits<float>::infinity());
"""  # noqa: E501  (Inductor C++ as it prints it)


# A C++ max_pool2d(3, 2, padding=1) after conv + ReLU (torch 2.14.1, bf16; tests/data/cpu-torch2.14.1/
# tv_resnet18_bf16 cpp_fused_max_pool2d_with_indices_relu_1, graph_0.py:147-278, three of its nine neighbours):
# each neighbour is a masked load in a lambda, converted and ReLU'd (clamp_min), padded with -inf outside the
# input, then combined by at::vec::maximum.
CPP_RELU_MAXPOOL = """
extern "C"  void  kernel(const at::BFloat16* in_ptr0, at::BFloat16* out_ptr0)
{
    auto tmp0 = (-1L) + 2L*x1;
    auto tmp1 = c10::convert<int64_t>(tmp0);
    auto tmp2 = static_cast<int64_t>(0);
    auto tmp3 = tmp1 >= tmp2;
    auto tmp12 = tmp3 & tmp3;
""" + _cpp_relu_neighbour(13, "tmp12", -2112) + """    auto tmp23 = tmp3 & tmp12;
""" + _cpp_relu_neighbour(24, "tmp23", -2048) + """    auto tmp29 = at::vec::maximum(tmp17, tmp28);
    auto tmp35 = tmp12 & tmp23;
""" + _cpp_relu_neighbour(36, "tmp35", -1984) + """    auto tmp41 = at::vec::maximum(tmp29, tmp40);
    auto tmp94 = at::vec::convert<at::BFloat16,1,float,2>(tmp41);
    tmp94.store(out_ptr0 + static_cast<int64_t>(x3 + 64L*x2 + 1024L*x1 + 16384L*x0), static_cast<int64_t>(16));
}
"""

# The same window in scalar C++ (a tail loop, or a kernel Inductor does not vectorise): std::max for the ReLU,
# max_propagate_nan for the pool.
CPP_RELU_MAXPOOL_SCALAR = """
extern "C"  void  kernel(const float* in_ptr0, float* out_ptr0)
{
    auto tmp3 = x1 >= static_cast<int64_t>(0);
    auto tmp4 = [&]
    {
        auto tmp5 = in_ptr0[static_cast<int64_t>((-33L) + x2 + 64L*x1)];
        auto tmp6 = std::max(tmp5, decltype(tmp5)(0));
        return tmp6;
    }
    ;
    auto tmp7 = tmp3 ? tmp4() : -std::numeric_limits<decltype(tmp4())>::infinity();
    auto tmp8 = [&]
    {
        auto tmp9 = in_ptr0[static_cast<int64_t>((-32L) + x2 + 64L*x1)];
        auto tmp10 = std::max(tmp9, decltype(tmp9)(0));
        return tmp10;
    }
    ;
    auto tmp11 = tmp3 ? tmp8() : -std::numeric_limits<decltype(tmp8())>::infinity();
    auto tmp12 = max_propagate_nan(tmp11, tmp7);
    out_ptr0[static_cast<int64_t>(x2 + 16L*x1)] = tmp12;
}
"""

# ResNet-18's last block before its global average pool (tv_resnet18_bf16 cpp_fused_add_mean_relu_10,
# graph_0.py:581-643, two of the four pixels): on each pixel the residual add and the ReLU, then the pixels' sum / 2.
CPP_ADD_RELU_MEAN = """
extern "C"  void  kernel(const at::BFloat16* in_ptr0, const at::BFloat16* in_ptr1, at::BFloat16* out_ptr0)
{
    auto tmp0 = at::vec::Vectorized<at::BFloat16>::loadu(in_ptr0 + static_cast<int64_t>(x1 + 1024L*x0), static_cast<int64_t>(16));
    auto tmp2 = at::vec::Vectorized<at::BFloat16>::loadu(in_ptr1 + static_cast<int64_t>(x1 + 1024L*x0), static_cast<int64_t>(16));
    auto tmp7 = at::vec::Vectorized<at::BFloat16>::loadu(in_ptr0 + static_cast<int64_t>(512L + x1 + 1024L*x0), static_cast<int64_t>(16));
    auto tmp9 = at::vec::Vectorized<at::BFloat16>::loadu(in_ptr1 + static_cast<int64_t>(512L + x1 + 1024L*x0), static_cast<int64_t>(16));
    auto tmp1 = at::vec::convert<float,2,at::BFloat16,1>(tmp0);
    auto tmp3 = at::vec::convert<float,2,at::BFloat16,1>(tmp2);
    auto tmp4 = tmp1 + tmp3;
    auto tmp5 = at::vec::clamp_min(tmp4, decltype(tmp4)(0));
    auto tmp6 = (tmp5);
    auto tmp8 = at::vec::convert<float,2,at::BFloat16,1>(tmp7);
    auto tmp10 = at::vec::convert<float,2,at::BFloat16,1>(tmp9);
    auto tmp11 = tmp8 + tmp10;
    auto tmp12 = at::vec::clamp_min(tmp11, decltype(tmp11)(0));
    auto tmp13 = (tmp12);
    auto tmp14 = tmp6 + tmp13;
    auto tmp31 = static_cast<float>(2.0);
    auto tmp32 = at::vec::VectorizedN<float,2>(tmp31);
    auto tmp33 = tmp14 / tmp32;
    auto tmp34 = at::vec::convert<at::BFloat16,1,float,2>(tmp33);
    tmp34.store(out_ptr0 + static_cast<int64_t>(x1 + 512L*x0), static_cast<int64_t>(16));
}
"""  # noqa: E501  (Inductor C++ as it prints it)

# RoPE on q_proj's output with cos and sin in one cache buffer: x2 * cos + x1 * sin adds two products of the
# GEMM's output at two offsets, but each reads the cache at its own, different place: no window.
CPP_ROPE_ONE_CACHE = """
extern "C"  void  kernel(const float* in_ptr0, const float* in_ptr1, float* out_ptr0)
{
    auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(64L + x1 + 128L*x0), static_cast<int64_t>(16));
    auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr1 + static_cast<int64_t>(x1 + 128L*x2), static_cast<int64_t>(16));
    auto tmp2 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x1 + 128L*x0), static_cast<int64_t>(16));
    auto tmp3 = at::vec::Vectorized<float>::loadu(in_ptr1 + static_cast<int64_t>(64L + x1 + 128L*x2), static_cast<int64_t>(16));
    auto tmp4 = tmp0 * tmp1;
    auto tmp5 = tmp2 * tmp3;
    auto tmp6 = tmp4 + tmp5;
    tmp6.store(out_ptr0 + static_cast<int64_t>(x1 + 64L*x0));
}
"""  # noqa: E501  (Inductor C++ as it prints it)

def _triton_bn_relu_neighbour(n: int, mask: str, offset: str) -> str:
    """One neighbour: its load (tmp<n>), eval BN with the channel's mean, var, w, b, ReLU, and the -inf padding
    (tmp<n+12>)."""
    t = [f"tmp{n + i}" for i in range(13)]
    return "\n".join(f"    {line}" for line in (
        f"{t[0]} = tl.load(in_ptr0 + ({offset}x0 + 128*x1 + 14336*x5), {mask}, other=0.0).to(tl.float32)",
        *(f"{t[i]} = tl.load(in_ptr{q} + (x0), {mask}, eviction_policy='evict_last', other=0.0)"
          for i, q in ((1, 1), (3, 2), (6, 3), (8, 4))),
        f"{t[2]} = {t[0]} - {t[1]}", f"{t[4]} = {t[3]} + tmp90", f"{t[5]} = libdevice.rsqrt({t[4]})",
        f"{t[7]} = {t[2]} * {t[5]}", f"{t[9]} = {t[7]} * {t[6]}", f"{t[10]} = {t[9]} + {t[8]}",
        f"{t[11]} = triton_helpers.maximum(tmp91, {t[10]})",
        f"tmp{n + 13} = tl.full({t[11]}.shape, float(\"-inf\"), {t[11]}.dtype)",
        f"{t[12]} = tl.where({mask}, {t[11]}, tmp{n + 13})")) + "\n"


# A Triton max_pool2d(3, 2, padding=1) that computes eval BN + ReLU on each neighbour itself (masked: the load's
# other=0.0, then -inf where the neighbour is padding). tv_resnet50's triton_poi_fused__native_batch_norm_legit_
# no_training_max_pool2d_with_indices_relu_3 (H200 zoo, default, graph_0.py:254) does not: its name lists BN and
# ReLU, but its body only takes the max of loads of buf3, which kernel _2 already normalised in place.
TRITON_BN_RELU_MAXPOOL = """
def k(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:]
    x0 = (xindex % 64)
    x1 = ((xindex // 64) % 56)
    x5 = xindex // 3584
    tmp0 = (-1) + 2*x1
    tmp1 = tl.full([1], 0, tl.int64)
    tmp2 = tmp0 >= tmp1
    tmp3 = 2*x1
    tmp4 = tmp3 >= tmp1
    tmp90 = tl.full([1], 1e-05, tl.float32)
    tmp91 = tl.full([1], 0, tl.int32)
""" + _triton_bn_relu_neighbour(10, "tmp2", "(-64) + ") + _triton_bn_relu_neighbour(30, "tmp4", "") + """\
    tmp50 = triton_helpers.maximum(tmp22, tmp42)
    tl.store(out_ptr0 + (xindex), tmp50, None)
"""


class TestEpilogueBoundary:
    """One rule in every path: the epilogue is the pointwise ops on the GEMM output up to the first op that is not
    pointwise (pooling, softmax, norms, SDPA), another GEMM or the graph output; view ops are followed, not listed."""

    def test_eager_and_compiled_agree_on_every_gemm(self):
        # the same ops on each GEMM's output in all four modes (where they ran differs: that is the verdict)
        epilogues = {mode: [g.epilogue for g in mode_result(POOL, mode).gemms] for mode in POOL_MODES}
        assert all(e == epilogues["eager"] for e in epilogues.values())
        assert epilogues["eager"] == [("bias", "relu"), ("bias",), ("bias", "gelu"), ("bias",), ("bias",),
                                      ("bias",), ("mul",), ("add",)]

    def test_pooling_ends_the_chain_in_eager(self):
        conv1, conv2 = mode_result(POOL, "eager").gemms[:2]
        assert "[eager-sequence] chain stops at aten::max_pool2d: not pointwise (the epilogue ends at a reduction, " \
               "norm, pooling or attention)" in _texts(conv1)
        assert any(t.startswith("[eager-sequence] chain stops at aten::avg_pool2d") for t in _texts(conv2))

    @pytest.mark.parametrize("mode", POOL_COMPILED)
    def test_pooling_ends_the_chain_in_compiled_code(self, mode):
        # before: the max of 4 neighbours read as an unfused relu, avg_pool's sum and divide as add, div
        conv1, conv2 = mode_result(POOL, mode).gemms[:2]
        assert (conv1.unfused, conv2.unfused) == ((), ())
        stop = [t for t in _texts(conv1)
                if t.startswith("[dataflow] chain stops in cpp_fused_max_pool2d_with_indices_1")]
        assert len(stop) == 1 and "pools a window of the GEMM's output" in stop[0]
        assert "`tmp2 = at::vec::maximum(tmp0, tmp1);`" in stop[0]
        assert any(t.startswith("[dataflow] chain stops in cpp_fused_avg_pool2d_2") and "`tmp2 = tmp0 + tmp1;`" in t
                   for t in _texts(conv2))

    def test_pooling_kernel_bodies_are_windows(self):
        # the recorded C++ kernels: max / sum of in_ptr0 at 4 offsets (0, 8, 128, 136 and 0, 16, 128, 144)
        for name in ("cpp_fused_max_pool2d_with_indices_1", "cpp_fused_avg_pool2d_2"):
            b = _kernel_body("default", name)
            f = walk(b, b.loads_of(["in_ptr0"]))
            assert (f.ops, f.outputs, f.reduced) == ((), (), True) and f.pooled, name
        # Triton: the ReLU on each neighbour is the conv's epilogue (one op); the max of the four is the pool
        b = parse_triton(TRITON_RELU_MAXPOOL, "k", ["in_ptr0", "out_ptr0", "xnumel", "XBLOCK"])
        f = walk(b, b.loads_of(["in_ptr0"]))
        assert [o.label for o in f.ops] == ["relu"] and f.pooled == ("tmp5", "tmp8", "tmp11") and f.outputs == ()

    @pytest.mark.parametrize("source", [CPP_RELU_MAXPOOL, CPP_RELU_MAXPOOL_SCALAR], ids=["vectorized", "scalar"])
    def test_relu_on_each_element_of_a_cpp_max_pool_window_is_one_epilogue_op(self, source):
        # GIVEN each neighbour loaded in a lambda (masked), ReLU'd, padded with -inf, then combined by a max
        b = parse_cpp(source, ["in_ptr0", "out_ptr0"])
        starts = b.loads_of(["in_ptr0"])
        assert len(starts) == (3 if source is CPP_RELU_MAXPOOL else 2)
        # WHEN the walk starts at the conv output's loads
        f = walk(b, starts)
        # THEN the ReLU, one op over every neighbour, is before the boundary; the max is the pool, stored nowhere
        # as the chain's data
        (relu,) = f.ops
        assert relu.label == "relu" and len(relu.values) == len(starts)
        assert f.reduced and f.outputs == () and f.pooled
        assert f.boundary == ("tmp29" if source is CPP_RELU_MAXPOOL else "tmp12")
        assert [b.at(v).ops for v in f.pooled] == [("maximum",)] * len(f.pooled)

    def test_residual_add_and_relu_before_a_mean_window_are_epilogue_ops(self):
        # the conv's output (in_ptr0) + the block input (in_ptr1) on each pixel, ReLU, then the pixels' sum / 2
        b = parse_cpp(CPP_ADD_RELU_MEAN, ["in_ptr0", "in_ptr1", "out_ptr0"])
        f = walk(b, b.loads_of(["in_ptr0"]))
        assert [(o.label, o.operands) for o in f.ops] == [("add", ("in_ptr1",)), ("relu", ())]
        assert (f.pooled, f.boundary, f.outputs) == (("tmp14",), "tmp14", ())
        # the add of the conv's output and the block input on one pixel is no window: one element of the conv each
        assert pool_windows(b, b.loads_of(["in_ptr0"])) == {"tmp14"}
        # read from the block input's side, with the conv's output a later GEMM's (blocked): nothing is this chain's
        f = walk(b, b.loads_of(["in_ptr1"]), blocked=["in_ptr0"])
        assert (f.ops, f.pooled, f.reduced) == ((), (), False)

    def test_rope_from_one_cache_is_no_window(self):
        # x2 * cos + x1 * sin adds two elements of the GEMM's output, but each is computed with its own part of
        # the cache: the mul and add stay epilogue ops and the chain goes on to the store
        b = parse_cpp(CPP_ROPE_ONE_CACHE, ["in_ptr0", "in_ptr1", "out_ptr0"])
        starts = b.loads_of(["in_ptr0"])
        assert len(starts) == 2 and pool_windows(b, starts) == set()
        f = walk(b, starts)
        assert [o.label for o in f.ops] == ["mul", "mul", "add"] and f.outputs == ("out_ptr0",) and not f.reduced

    def test_bn_and_relu_on_each_element_of_a_triton_max_pool_window_are_epilogue_ops(self):
        params = ["in_ptr0", "in_ptr1", "in_ptr2", "in_ptr3", "in_ptr4", "out_ptr0", "xnumel", "XBLOCK"]
        b = parse_triton(TRITON_BN_RELU_MAXPOOL, "k", params)
        f = walk(b, b.loads_of(["in_ptr0"]), broadcast={p: True for p in params[1:5]})
        # the -inf padding (`tmp18 = tl.where(tmp2, tmp16, tmp17)`) only masks: no "where" op
        assert [o.label for o in f.ops] == ["batch_norm", "relu"]
        assert (f.pooled, f.outputs, f.reduced) == (("tmp50",), (), True)

    def test_resnet18_pools_after_relu_and_after_the_last_blocks_add_relu(self):
        # tv_resnet18_bf16 default (graph_0.py): conv1's ReLU inside the max pool's kernel, layer4.1.conv2's add and
        # ReLU inside the mean's kernel; the window's combine is where each chain stops
        m = mode_result("tests/data/cpu-torch2.14.1/tv_resnet18_bf16.tar.gz", "default")
        conv1, last = m.gemms[0], m.gemms[-2]
        assert (conv1.module, last.module) == ("conv1", "layer4.1.conv2")
        assert conv1.unfused_kernels == ("graph_0_cpp_fused_max_pool2d_with_indices_relu_1",)
        assert "[bias-in-call] extern_kernels.convolution (graph_0.py:674) takes the bias _frozen_param301" in \
            _texts(conv1)
        assert "[dataflow] relu runs in cpp_fused_max_pool2d_with_indices_relu_1, a separate kernel, at call site " \
               "graph_0.py:679: it reads the GEMM result through in_ptr0=buf1: `tmp16 = at::vec::clamp_min(tmp15, " \
               "decltype(tmp15)(0));` (graph_0.py:164)" in _texts(conv1)
        assert "[dataflow] chain stops in cpp_fused_max_pool2d_with_indices_relu_1 (graph_0.py:679): it pools a " \
               "window of the GEMM's output (pooling is no epilogue op): `tmp29 = at::vec::maximum(tmp17, tmp28);` " \
               "(graph_0.py:184)" in _texts(conv1)
        assert last.unfused_kernels == ("graph_0_cpp_fused_add_mean_relu_10",)
        assert any(t.startswith("[dataflow] chain stops in cpp_fused_add_mean_relu_10 (graph_0.py:822): it pools")
                   and t.endswith("`tmp14 = tmp6 + tmp13;` (graph_0.py:621)") for t in _texts(last))
        # layer4.0's convs reach the same kernel through buf33, mixed there with layer4.1.conv2's output: that
        # pool is layer4.1.conv2's, not theirs
        for g in m.gemms[16:18]:
            assert g.unfused_kernels == ("graph_0_cpp_fused_add_relu_9",), g.module
            assert not any("cpp_fused_add_mean_relu_10" in t for t in _texts(g)), g.module

    def test_trace_only_pooling_kernel_ends_the_chain(self):
        from tests.test_gemm_verdicts import ATEN_TRITON, sequence_trace

        trace = sequence_trace([
            ("triton_tem_fused_convolution_0", "triton_tem_fused_convolution_0"),
            ("triton_poi_fused_convolution_max_pool2d_with_indices_relu_1",
             "triton_poi_fused_convolution_max_pool2d_with_indices_relu_1"),
            ("triton_poi_fused_add_2", "triton_poi_fused_add_2"),
        ])
        (g,), _ = analyze_gemms(analyze_kernels(trace), trace, (), mode="max-autotune", mode_config=ATEN_TRITON)
        assert g.unfused == ("relu",)  # not max/pool2d/with/indices, and the add after the pool is not its own
        assert "[trace-only] chain stops at triton_poi_fused_convolution_max_pool2d_with_indices_relu_1: its name " \
               "lists max_pool2d_with_indices (pooling ends the epilogue)" in _texts(g)

    def test_softmax_ends_the_chain(self):
        for mode in POOL_MODES:
            scores = mode_result(POOL, mode).gemms[6]
            assert (scores.op, scores.batch, scores.unfused) == ("bmm", 4, ("mul",)), mode
        assert any(t.startswith("[eager-sequence] chain stops at aten::softmax")
                   for t in _texts(mode_result(POOL, "eager").gemms[6]))
        for mode in POOL_COMPILED:
            t = _texts(mode_result(POOL, mode).gemms[6])
            assert any(x.startswith("[dataflow] chain stops in cpp_fused__softmax_")
                       and x.endswith("a reduction reads it") for x in t)
            # the scale x * 0.25 before the max is subtracted, not Inductor's x * 1.0 (which computes nothing)
            mul = [x for x in t if x.startswith("[dataflow] mul runs in cpp_fused__softmax_")]
            assert len(mul) == 1 and "`tmp12 = tmp2 * tmp10;`" in mul[0], mode

    def test_sdpa_and_the_next_gemm_end_q_k_v(self):
        for mode in POOL_COMPILED:
            for g in mode_result(POOL, mode).gemms[3:6]:
                assert g.epilogue == ("bias",)
                assert any(t.startswith("[dataflow] chain stops at torch.ops.aten._scaled_dot_product_flash_attention"
                                        "_for_cpu.default") for t in _texts(g))
        v = mode_result(POOL, "eager").gemms[5]
        assert any(t.startswith("[eager-sequence] chain stops at aten::scaled_dot_product_attention")
                   for t in _texts(v))

    def test_view_ops_are_not_epilogue_ops(self):
        assert {vocab.op_class(op) for op in ("split", "split_with_sizes", "chunk", "unbind", "cat", "stack",
                                              "_unsafe_view", "aten::transpose", "aten::clone")} == {"view"}
        # eager: a split and a cat of the GEMM output are followed through to the relu
        from tests.test_gemm_verdicts import EAGER, eager_trace

        trace = eager_trace([
            ("aten::mm", [[64, 256], [256, 512]], "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n"),
            ("aten::split", [[64, 512], [], []], None),
            ("aten::cat", [[64, 256], [64, 256]], "void at::native::CatArrayBatchedCopy<float, unsigned int, 2>"),
            ("aten::relu", [[64, 512]], "void at::native::vectorized_elementwise_kernel<4, ClampMinFunctor<float>>"),
        ])
        (g,), _ = analyze_gemms(analyze_kernels(trace), trace, (), mode="eager", mode_config=EAGER)
        assert (g.epilogue, g.verdict) == (("relu",), "unfused")
        # compiled: the copies for the bmm (a clone, a transpose_mxn through a local tile) are no op: k's chain
        # runs through them to the bmm template, without the "add" the tile's address once read as
        k = mode_result(POOL, "max-autotune:CPP").gemms[4]
        assert (k.module, k.fused, k.unfused) == ("attn.k", ("bias",), ())
        assert any(t.startswith("[dataflow] chain stops at cpp_fused__unsafe_view_add_addmm_bmm_clone_gelu_transpose_"
                                "view_6") for t in _texts(k))
        for mode in POOL_MODES:
            assert not {op for g in mode_result(POOL, mode).gemms for op in g.epilogue} & vocab.VIEW_OPS

    def test_chunked_swiglu_is_not_a_pooling_window(self):
        # two halves of one buffer combined by silu(gate) * up: both ops are credited, nothing is pooled
        b = parse_cpp(CPP_CHUNKED_SWIGLU, ["in_ptr0", "out_ptr0"])
        starts = b.loads_of(["in_ptr0"])
        assert len(starts) == 2 and pool_windows(b, starts) == set()
        f = walk(b, starts)
        assert [o.label for o in f.ops] == ["silu", "mul"] and f.outputs == ("out_ptr0",) and not f.reduced
        b = parse_triton(TRITON_CHUNKED_SWIGLU, "k", ["in_ptr0", "out_ptr0", "xnumel", "XBLOCK"])
        f = walk(b, b.loads_of(["in_ptr0"]))
        assert [o.label for o in f.ops] == ["silu", "mul"] and f.pooled == () and f.outputs == ("out_ptr0",)
        # the real two-GEMM SwiGLU (llama_block) keeps silu and mul on gate_proj, mul on up_proj
        gates = [g for g in mode_result("tests/data/cpu-torch2.14.1/llama_block", "default").gemms
                 if g.module.endswith(("gate_proj", "up_proj"))]
        assert [g.unfused for g in gates] == [("silu", "mul"), ("mul",)] * 2

    def test_conv_bias_is_in_the_call_and_the_evidence_says_so(self):
        eager = mode_result(POOL, "eager").gemms[0]
        assert "[bias-in-call] aten::mkldnn_convolution takes the bias [8] as an operand: the convolution call adds " \
               "it" in _texts(eager)
        for folder, mode in ((POOL, "default"), (POOL, "max-autotune:CPP"),
                             ("tests/data/cpu-torch2.14.1/conv_bn_relu", "default")):
            for g in mode_result(folder, mode).gemms:
                if g.kind != "conv":
                    continue
                t = _texts(g)
                # a convolution takes its bias as an operand of its own: no addmm C operand, no beta
                assert not any(x.startswith("[beta-accumulate]") for x in t), (folder, mode, g.module)
                assert any(x.startswith("[bias-in-call] torch.ops.mkldnn._convolution_pointwise") for x in t)
        conv1 = mode_result(POOL, "default").gemms[0]
        assert (conv1.m, conv1.n, conv1.k) == (512, 8, 27)  # 2 x 16 x 16 pixels, 8 channels, 3 x 3 x 3
        # _convolution_pointwise.binary(buf2, buf3, W, B, ...) (conv_bn_relu graph_0.py:161): the residual is
        # second, the weight _frozen_param33 third and the folded bias _frozen_param31 fourth
        conv2 = mode_result("tests/data/cpu-torch2.14.1/conv_bn_relu", "default").gemms[1]
        assert (conv2.m, conv2.n, conv2.k) == (512, 16, 144)
        assert "[bias-in-call] torch.ops.mkldnn._convolution_pointwise.binary (graph_0.py:161) takes the bias " \
               "_frozen_param31" in _texts(conv2)


# --- a reduction ends the epilogue --------------------------------------------------------------------------
# A value derived from the GEMM's output through a reduction (in this kernel or an earlier one) is past the
# epilogue's boundary; the ops before it are epilogue ops. The bodies below are Inductor's forms, trimmed.

# softmax(x / T) as triton_red_fused__softmax__to_copy_amax_div_mul_sub_0 (tests/data/h200-torch2.11-zoo/
# kb_gemm_softmax_temp): a loop-carried max (_tmp5, combined by triton_helpers.maximum), closed by max2; the next
# loop re-loads x and subtracts the max before scaling by 1/T.
TRITON_LOOPED_MAX = """
def k(in_out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xmask = xindex < xnumel
    _tmp5 = tl.full([XBLOCK, R0_BLOCK], float("-inf"), tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_mask = r0_index < r0_numel
        tmp0 = tl.load(in_out_ptr0 + (r0_1 + 8192*x0), r0_mask & xmask, other=0.0).to(tl.float32)
        tmp1 = tmp0.to(tl.float32)
        tmp2 = tl.full([1, 1], 1.0, tl.float32)
        tmp3 = tmp1 * tmp2
        tmp4 = tl.broadcast_to(tmp3, [XBLOCK, R0_BLOCK])
        tmp6 = triton_helpers.maximum(_tmp5, tmp4)
        _tmp5 = tl.where(r0_mask & xmask, tmp6, _tmp5)
    tmp5 = triton_helpers.max2(_tmp5, 1)[:, None]
    _tmp16 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_mask = r0_index < r0_numel
        tmp7 = tl.load(in_out_ptr0 + (r0_1 + 8192*x0), r0_mask & xmask, other=0.0).to(tl.float32)
        tmp10 = tmp7 * tmp2
        tmp11 = tmp10 - tmp5
        tmp12 = tl.full([1, 1], 1.4285714285714286, tl.float32)
        tmp13 = tmp11 * tmp12
        tmp14 = libdevice.exp(tmp13)
        tmp15 = tl.broadcast_to(tmp14, [XBLOCK, R0_BLOCK])
        tmp17 = _tmp16 + tmp15
        _tmp16 = tl.where(r0_mask & xmask, tmp17, _tmp16)
    tmp16 = tl.sum(_tmp16, 1)[:, None]
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_mask = r0_index < r0_numel
        tmp18 = tl.load(in_out_ptr0 + (r0_1 + 8192*x0), r0_mask & xmask, other=0.0).to(tl.float32)
        tmp22 = tmp18 - tmp5
        tmp24 = tmp22 * tmp12
        tmp25 = libdevice.exp(tmp24)
        tmp26 = (tmp25 / tmp16)
        tl.store(in_out_ptr0 + (r0_1 + 8192*x0), tmp26, r0_mask & xmask)
"""

# A looped mean of relu(x + bias) (the accumulator combined inline): the reduction consumes the chain, so the
# bias and the ReLU before it are the GEMM's epilogue.
TRITON_LOOPED_SUM = """
def k(in_ptr0, in_ptr1, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xmask = xindex < xnumel
    _tmp5 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_mask = r0_index < r0_numel
        tmp0 = tl.load(in_ptr0 + (r0_1 + 4096*x0), r0_mask & xmask, other=0.0).to(tl.float32)
        tmp1 = tl.load(in_ptr1 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0).to(tl.float32)
        tmp2 = tmp0 + tmp1
        tmp3 = tl.full([1, 1], 0, tl.int32)
        tmp4 = triton_helpers.maximum(tmp3, tmp2)
        tmp6 = tl.broadcast_to(tmp4, [XBLOCK, R0_BLOCK])
        _tmp5 = tl.where(r0_mask & xmask, _tmp5 + tmp6, _tmp5)
    tmp5 = tl.sum(_tmp5, 1)[:, None]
    tmp7 = tl.full([1, 1], 4096.0, tl.float32)
    tmp8 = tmp5 / tmp7
    tl.store(out_ptr0 + (x0), tmp8, xmask)
"""

# logsumexp(x * 0.5) as triton_red_fused_gelu_leaky_relu_logsumexp_mul_0 (kb_gemm_logsumexp_gelu), with the
# combines written inline: the scale feeds the max in the first loop; the second loop re-loads x, scales it again and
# combines it with the max.
TRITON_RELOAD_WITH_STATISTIC = """
def k(in_ptr0, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    _tmp5 = tl.full([XBLOCK, R0_BLOCK], float("-inf"), tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        tmp0 = tl.load(in_ptr0 + (r0_1 + 8192*x0), r0_mask & xmask, other=0.0).to(tl.float32)
        tmp2 = tmp0 * 0.5
        _tmp5 = tl.where(r0_mask & xmask, triton_helpers.maximum(_tmp5, tmp2), _tmp5)
    tmp5 = triton_helpers.max2(_tmp5, 1)[:, None]
    _tmp19 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        tmp7 = tl.load(in_ptr0 + (r0_1 + 8192*x0), r0_mask & xmask, other=0.0).to(tl.float32)
        tmp9 = tmp7 * 0.5
        tmp16 = tmp9 - tmp5
        _tmp19 = tl.where(r0_mask & xmask, _tmp19 + libdevice.exp(tmp16), _tmp19)
    tmp21 = tl_math.log(tl.sum(_tmp19, 1)[:, None])
    tmp27 = tmp21 + tmp5
    tmp31 = tl.where(tmp27 > 0.0, tmp27, tmp27 * 0.01)
    tl.store(out_ptr2 + (x0), tmp31, xmask)
"""

# The end of a ResNet (triton_per_fused__native_batch_norm_legit_no_training_add_mean_relu_2,
# kb_conv_block_avgpool): eval BN, the residual add and ReLU on each element, then the pool's tl.sum.
TRITON_POOL_AFTER_EPILOGUE = """
def k(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, out_ptr1, xnumel, r0_numel, XBLOCK : tl.constexpr):
    r0_mask = r0_index < r0_numel
    tmp0 = tl.load(in_ptr0 + (x0 + 512*r0_2 + 25088*x1), r0_mask, other=0.0).to(tl.float32)
    tmp2 = tl.load(in_ptr1 + (x0), None, eviction_policy='evict_last').to(tl.float32)
    tmp5 = tl.load(in_ptr2 + (x0), None, eviction_policy='evict_last').to(tl.float32)
    tmp15 = tl.load(in_ptr3 + (x0), None, eviction_policy='evict_last').to(tl.float32)
    tmp18 = tl.load(in_ptr4 + (x0), None, eviction_policy='evict_last').to(tl.float32)
    tmp22 = tl.load(in_ptr5 + (r0_2 + 49*x3), r0_mask, other=0.0).to(tl.float32)
    tmp4 = tmp0 - tmp2
    tmp7 = tl.full([1, 1], 1e-05, tl.float32)
    tmp8 = tmp5 + tmp7
    tmp9 = tl.sqrt_rn(tmp8)
    tmp10 = tl.full([1, 1], 1, tl.int32)
    tmp11 = (tmp10 / tmp9)
    tmp14 = tmp4 * tmp11
    tmp17 = tmp14 * tmp15
    tmp20 = tmp17 + tmp18
    tmp23 = tmp20 + tmp22
    tmp24 = tl.full([1, 1], 0, tl.int32)
    tmp25 = triton_helpers.maximum(tmp24, tmp23)
    tmp27 = tl.broadcast_to(tmp25, [XBLOCK, R0_BLOCK])
    tmp29 = tl.where(r0_mask, tmp27, 0)
    tmp30 = tl.sum(tmp29, 1)[:, None].to(tl.float32)
    tmp31 = tl.full([1, 1], 49.0, tl.float32)
    tmp32 = (tmp30 / tmp31)
    tl.store(out_ptr1 + (x3), tmp32, None)
"""

# RMSNorm in one persistent kernel: x * x only feeds the mean, and x itself is normalised with it.
TRITON_RMSNORM = """
def k(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr):
    r0_mask = r0_index < r0_numel
    tmp0 = tl.load(in_ptr0 + (r0_1 + 1024*x0), r0_mask, other=0.0).to(tl.float32)
    tmp1 = tmp0 * tmp0
    tmp3 = tl.where(r0_mask, tmp1, 0)
    tmp4 = tl.sum(tmp3, 1)[:, None]
    tmp5 = tl.full([1, 1], 1024.0, tl.float32)
    tmp6 = tmp4 / tmp5
    tmp7 = libdevice.rsqrt(tmp6 + 1e-06)
    tmp8 = tmp0 * tmp7
    tl.store(out_ptr0 + (r0_1 + 1024*x0), tmp8, r0_mask)
"""


SPLIT_REDUCTIONS = """
from torch._inductor.select_algorithm import extern_kernels
import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers
async_compile = AsyncCompile()
empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda


triton_per_fused_add_native_group_norm_0 = async_compile.triton('triton_per_fused_add_native_group_norm_0', '''
@triton.jit
def triton_per_fused_add_native_group_norm_0(in_ptr0, in_ptr1, out_ptr0, out_ptr1, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xmask = xindex < xnumel
    tmp0 = tl.load(in_ptr0 + (r0_1 + 64*x0), xmask, other=0.0).to(tl.float32)
    tmp1 = tl.load(in_ptr1 + (r0_1 + 64*x2), xmask, other=0.0).to(tl.float32)
    tmp2 = tmp0 + tmp1
    tmp3 = tl.broadcast_to(tmp2, [XBLOCK, R0_BLOCK])
    tmp5 = tl.where(xmask, tmp3, 0)
    tmp6 = tl.sum(tmp5, 1)[:, None].to(tl.float32)
    tmp7 = tl.full([1, 1], 64.0, tl.float32)
    tmp8 = tmp6 / tmp7
    tmp9 = tmp3 - tmp8
    tmp10 = tmp9 * tmp9
    tmp12 = tl.where(xmask, tmp10, 0)
    tmp13 = tl.sum(tmp12, 1)[:, None].to(tl.float32)
    tl.store(out_ptr0 + (x0), tmp8, xmask)
    tl.store(out_ptr1 + (x0), tmp13, xmask)
''', device_str='cuda')


triton_poi_fused_add_native_group_norm_relu_1 = async_compile.triton('triton_poi_fused_add_native_group_norm_relu_1', '''
@triton.jit
def triton_poi_fused_add_native_group_norm_relu_1(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, xnumel, XBLOCK : tl.constexpr):
    tmp0 = tl.load(in_out_ptr0 + (x2), None).to(tl.float32)
    tmp1 = tl.load(in_ptr0 + (x0), None).to(tl.float32)
    tmp3 = tl.load(in_ptr1 + (x2 // 64), None)
    tmp5 = tl.load(in_ptr2 + (x2 // 64), None)
    tmp2 = tmp0 + tmp1
    tmp4 = tmp2 - tmp3
    tmp10 = libdevice.rsqrt(tmp5 / 64.0 + 1e-05)
    tmp11 = tmp4 * tmp10
    tmp13 = triton_helpers.maximum(tl.full([1], 0, tl.int32), tmp11)
    tl.store(in_out_ptr0 + (x2), tmp13, None)
''', device_str='cuda')


triton_red_fused_mean_pow_2 = async_compile.triton('triton_red_fused_mean_pow_2', '''
@triton.jit
def triton_red_fused_mean_pow_2(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xmask = xindex < xnumel
    _tmp3 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_mask = r0_index < r0_numel
        tmp0 = tl.load(in_ptr0 + (r0_1 + 256*x0), r0_mask & xmask, other=0.0).to(tl.float32)
        tmp1 = tmp0 * tmp0
        tmp2 = tl.broadcast_to(tmp1, [XBLOCK, R0_BLOCK])
        tmp4 = _tmp3 + tmp2
        _tmp3 = tl.where(r0_mask & xmask, tmp4, _tmp3)
    tmp3 = tl.sum(_tmp3, 1)[:, None]
    tl.store(out_ptr0 + (x0), tmp3, xmask)
''', device_str='cuda')


triton_poi_fused_mean_mul_pow_rsqrt_3 = async_compile.triton('triton_poi_fused_mean_mul_pow_rsqrt_3', '''
@triton.jit
def triton_poi_fused_mean_mul_pow_rsqrt_3(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    tmp0 = tl.load(in_ptr0 + (x2), None).to(tl.float32)
    tmp1 = tl.load(in_ptr1 + (x1), None)
    tmp6 = libdevice.rsqrt(tmp1 / 256.0 + 1e-06)
    tmp7 = tmp0 * tmp6
    tl.store(out_ptr0 + (x2), tmp7, None)
''', device_str='cuda')


async_compile.wait(globals())
del async_compile

class Runner:
    def call(self, args):
        arg0_1, arg1_1, arg2_1, arg3_1, arg4_1 = args
        assert_size_stride(arg0_1, (128, 64), (64, 1))
        assert_size_stride(arg1_1, (64, 256), (256, 1))
        assert_size_stride(arg2_1, (256, ), (1, ))
        buf0 = empty_strided_cuda((128, 256), (256, 1), torch.bfloat16)
        extern_kernels.mm(arg0_1, arg1_1, out=buf0)
        buf1 = empty_strided_cuda((128, 4, 1, 1), (4, 1, 512, 512), torch.float32)
        buf2 = empty_strided_cuda((128, 4, 1, 1), (4, 1, 512, 512), torch.float32)
        triton_per_fused_add_native_group_norm_0.run(buf0, arg2_1, buf1, buf2, 512, 64, stream=stream0)
        buf4 = buf0; del buf0  # reuse
        triton_poi_fused_add_native_group_norm_relu_1.run(buf4, arg2_1, buf1, buf2, 32768, stream=stream0)
        buf5 = empty_strided_cuda((128, 256), (256, 1), torch.bfloat16)
        extern_kernels.mm(arg3_1, arg4_1, out=buf5)
        buf6 = empty_strided_cuda((128, 1), (1, 1), torch.float32)
        triton_red_fused_mean_pow_2.run(buf5, buf6, 128, 256, stream=stream0)
        buf7 = empty_strided_cuda((128, 256), (256, 1), torch.bfloat16)
        triton_poi_fused_mean_mul_pow_rsqrt_3.run(buf5, buf6, buf7, 32768, stream=stream0)
        return (buf4, buf7, )

runner = Runner()
call = runner.call
"""  # noqa: E501  (Inductor's kernel signatures as it prints them)


def _params(src: str) -> list[str]:
    head = src.split("def k(", 1)[1].split(")", 1)[0]
    return [p.split(":")[0].strip() for p in head.split(",")]


class TestReductionBoundary:
    def test_a_loop_carried_max_is_a_reduction_not_a_relu(self):
        # `tmp6 = triton_helpers.maximum(_tmp5, tmp4)` combines the row into the accumulator `_tmp5` (closed by
        # `tmp5 = triton_helpers.max2(_tmp5, 1)`): before, it read as an unfused relu, `_tmp5`'s
        # `float("-inf")` as an op "float", and sub/mul/exp/add/div after the max as epilogue ops
        b = parse_triton(TRITON_LOOPED_MAX, "k", _params(TRITON_LOOPED_MAX))
        assert {v.name for v in b.values if v.reduces} >= {"_tmp5", "tmp6", "tmp5", "_tmp16", "tmp17", "tmp16"}
        f = walk(b, b.loads_of(["in_out_ptr0"]))
        # x * 1.0 computes nothing; the 1/T scale multiplies x - max: past the max
        assert f.ops == () and f.reduced and f.boundary == "tmp6"
        assert "tmp11" in f.mixed and "tmp13" not in f.derived and f.outputs == ()
        assert f.reduced_outputs == ("in_out_ptr0",)

    def test_a_loop_carried_sum_ends_the_chain_after_the_ops_before_it(self):
        # `_tmp5 = tl.where(r0_mask & xmask, _tmp5 + tmp6, _tmp5)`: the accumulator sums relu(x + bias); nothing
        # normalises x with the mean, so the bias and the ReLU are epilogue ops, and the mean is past the boundary
        b = parse_triton(TRITON_LOOPED_SUM, "k", _params(TRITON_LOOPED_SUM))
        f = walk(b, b.loads_of(["in_ptr0"]), broadcast={"in_ptr1": True})
        assert [o.label for o in f.ops] == ["bias", "relu"] and f.reduced and f.boundary == "_tmp5"
        assert f.mixed == () and f.outputs == () and f.reduced_outputs == ("out_ptr0",)
        assert [o.label for o in f.reduction_inputs] == ["bias", "relu"]

    def test_a_value_reloaded_and_combined_with_the_statistic_is_past_the_boundary(self):
        # `_tmp5 = tl.where(..., triton_helpers.maximum(_tmp5, tmp2), _tmp5)` is the max (no relu); loop 2 re-loads x
        # (`tmp7`), scales it (`tmp9 = tmp7 * 0.5`: the epilogue's mul, computed again) and subtracts the max
        # (`tmp16 = tmp9 - tmp5`): sub, exp, the sum, log, leaky_relu are past the boundary
        b = parse_triton(TRITON_RELOAD_WITH_STATISTIC, "k", _params(TRITON_RELOAD_WITH_STATISTIC))
        f = walk(b, b.loads_of(["in_ptr0"]))
        assert [o.label for o in f.ops] == ["mul"] and f.ops[0].values == ("tmp9",)
        assert f.mixed == ("tmp16",) and f.boundary == "_tmp5" and f.reduction_inputs == ()
        assert not {"tmp16", "_tmp19", "tmp21", "tmp27", "tmp31"} & set(f.derived)

    def test_ops_before_the_pool_mean_are_the_conv_epilogue(self):
        # BN (tmp4..tmp20), the residual add (tmp23 = tmp20 + tmp22) and ReLU (tmp25) run before `tmp30 =
        # tl.sum(tmp29, 1)`: before, they only fed the reduction and were dropped (the conv read "none")
        b = parse_triton(TRITON_POOL_AFTER_EPILOGUE, "k", _params(TRITON_POOL_AFTER_EPILOGUE))
        f = walk(b, b.loads_of(["in_ptr0"]))
        assert [o.label for o in f.ops] == ["batch_norm", "add", "relu"] and f.reduced and f.mixed == ()
        assert f.boundary == "tmp30" and f.outputs == () and f.reduced_outputs == ("out_ptr1",)

    def test_an_op_that_only_feeds_a_norm_statistic_is_the_norms(self):
        # RMSNorm: `tmp1 = tmp0 * tmp0` only feeds the sum, and `tmp8 = tmp0 * tmp7` normalises x with it
        b = parse_triton(TRITON_RMSNORM, "k", _params(TRITON_RMSNORM))
        f = walk(b, b.loads_of(["in_ptr0"]))
        assert f.ops == () and f.mixed == ("tmp8",) and f.reduced

    def test_statistics_an_earlier_kernel_reduced_end_the_chain(self):
        # triton_poi_fused_hardtanh_native_group_norm_1 (kb_gemm_groupnorm_hardtanh, default): `tmp3 = tmp1 - tmp2`
        # mixes the mean (in_ptr0 = buf1) into the GEMM's output (in_out_ptr0 = buf4, buf0 reused in place)
        code = load_output_code(_zoo_code("kb_gemm_groupnorm_hardtanh", "default"))[0]
        kd = code.kernel("triton_poi_fused_hardtanh_native_group_norm_1")
        assert kd is not None
        b = parse_triton(kd.source, kd.name, kd.params)
        f = walk(b, b.loads_of(["in_out_ptr0"]), statistics=["in_ptr0", "in_ptr1"])
        assert f.ops == () and f.mixed == ("tmp3",) and f.reduced_outputs == ("in_out_ptr0",)
        # without the statistics the same body reads as batch_norm + hardtanh (what it read before)
        f = walk(b, b.loads_of(["in_out_ptr0"]))
        assert [o.label for o in f.ops] == ["batch_norm", "hardtanh"]

    def test_a_split_reduction_across_kernels_with_an_in_place_buffer(self):
        # Two GEMMs of a hand-written wrapper. mm -> buf0; triton_per_..._0 adds the bias (tmp2 = tmp0 + tmp1)
        # and stores mean/var (buf1, buf2); `buf4 = buf0; del buf0  # reuse`; triton_poi_..._1 adds the bias
        # again and mixes in the mean (`tmp4 = tmp2 - tmp3`). mm -> buf5; triton_red_fused_mean_pow_2 sums
        # x * x in a loop into buf6; triton_poi_..._3 normalises x with it (`tmp7 = tmp0 * tmp6`).
        from kernelscope.analysis.gemm.dataflow import code_gemms
        from kernelscope.inductor_code import parse_output_code

        (code,) = parse_output_code(SPLIT_REDUCTIONS)
        norm, rms = code_gemms(code)
        assert [(c.label, c.code_kernel) for c in norm.chain] == [
            ("bias", "triton_per_fused_add_native_group_norm_0")]
        assert "[dataflow] triton_poi_fused_add_native_group_norm_relu_1 (<memory>:90) recomputes bias: counted " \
               "once" in _texts(norm)
        assert any(e.startswith("[dataflow] chain stops in triton_poi_fused_add_native_group_norm_relu_1")
                   and e.endswith("it combines the GEMM's result with statistics an earlier kernel reduced from "
                                  "it (in_ptr1=buf1, in_ptr2=buf2)") for e in _texts(norm))
        # the x * x of the first kernel only fed the statistic that the second normalises x with: the norm's
        assert rms.chain == ()
        assert any(e.startswith("[dataflow] mul in triton_red_fused_mean_pow_2 only feeds a reduction whose "
                                "statistic normalises the GEMM's result in triton_poi_fused_mean_mul_pow_rsqrt_3")
                   for e in _texts(rms))


def _zoo_code(name: str, mode: str) -> Path:
    return zoo_run(name) / "modes" / mode / "code" / "graph_0.py"


# ------------------------------------------------------------------------------------------------ GEMM count vs eager
MHA = "multi_head_attention_forward"
SDPA = "scaled_dot_product_attention"


def _count(ops: int, decomposed: dict[str, int] | None = None) -> GemmCoverage:
    return GemmCoverage("output code", ops=ops, attributed=ops, by_kind={"mm": ops}, decomposed=decomposed or {})


def _against(eager: GemmCoverage, mode: GemmCoverage) -> GemmCoverage:
    base = ModeResult(name="eager", status="ok", gemm_coverage=eager)
    _, compiled = compare_with_eager([base, ModeResult(name="default", status="ok", gemm_coverage=mode)])
    assert compiled.gemm_coverage is not None
    return compiled.gemm_coverage


@pytest.mark.parametrize(("eager", "mode", "code", "words"), [
    # the same count: explained, whatever either side decomposed
    (_count(10), _count(10), "gemm-count-as-eager", "10 GEMM-class ops, as in eager"),
    (_count(10), _count(10, {MHA: 4}), "gemm-count-as-eager",
     f"10 GEMM-class ops (4 from decomposing {MHA}) against eager's 10: the same count"),
    (_count(10, {SDPA: 2}), _count(10), "gemm-count-as-eager",
     f"10 GEMM-class ops against eager's 10 (2 from decomposing {SDPA}): the same count"),
    (_count(10, {SDPA: 2}), _count(10, {MHA: 4}), "gemm-count-as-eager",
     f"10 GEMM-class ops (4 from decomposing {MHA}) against eager's 10 (2 from decomposing {SDPA}): the same count"),
    (_count(96, {SDPA: 24}), _count(96, {SDPA: 24}), "gemm-count-as-eager", "96 GEMM-class ops, as in eager"),
    # more or fewer, by at most what the side with more made by decomposing: explained
    (_count(10), _count(12, {SDPA: 2}), "gemm-count-explained",
     f"12 GEMM-class ops (2 from decomposing {SDPA}) against eager's 10: the difference is decomposition"),
    (_count(10), _count(11, {SDPA: 2}), "gemm-count-explained",
     f"11 GEMM-class ops (2 from decomposing {SDPA}) against eager's 10: the difference is decomposition"),
    (_count(12, {SDPA: 2}), _count(10), "gemm-count-explained",
     f"10 GEMM-class ops against eager's 12 (2 from decomposing {SDPA}): the difference is decomposition"),
    # more or fewer beyond that: a warning that names how many more or fewer than decomposition explains
    (_count(10), _count(13, {SDPA: 2}), "gemm-count-unexplained",
     f"13 GEMM-class ops (2 from decomposing {SDPA}) against eager's 10: 1 more than decomposition explains "
     "(eager: mm 10; this mode: mm 13); a GEMM may be missing from one of them, or the modes ran different code"),
    (_count(2), _count(3), "gemm-count-unexplained",
     "3 GEMM-class ops against eager's 2: 1 more than decomposition explains (eager: mm 2; this mode: mm 3); a GEMM "
     "may be missing from one of them, or the modes ran different code"),
    (_count(10), _count(8, {MHA: 4}), "gemm-count-unexplained",
     f"8 GEMM-class ops (4 from decomposing {MHA}) against eager's 10: 2 fewer than decomposition explains (eager: "
     "mm 10; this mode: mm 8); a GEMM may be missing from one of them, or the modes ran different code"),
    (_count(10, {SDPA: 2}), _count(7), "gemm-count-unexplained",
     f"7 GEMM-class ops against eager's 10 (2 from decomposing {SDPA}): 1 fewer than decomposition explains (eager: "
     "mm 10; this mode: mm 7); a GEMM may be missing from one of them, or the modes ran different code"),
], ids=["equal", "equal-mode-decomposed", "equal-eager-decomposed", "equal-both-decomposed", "equal-same-decomposed",
        "more-explained", "more-partly-decomposed", "fewer-explained", "more-unexplained", "more-no-decomposition",
        "fewer-unexplained", "fewer-unexplained-eager-decomposed"])
def test_the_gemm_count_against_eager_is_a_warning_only_when_decomposition_does_not_explain_it(
        eager: GemmCoverage, mode: GemmCoverage, code: str, words: str):
    c = _against(eager, mode)
    assert c.vs_eager is not None and c.vs_eager.code == code
    assert c.vs_eager_explained is (code != "gemm-count-unexplained")
    assert say(c.vs_eager) == words
    if code == "gemm-count-unexplained":
        # the words' arithmetic: the difference less what the side with more made by decomposing
        diff = mode.ops - eager.ops
        made = sum((mode.decomposed if diff > 0 else eager.decomposed).values())
        assert c.vs_eager.args["beyond"] == abs(diff) - made > 0
