"""The GEMM engine on real recorded models (issue 12): verdicts follow the wrapper's call sites and buffers, and the
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
* conv_bn_relu: convolutions are GEMM-class ops with implicit-GEMM M/N/K (M = 8*56*56 = 25088, N = 64,
  K = 64*3*3 = 576 on the H200): eval BatchNorm + ReLU run after cuDNN's conv in a Triton kernel; on the CPU
  freezing folds BN into the conv and oneDNN applies ReLU (and the residual add) as post-ops (class 6).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelscope.analysis.gemm.body import parse_cpp, parse_triton, walk
from kernelscope.analysis.mode import build_mode_result

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
        ('layers.0.mlp.gate_proj', 'mm', 'ATen CPU', 'unfused', (), ('silu',)),
        ('layers.0.mlp.up_proj', 'mm', 'ATen CPU', 'unfused', (), ('mul',)),
        ('layers.0.mlp.down_proj', 'mm', 'ATen CPU', 'unfused', (), ('add',)),
        ('layers.1.self_attn.q_proj', 'mm', 'ATen CPU', 'none', (), ()),
        ('layers.1.self_attn.k_proj', 'mm', 'ATen CPU', 'none', (), ()),
        ('layers.1.self_attn.v_proj', 'mm', 'ATen CPU', 'none', (), ()),
        ('layers.1.self_attn.o_proj', 'mm', 'ATen CPU', 'unfused', (), ('add',)),
        ('layers.1.mlp.gate_proj', 'mm', 'ATen CPU', 'unfused', (), ('silu',)),
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
    ('tests/data/cpu-torch2.14.1/llama_block', 'max-autotune:CPP', 'GEMMs 14: fused 2, partial 1, unfused 5, none 6', [
        ('layers.0.self_attn.q_proj', 'mm', 'Inductor C++ template', 'none', (), ()),
        ('layers.0.self_attn.k_proj', 'mm', 'Inductor C++ template', 'none', (), ()),
        ('layers.0.self_attn.v_proj', 'mm', 'Inductor C++ template', 'none', (), ()),
        ('layers.0.self_attn.o_proj', 'mm', 'Inductor C++ template', 'unfused', (), ('add', 'add')),
        ('layers.0.mlp.gate_proj', 'mm', 'Inductor C++ template', 'unfused', (), ('silu', 'mul')),
        ('layers.0.mlp.up_proj', 'mm', 'Inductor C++ template', 'fused', ('mul',), ()),
        ('layers.0.mlp.down_proj', 'mm', 'Inductor C++ template', 'unfused', (), ('add', 'add')),
        ('layers.1.self_attn.q_proj', 'mm', 'Inductor C++ template', 'none', (), ()),
        ('layers.1.self_attn.k_proj', 'mm', 'Inductor C++ template', 'none', (), ()),
        ('layers.1.self_attn.v_proj', 'mm', 'Inductor C++ template', 'none', (), ()),
        ('layers.1.self_attn.o_proj', 'mm', 'Inductor C++ template', 'unfused', (), ('add', 'add')),
        ('layers.1.mlp.gate_proj', 'mm', 'Inductor C++ template', 'unfused', (), ('silu', 'mul')),
        ('layers.1.mlp.up_proj', 'mm', 'Inductor C++ template', 'fused', ('mul',), ()),
        ('layers.1.mlp.down_proj', 'mm', 'Inductor C++ template', 'partial', ('add',), ('mul', 'mul')),
    ]),
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
        d = ROOT / folder
        cap = next(json.loads(p.read_text()) for p in d.glob("modes/*/capture.json")
                   if json.loads(p.read_text()).get("mode") == mode)
        _CACHE[key] = build_mode_result(d, cap)
    return _CACHE[key]


@pytest.mark.parametrize(("folder", "mode", "summary", "rows"), EXPECTED,
                         ids=[f"{Path(f).name}-{Path(f).parent.name.split('-')[0]}-{m}" for f, m, _, _ in EXPECTED])
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
    sites = [[e.where for e in g.evidence if e.text.startswith("[dataflow] silu runs in")] for g in gates]
    assert len({s[0] for s in sites}) == 2  # two different call sites, one per layer


def test_identical_layers_are_grouped():
    m = mode_result("tests/data/h200-torch2.11-real-models/llama_block", "default")
    groups = {g.label: (g.count, g.summary) for g in m.gemm_groups}
    assert groups["layers.0-1.mlp.gate_proj"] == (2, "silu, mul unfused")
    assert groups["layers.0-1.self_attn.q_proj"] == (2, "no epilogue")
    # down_proj of the last layer is followed by the graph output: it differs and stands alone
    assert all(g.group for g in m.gemms)


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
    assert (g.op, g.fused, g.unfused, g.unfused_kernels) == ("_addmm_activation", ("bias",), ("gelu",), ("aten::gelu_",))
    assert "[addmm-activation] aten::_addmm_activation fell back to a separate gelu kernel aten::gelu_" in \
        [e.text for e in g.evidence]


def test_iterations_that_disagree_are_said():
    # tests/models/alternating.py takes GELU on odd calls and ReLU on even ones: the same kernel count per
    # iteration, other kernels. Iteration 0 (relu) is reported, and the difference is named.
    m = mode_result("tests/data/cpu-torch2.14.1/alternating", "eager")
    assert m.iterations.consistent is False and "different kernels" in m.iterations.note
    (g,) = m.gemms
    assert g.unfused == ("relu",)
    assert any(e.text.startswith("[iterations] differs from iteration 0") and "gelu unfused" in e.text
               for e in g.evidence)


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
