"""What is a GEMM: a kernel whose body computes a matrix product, whatever its name, decorator or graph fragment
says; an eager kernel a GEMM-class op launched; a grouped GEMM once; the GEMMs a call of another op (a custom op)
runs inside it. Read from recorded H200 output code (torch 2.11 and 2.14.1) and from small edits of it where the
recordings hold no such kernel yet (a fused prologue whose inputs the fragment leaves out)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kernelscope.analysis.gemm.dataflow import code_gemms, gemm_of_kernel
from kernelscope.analysis.kernels import _by_launching_op
from kernelscope.inductor_code import parse_output_code
from kernelscope.report.evidence_words import evidence_text

from .zoo_fixtures import zoo_run

DATA = Path(__file__).resolve().parent / "data"
PROLOGUE = DATA / "h200-torch2.11-kernelscope" / "prologue_forced" / "modes" / "max-autotune_TRITON" / "code" / \
    "graph_0.py"
ZOO_AUTOTUNE = ("hf_bert", "hf_gpt2", "hf_llama", "hf_vit", "kb_conv_block_avgpool", "kb_gemm_bn_scale_softmax")


def _code_files() -> list[Path]:
    files = [p for p in DATA.rglob("*.py") if "async_compile.triton" in p.read_text(errors="replace")]
    return sorted(files) + [zoo_run(name) / "modes" / "max-autotune" / "code" / "graph_0.py" for name in ZOO_AUTOTUNE]


def test_every_recorded_triton_kernel_that_runs_a_dot_is_a_gemm_and_no_other_is():
    # GIVEN every Triton kernel of the recorded H200 output code (templates of mm, addmm, bmm, convolutions)
    dots = others = 0
    for path in _code_files():
        for code in parse_output_code(path.read_text(), str(path)):
            for kd in code.kernels:
                if not kd.kind.startswith("triton"):
                    continue
                # THEN the kernel runs a dot exactly when its source calls tl.dot outside a comment, and it is a
                # GEMM exactly then
                said = bool(re.search(r"^[^#\n]*\btl\.dot\(", kd.source, re.MULTILINE))
                assert kd.runs_dot == said, (path, kd.name)
                assert (gemm_of_kernel(kd) is not None) == said, (path, kd.name)
                dots += said
                others += not said
    assert (dots, others) == (80, 198)  # what the recordings hold


def _hidden_gemm_node(text: str) -> str:
    """The recorded prologue template with its weight's placeholder left out of the fragment: the fragment then
    shows neither the transpose nor the GEMM node computed in the kernel (as a fused prologue whose inputs the
    fragment leaves out does)."""
    lines = text.splitlines(keepends=True)
    out = [ln for ln in lines if not (ln.startswith("#   %arg1_1 : Tensor") and "PlaceHolder" in ln)]
    assert len(out) == len(lines) - 1
    return "".join(out)


def test_a_template_whose_fragment_hides_its_gemm_is_a_gemm_by_its_dot():
    # GIVEN the H200 template triton_tem_fused_mm_mul_relu_t_0 (x * 0.5 fused as its prologue, ReLU as its
    # epilogue), its fragment no longer showing the mm computed there
    (code,) = parse_output_code(_hidden_gemm_node(PROLOGUE.read_text()), "graph_0.py")
    kd = code.kernel("triton_tem_fused_mm_mul_relu_t_0")
    assert kd is not None and kd.runs_dot
    assert not any(n.aten_op == "mm" for n in kd.computed_here)
    # THEN the body's tl.dot says it is the GEMM, its node from the fragment's nodes, and its own evidence says so
    op, node = gemm_of_kernel(kd)
    assert (op, node.name) == ("mm", "mm")
    (g,) = code_gemms(code)
    assert (g.op, g.m, g.n, g.k) == ("mm", 2048, 2048, 2048)
    # the epilogue is what follows the accumulator (the ReLU), never the prologue's mul
    assert [(c.label, c.fused) for c in g.chain] == [("relu", True)]
    texts = [evidence_text(e) for e in g.evidence]
    # (``acc += tl.dot(a, b, ...)``: line 141 of the recording, 140 with the placeholder line left out)
    assert any("its body's tl.dot (graph_0.py:140) computes it" in t for t in texts), texts


def _gemm_before_the_template(text: str) -> str:
    """The recorded template's prologue input made the result of an extern mm (buf0 = arg2_1 @ arg3_1), which the
    template reads through its prologue parameter in_ptr1 and scales by 0.5 before its dot."""
    text = text.replace(
        "        arg0_1, arg1_1 = args\n",
        "        arg0_1, arg1_1, arg2_1, arg3_1 = args\n")
    text = text.replace(
        "            buf2 = empty_strided_cuda((2048, 2048), (2048, 1), torch.float32)\n",
        "            buf0 = empty_strided_cuda((2048, 2048), (2048, 1), torch.float32)\n"
        "            extern_kernels.mm(arg2_1, arg3_1, out=buf0)\n"
        "            buf2 = empty_strided_cuda((2048, 2048), (2048, 1), torch.float32)\n")
    return text.replace("triton_tem_fused_mm_mul_relu_t_0.run(arg1_1, arg0_1, buf2,",
                        "triton_tem_fused_mm_mul_relu_t_0.run(arg1_1, buf0, buf2,")


def test_ops_a_fused_prologue_computes_on_a_gemm_result_are_that_gemms_and_end_its_chain():
    # GIVEN an extern mm whose result the next GEMM's template reads through its fused prologue (x * 0.5)
    (code,) = parse_output_code(_gemm_before_the_template(PROLOGUE.read_text()), "graph_0.py")
    first, template = code_gemms(code)
    assert (first.launch.name, template.launch.name) == ("extern_kernels.mm", "triton_tem_fused_mm_mul_relu_t_0")
    # THEN the mul is the first GEMM's epilogue op, run in the other GEMM's kernel (not fused into its own call),
    # and its chain stops at that GEMM's dot: the template's ReLU is not the first GEMM's
    assert [(c.label, c.fused, c.in_gemm) for c in first.chain] == [("mul", False, True)]
    texts = [evidence_text(e) for e in first.evidence] + [evidence_text(c.evidence) for c in first.chain]
    assert any(t.startswith("[dataflow] mul runs in triton_tem_fused_mm_mul_relu_t_0, the next GEMM's template")
               and "its prologue computes it on the GEMM result (through in_ptr1=buf0)" in t for t in texts), texts
    assert any("chain stops at triton_tem_fused_mm_mul_relu_t_0" in t for t in texts), texts
    # and the template's own epilogue is still its ReLU, its prologue the mul
    assert [(c.label, c.fused) for c in template.chain] == [("relu", True)]
    assert template.prologue == ("mul",)


@pytest.mark.parametrize(("kernel", "category"), [
    # ATen's own depthwise convolution, where cuDNN does not run it: the convolution's GEMM
    ("void at::native::(anonymous namespace)::conv_depthwise2d_forward_kernel<1, float, int>("
     "at::GenericPackedTensorAccessor<float const, 4ul, at::DefaultPtrTraits, int>)", "gemm"),
    ("void at::native::(anonymous namespace)::conv_depthwise3d_cuda_kernel<float, float, 3, 3, 3, 1, 1, 1, 1, 1, "
     "1>(at::GenericPackedTensorAccessor<float const, 5ul, at::DefaultPtrTraits, int>)", "gemm"),
    # cuDNN's depthwise and grouped kernels, whose names say nothing of GEMMs
    ("void cudnn::cnn::conv2d_grouped_direct_kernel<false, true, false, false, 0, 0, int, float, float, float, "
     "float, float, float>(cudnn::cnn::GroupedDirectFpropParams, float const*)", "gemm"),
    ("void convolve_common_engine_float_NHWC<__nv_bfloat16, __nv_bfloat16, 128, 5, 5, 3, 3, 3, true, false>", "gemm"),
    # helpers and ATen's elementwise kernels stay what they are
    ("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::"
     "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const>", "pointwise"),
    ("void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, false, true>", "other"),
])
def test_a_kernel_a_convolution_op_launched_is_its_gemm_unless_a_helper(kernel, category):
    for op in ("aten::_conv_depthwise2d", "aten::cudnn_convolution", "aten::conv_depthwise3d"):
        assert _by_launching_op(kernel, (op, "gemm"))[0] == category
