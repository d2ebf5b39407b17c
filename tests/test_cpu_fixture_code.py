"""The committed CPU fixtures (tests/data/cpu-torch2.14.1) still hold the code their README's ground-truth tables
were read from: the wrapper's call sites, in launch order, per mode. A re-record that changes them must re-read
the tables. No torch needed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .zoo_fixtures import extract_run

CPU = Path(__file__).resolve().parent / "data" / "cpu-torch2.14.1"
_CALL = re.compile(r"^\s+(?:buf\d+ = )?(cpp_fused_\w+|torch\.ops\.\w+\.\w+\.\w+|extern_kernels\.\w+)\(", re.M)
_SHORT = {"torch.ops.mkl._mkl_linear.default": "mkl", "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu"
          ".default": "sdpa", "torch.ops.mkldnn._convolution_pointwise.default": "conv",
          "torch.ops.mkldnn._convolution_pointwise.binary": "conv.binary", "extern_kernels.bmm": "bmm",
          "extern_kernels.convolution": "aten.conv", "extern_kernels.addmm": "addmm"}


def _run(model: str) -> Path:
    """A model's run directory: a folder, or (the kb_* problems) a <model>.tar.gz extracted for the session."""
    tarball = CPU / f"{model}.tar.gz"
    return extract_run(tarball) if tarball.is_file() else CPU / model


def _calls(model: str, mode: str) -> list[str]:
    code = (_run(model) / "modes" / mode / "code" / "graph_0.py").read_text()
    body = code[code.index("    def call(self, args):"):code.index("\nrunner = Runner(")]
    # cpp_fused kernels by their number (the suffix), externs by a short name
    return [_SHORT.get(c) or f"k{c.rsplit('_', 1)[1]}" for c in _CALL.findall(body)]


@pytest.mark.parametrize(("model", "mode", "calls"), [
    ("llama_block", "default", ["k0", "mkl", "mkl", "mkl", "sdpa", "mkl", "k1", "mkl", "mkl", "k2", "mkl", "k3",
                                "mkl", "mkl", "mkl", "sdpa", "mkl", "k4", "mkl", "mkl", "k2", "mkl", "k5"]),
    ("llama_block", "max-autotune", ["k0", "k1", "k1", "k1", "sdpa", "k1", "k2", "k3", "k4", "mkl", "k5",
                                     "k1", "k1", "k1", "sdpa", "k1", "k6", "k3", "k4", "mkl", "k7"]),
    ("llama_block", "max-autotune_CPP", ["k0", "k1", "k1", "k1", "sdpa", "k1", "k2", "k3", "k4", "k5", "k6",
                                         "k1", "k1", "k1", "sdpa", "k1", "k7", "k3", "k4", "k8", "k9"]),
    ("bert_layer", "default", ["mkl", "mkl", "mkl", "k0", "sdpa", "mkl", "k1", "mkl", "k2", "mkl", "k1"]),
    ("bert_layer", "max-autotune", ["k0", "k0", "k0", "sdpa", "k1", "k2", "mkl", "k3", "mkl", "k2"]),
    ("conv_bn_relu", "default", ["k0", "conv", "conv.binary", "k1"]),
    ("conv_bn_relu", "max-autotune", ["k0", "conv", "conv.binary", "k1"]),
    # k1 max_pool2d, k2 avg_pool2d (the pools after conv1, conv2); k4: one bias-add definition for q, k and v
    ("pool_attention", "default", ["k0", "conv", "k1", "conv", "k2", "mkl", "k3", "mkl", "k4", "mkl", "k4", "mkl",
                                   "k4", "sdpa", "k5", "bmm", "k6", "bmm", "k7"]),
    ("pool_attention", "max-autotune", ["k0", "conv", "k1", "conv", "k2", "k3", "k4", "k4", "k4", "sdpa", "k5",
                                        "bmm", "k6", "bmm", "k7"]),
    # k6 and k8 are the C++ bmm templates
    ("pool_attention", "max-autotune_CPP", ["k0", "conv", "k1", "conv", "k2", "k3", "k4", "k4", "k4", "sdpa", "k5",
                                            "k6", "k7", "k8", "k9"]),
    # GEMM + reduction: the Linear (mkl, or the template k0), then ONE kernel with the bias add and the reduction
    ("kb_gemm_groupnorm_hardtanh", "default", ["mkl", "k0"]),
    ("kb_gemm_groupnorm_hardtanh", "max-autotune", ["k0", "k1"]),
    ("kb_gemm_bn_scale_softmax", "default", ["mkl", "k0"]),
    ("kb_gemm_bn_scale_softmax", "max-autotune", ["k0", "k1"]),
    ("kb_gemm_max_sub_gelu", "default", ["mkl", "k0"]),
    ("kb_gemm_max_sub_gelu", "max-autotune", ["k0", "k1"]),
    # ResNet-18 bf16 (freezing: BN folded into each conv's bias): k0 the input's layout, conv1, k1 ReLU + max pool;
    # per basic block conv, k2/4/6/8 ReLU, conv, k3/5/7/9 add + ReLU (layer2-4's first block: its downsample conv
    # before the add); k10 the last block's add + ReLU with the mean; fc's addmm
    ("tv_resnet18_bf16", "default", ["k0", "aten.conv", "k1",
                                     "aten.conv", "k2", "aten.conv", "k3", "aten.conv", "k2", "aten.conv", "k3",
                                     "aten.conv", "k4", "aten.conv", "aten.conv", "k5", "aten.conv", "k4", "aten.conv",
                                     "k5",
                                     "aten.conv", "k6", "aten.conv", "aten.conv", "k7", "aten.conv", "k6", "aten.conv",
                                     "k7",
                                     "aten.conv", "k8", "aten.conv", "aten.conv", "k9", "aten.conv", "k8", "aten.conv",
                                     "k10", "addmm"]),
])
def test_call_sites_are_those_the_readme_describes(model, mode, calls):
    assert _calls(model, mode) == calls


def test_every_mkl_linear_has_no_bias_and_fixture_files_stay_small():
    runs = [_run(t.name.removesuffix(".tar.gz")) for t in CPU.glob("*.tar.gz")]
    # the kb_* problems, timm_convnext_bf16, tv_resnet18_bf16, the zoo models of test_zoo_paths_cpu.py,
    # tv_swin_bf16 (test_eager_views.py), hf_mixtral_fp32 and custom_op_gemms (test_gemm_oracle.py)
    assert len(runs) == 13
    for code in [*CPU.glob("*/modes/*/code/graph_0.py"), *(c for r in runs for c in r.glob("modes/*/code/graph_0.py"))]:
        for args in re.findall(r"torch\.ops\.mkl\._mkl_linear\.default\((.*)\)", code.read_text()):
            assert re.search(r", None, (32|16)$", args), (code, args)  # the bias goes to a separate C++ kernel
    assert all(f.stat().st_size < 2_000_000 for f in CPU.rglob("*") if f.is_file())
    assert sum(f.stat().st_size for f in CPU.rglob("*") if f.is_file()) < 6_000_000
