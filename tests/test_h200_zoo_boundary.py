"""Where a reduction ends a GEMM's epilogue, on the H200 zoo captures
(tests/data/h200-torch2.11-zoo, torch 2.11, bf16): the KernelBench-style GEMM + reduction problems
(tests/models/kb_*.py) and ResNet-50's last block, in eager, default and max-autotune. Each verdict was read from
the run's output code (modes/<mode>/code/graph_0.py) or, in eager, from the trace's ATen ops; the comments say what
the code shows. Read wrongly, every KB model would be "partial" in compiled modes (the statistic's ops counted as
unfused epilogue ops), and the conv before the pool's mean "none"."""

from __future__ import annotations

import json
from functools import cache

import pytest

from kernelscope.analysis.gemm import gemm_report
from kernelscope.analysis.kernels import analyze_kernels
from kernelscope.analysis.mode import build_mode_result
from kernelscope.report.evidence_words import evidence_text
from kernelscope.result import ModeResult
from kernelscope.trace import load_trace

from .zoo_fixtures import zoo_run

MODES = ("eager", "default", "max-autotune")


@cache
def _mode(name: str, mode: str) -> ModeResult:
    run = zoo_run(name)
    return build_mode_result(run, json.loads((run / "modes" / mode / "capture.json").read_text()))


def _gemm(name: str, mode: str):
    (g,) = _mode(name, mode).gemms
    return g


def _texts(g) -> list[str]:
    return [evidence_text(e) for e in g.evidence]


# (model, mode) -> (backend, verdict, fused, unfused)
VERDICTS = {
    # Linear -> GroupNorm -> Hardtanh. default: extern_kernels.addmm (graph_0.py:203) takes the bias; buf0 goes to
    # triton_per_fused_native_group_norm_0 (212), whose `tmp8 = tl.sum(tmp7, 1)` (86) is the mean, stored with the
    # variance in buf1, buf2; `buf4 = buf0; del buf0  # reuse`, then triton_poi_fused_hardtanh_native_group_norm_1
    # (217) mixes buf1/buf2 in at `tmp3 = tmp1 - tmp2` (157): the normalisation and Hardtanh are past the boundary.
    # max-autotune: the bias in triton_tem_fused_addmm_t_0 (`tmp1 = acc + tmp0`, 145), the same two kernels after.
    # eager: aten::addmm (nvjet *_bias_*), then aten::group_norm.
    ("kb_gemm_groupnorm_hardtanh", "eager"): ("cuBLASLt", "fused", ("bias",), ()),
    ("kb_gemm_groupnorm_hardtanh", "default"): ("cuBLASLt", "fused", ("bias",), ()),
    ("kb_gemm_groupnorm_hardtanh", "max-autotune"): ("Triton template", "fused", ("bias",), ()),
    # Linear -> BatchNorm1d (eval: _native_batch_norm_legit_no_training, pointwise) -> scale -> softmax. One
    # triton_red_ kernel (default graph_0.py:236): BN (`tmp4 = tmp1 - tmp3`, 123) and the sign of the scale
    # (`tmp29 = tmp22 * tmp28`, 143, stored to buf1) before the loop-carried max (`tmp32 =
    # triton_helpers.maximum(_tmp31, tmp30)`, 145); the second and third loops re-load buf1 and subtract the max.
    # eager: aten::batch_norm and aten::mul run as their own kernels, then aten::softmax.
    ("kb_gemm_bn_scale_softmax", "eager"): ("cuBLASLt", "partial", ("bias",), ("batch_norm", "mul")),
    ("kb_gemm_bn_scale_softmax", "default"): ("cuBLASLt", "partial", ("bias",), ("batch_norm", "mul")),
    ("kb_gemm_bn_scale_softmax", "max-autotune"): ("Triton template", "partial", ("bias",), ("batch_norm", "mul")),
    # Linear -> max over the features -> minus its mean -> GELU. triton_red_fused_gelu_max_mean_sub_0 (default
    # graph_0.py:150) loads buf0 and combines it into the loop-carried `_tmp2` at `tmp3 = triton_helpers.maximum(
    # _tmp2, tmp1)` (95, the old reading: an unfused relu); sub and GELU work on the max. eager: aten::addmm's
    # nvjet_*_bias_* kernel, then aten::max (a reduction): fused is right there too.
    ("kb_gemm_max_sub_gelu", "eager"): ("cuBLASLt", "fused", ("bias",), ()),
    ("kb_gemm_max_sub_gelu", "default"): ("cuBLASLt", "fused", ("bias",), ()),
    ("kb_gemm_max_sub_gelu", "max-autotune"): ("Triton template", "fused", ("bias",), ()),
    # Linear -> * 0.5 -> logsumexp -> LeakyReLU -> GELU. triton_red_fused_gelu_leaky_relu_logsumexp_mul_0 (default
    # 191): `tmp2 = tmp0 * tmp1` (x * 0.5) feeds the max (`tmp6 = triton_helpers.maximum(_tmp5, tmp4)`, 110); the
    # second loop scales again (`tmp9 = tmp7 * tmp8`, 122) and subtracts the max (`tmp16 = tmp10 - tmp15`, 129).
    # eager: aten::mul, then aten::logsumexp.
    ("kb_gemm_logsumexp_gelu", "eager"): ("cuBLASLt", "partial", ("bias",), ("mul",)),
    ("kb_gemm_logsumexp_gelu", "default"): ("cuBLASLt", "partial", ("bias",), ("mul",)),
    ("kb_gemm_logsumexp_gelu", "max-autotune"): ("Triton template", "partial", ("bias",), ("mul",)),
    # Linear -> softmax(x / 0.7). eager: aten::div runs on the GEMM's output before aten::softmax: an unfused
    # epilogue op. Compiled, Inductor moves the division past the max: triton_red_fused__softmax__to_copy_amax_
    # div_mul_sub_0 (default 170) takes the max of `tmp3 = tmp1 * tmp2` (x * 1.0, which computes nothing; `tmp6 =
    # triton_helpers.maximum(_tmp5, tmp4)`, 96) and scales x - max by 1/T (`tmp13 = tmp11 * tmp12`, tmp11 =
    # tmp10 - tmp5): no op is left on the GEMM's output before the reduction.
    ("kb_gemm_softmax_temp", "eager"): ("cuBLASLt", "partial", ("bias",), ("div",)),
    ("kb_gemm_softmax_temp", "default"): ("cuBLASLt", "fused", ("bias",), ()),
    ("kb_gemm_softmax_temp", "max-autotune"): ("Triton template", "fused", ("bias",), ()),
    # conv3x3 -> BN (eval) -> + identity -> ReLU -> global average pool. default: extern_kernels.convolution
    # (graph_0.py:270, bias=None), then triton_per_fused__native_batch_norm_legit_no_training_add_mean_relu_2 (278)
    # computes BN (`tmp4 = tmp1 - tmp3`, 204), the add (`tmp23 = tmp21 + tmp22`, 219) and ReLU (`tmp25 =
    # triton_helpers.maximum(tmp24, tmp23)`, 221) before `tmp30 = tl.sum(tmp29, 1)` (225): the conv's unfused
    # epilogue (before: "none", the three only fed the sum). max-autotune: triton_tem_fused_convolution_2, the same
    # reduction kernel (_3). eager: aten::batch_norm, aten::add, aten::relu, then aten::adaptive_avg_pool2d.
    ("kb_conv_block_avgpool", "eager"): ("cuDNN", "unfused", (), ("batch_norm", "add", "relu")),
    ("kb_conv_block_avgpool", "default"): ("cuDNN", "unfused", (), ("batch_norm", "add", "relu")),
    ("kb_conv_block_avgpool", "max-autotune"): ("Triton template", "unfused", (), ("batch_norm", "add", "relu")),
}


@pytest.mark.parametrize(("name", "mode"), list(VERDICTS), ids=[f"{n}-{m}" for n, m in VERDICTS])
def test_kb_verdicts_read_from_the_code(name: str, mode: str):
    g = _gemm(name, mode)
    assert (g.backend, g.verdict, g.fused, g.unfused) == VERDICTS[(name, mode)]


@pytest.mark.parametrize("mode", ["default", "max-autotune"])
def test_split_group_norm_stops_at_the_statistics(mode: str):
    g = _gemm("kb_gemm_groupnorm_hardtanh", mode)
    per, poi = (("triton_per_fused_native_group_norm_0", "triton_poi_fused_hardtanh_native_group_norm_1")
                if mode == "default" else
                ("triton_per_fused_native_group_norm_1", "triton_poi_fused_hardtanh_native_group_norm_2"))
    t = _texts(g)
    assert any(x.startswith(f"[dataflow] chain stops in {per} ") and "`tmp8 = tl.sum(tmp7, 1)[:, None]" in x
               and x.endswith("a reduction reads it") for x in t)
    # the in-place normalisation kernel (buf4 = buf0) combines the GEMM's output with the mean and variance
    assert any(x.startswith(f"[dataflow] chain stops in {poi} ") and "`tmp3 = tmp1 - tmp2`" in x
               and x.endswith("statistics an earlier kernel reduced from it (in_ptr0=buf1, in_ptr1=buf2)")
               for x in t)


@pytest.mark.parametrize("name", ["kb_gemm_max_sub_gelu", "kb_gemm_logsumexp_gelu", "kb_gemm_softmax_temp",
                                  "kb_gemm_bn_scale_softmax"])
def test_a_loop_carried_max_is_where_the_chain_stops(name: str):
    # the combine into the loop-carried accumulator (`tmpN = triton_helpers.maximum(_tmpM, tmpK)`) is the
    # reduction: no relu, no "float" from `tl.full(..., float("-inf"))`
    for mode in ("default", "max-autotune"):
        g = _gemm(name, mode)
        assert not {"relu", "float", "exp", "sub", "div"} & set(g.unfused), (name, mode)
        stop = [x for x in _texts(g) if x.startswith("[dataflow] chain stops in triton_red_")]
        assert len(stop) == 1 and "= triton_helpers.maximum(_tmp" in stop[0], (name, mode)


def test_resnet50_last_block_is_the_conv_epilogue_in_every_mode():
    # default (tv_resnet50 graph_0.py:3330): triton_per_fused__native_batch_norm_legit_no_training_add_mean_relu_23
    # reads layer4.2.conv3's output (buf123, extern_kernels.convolution at 3323) and layer4.1's block output
    # (buf117), computes BN, `tmp23 = tmp21 + tmp22` and ReLU, then `tmp30 = tl.sum(tmp29, 1)` (2160): the pool.
    # eager: aten::batch_norm, aten::add_, aten::relu_, then aten::adaptive_avg_pool2d.
    got = {}
    for mode in ("eager", "default"):
        m = _mode("tv_resnet50", mode)
        (g,) = [g for g in m.gemms if g.module == "layer4.2.conv3"]
        got[mode] = (g.verdict, g.fused, g.unfused)
        assert m.gemm_summary == "GEMMs 54: fused 1, unfused 53", mode
    assert got["eager"] == got["default"] == ("unfused", (), ("batch_norm", "add", "relu"))
    g = next(g for g in _mode("tv_resnet50", "default").gemms if g.module == "layer4.2.conv3")
    assert g.unfused_kernels == ("triton_per_fused__native_batch_norm_legit_no_training_add_mean_relu_23",)
    # every conv reads the same in eager and compiled code (eager saw 47 GEMMs before: cuDNN's
    # cutlass__5x_cudnn::Kernel<...fprop...> kernels were not GEMM kernels)
    eager, default = (_mode("tv_resnet50", mode).gemms for mode in ("eager", "default"))
    assert [(g.module, g.verdict, g.unfused) for g in eager] == [(g.module, g.verdict, g.unfused) for g in default]


def test_resnet50_conv1_bn_relu_run_before_the_max_pools_kernel():
    # default (tv_resnet50 graph_0.py): conv1 (extern_kernels.convolution, 2468), then
    # triton_poi_fused__native_batch_norm_legit_no_training_relu_2 (2476) normalises buf3 in place (`tmp4 = tmp1 -
    # tmp3`, 186; ReLU `tmp23 = triton_helpers.maximum(tmp22, tmp21)`, 202); ..._max_pool2d_with_indices_relu_3
    # (2485) only takes the max of 9 masked loads of buf3 (`tmp18 = triton_helpers.maximum(tmp11, tmp17)`, 282):
    # its name lists BN and ReLU (the fused nodes), its body computes neither. The verdict reads the bodies.
    (g,) = [g for g in _mode("tv_resnet50", "default").gemms if g.module == "conv1"]
    assert (g.verdict, g.unfused) == ("unfused", ("batch_norm", "relu"))
    assert g.unfused_kernels == ("triton_poi_fused__native_batch_norm_legit_no_training_relu_2",)
    assert any(t.startswith("[dataflow] chain stops in triton_poi_fused__native_batch_norm_legit_no_training_max_pool2d"
                            "_with_indices_relu_3 (graph_0.py:2485): it pools a window")
               and t.endswith("`tmp18 = triton_helpers.maximum(tmp11, tmp17)` (graph_0.py:282)") for t in _texts(g))


@pytest.mark.parametrize("name", ["kb_gemm_groupnorm_hardtanh", "kb_gemm_max_sub_gelu", "kb_conv_block_avgpool"])
def test_trace_only_stops_at_the_reduction_kernel_and_says_what_its_name_cannot(name: str):
    # without the code the reduction kernel ends the chain; its name lists ops that may come before the reduction
    # (the conv's BN, add, ReLU) or after it (max_sub_gelu's sub, GELU), sorted, so it cannot say which
    run = zoo_run(name)
    cap = json.loads((run / "modes" / "default" / "capture.json").read_text())
    trace = load_trace(run / cap["trace"])
    (g,) = gemm_report(analyze_kernels(trace), trace, (), mode="default", mode_config=cap["config"]).gemms
    stop = [evidence_text(e) for e in g.evidence if e.rule == "trace-only.stop"]
    assert len(stop) == 1 and "(reduction; its name lists" in stop[0]
    if name == "kb_conv_block_avgpool":
        assert g.verdict == "none" and stop[0].endswith(
            "it also lists _native_batch_norm_legit_no_training, add, relu, which may run before the reduction "
            "(epilogue ops) or after it; a name does not say which")
    else:
        assert g.fused == ("bias",) and g.unfused == ()


# ------------------------------------------------------------------------------ a select by position is no op
def _group(name: str, mode: str, label: str):
    return next(g for g in _mode(name, mode).gemm_groups if g.label == label)


@pytest.mark.parametrize("mode", ["default", "max-autotune"])
def test_a_cat_in_the_consumer_kernel_is_no_epilogue_op(mode: str):
    # ViT's patch embedding: triton_red_fused_add_cat_convolution_..._0 (hf_vit default graph_0.py) loads the conv's
    # buf0 (`tmp9`), adds the conv bias (`tmp11 = tmp9 + tmp10`), then `tmp13 = tl.where(tmp6, tmp11, tmp12)` and
    # `tmp14 = tl.where(tmp4, tmp5, tmp13)`, where tmp4/tmp6 are `x1 < 1` / `x1 >= 1` (x1 the token index) and tmp5
    # the class token: torch.cat((cls, patches), 1), then `tmp16 = tmp14 + tmp15` (the position embeddings) and the
    # LayerNorm's welford. Before, the two cat selects read as two unfused `where` ops; eager lists bias, add.
    g = _group("hf_vit", mode, "embeddings.patch_embeddings.projection")
    assert (g.verdict, g.fused, g.unfused) == ("unfused", (), ("bias", "add"))
    assert _group("hf_vit", "eager", "embeddings.patch_embeddings.projection").unfused == ("bias", "add")


def test_rotate_half_is_a_cat_of_the_gemms_own_halves_not_a_where():
    # Llama's q_proj in default: triton_poi_..._where_4 (hf_llama graph_0.py) reads buf at `tmp0` (x cos), and
    # rotate_half as `tmp15 = tl.where(tmp11, -tmp12, 0)` then `tmp20 = tl.where(tmp11, tmp15, tmp19)` with tmp11 =
    # `x1 < 32` (the head-dim index) and tmp12/tmp19 the two halves of the same GEMM output: a cat of (-x2, x1)
    # that moves elements; the ops are the two muls (x * cos, rotate_half(x) * sin), the neg and the add, as eager
    # lists them
    g = _group("hf_llama", "default", "model.layers.0-3.self_attn.q_proj")
    assert (g.verdict, g.unfused) == ("unfused", ("mul", "neg", "mul", "add"))
    assert _group("hf_llama", "eager", "model.layers.0-3.self_attn.q_proj").unfused == ("mul", "neg", "mul", "add")


def test_a_causal_mask_compares_two_indices_and_stays_an_op():
    # The rule above holds only for a condition on one index and constants: `tl.where(x0 <= x1, s, -inf)` (a causal
    # mask on a QK^T GEMM's scores) compares two indices and is computation on the scores
    from kernelscope.analysis.gemm.body import _positional, parse_triton

    src = '''
@triton.jit
def k(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:]
    x0 = xindex % 512
    x1 = xindex // 512
    tmp0 = tl.load(in_ptr0 + (xindex), None)
    tmp1 = x0
    tmp2 = x1
    tmp3 = tmp1 <= tmp2
    tmp4 = x0
    tmp5 = tl.full([1], 1, tl.int64)
    tmp6 = tmp4 < tmp5
    tmp7 = tl.where(tmp3, tmp0, float("-inf"))
    tl.store(out_ptr0 + (xindex), tmp7, None)
'''
    body = parse_triton(src, "k", ["in_ptr0", "out_ptr0"])
    assert body is not None
    assert not _positional(body, "tmp3") and _positional(body, "tmp6") and not _positional(body, "tmp0")


@pytest.mark.parametrize("mode", ["default", "max-autotune"])
def test_a_value_the_kernel_stores_and_reads_back_is_still_the_gemms_data(mode: str):
    # Llama's o_proj of layers 1 and 3 (hf_llama default graph_0.py, triton_red_..._rsqrt_10): the first loop adds
    # the residuals and o_proj's buf40 (`tmp12 = tmp10 + tmp11`), stores the sum into in_out_ptr0 and sums
    # `tmp14 = tmp13 * tmp13` for the RMSNorm's mean; the second loop reads the sum back from in_out_ptr0 (`tmp19`)
    # and normalises it with the statistic. So x * x belongs to the reduction, as in layers 0 and 2, whose kernel
    # recomputes the add from the GEMM's buffer. Before, the read-back was not the GEMM's data: layers 1 and 3 read
    # "add, mul", a group apart from layers 0 and 2's "add".
    g = _group("hf_llama", mode, "model.layers.0-3.self_attn.o_proj")
    assert (g.count, g.verdict, g.unfused) == (4, "unfused", ("add",))


def test_a_pad_for_the_next_gemm_is_no_leaky_relu():
    # ViT's q_proj and k_proj in default: Inductor decomposes attention and pads its 197 tokens to 200 for the bmm;
    # triton_poi_fused__to_copy__unsafe_view_bmm_clone_mul_transpose_view_3 (hf_vit default graph_0.py:350) reads
    # the addmm's buf9, scales it (`tmp6 = tmp4 * 0.3535...`, the attention's scale) and pads it (`tmp8 =
    # tl.where(tmp2, tmp6, 0.0)` with tmp2 = `x2 < 197`, the token index). Before, a where with a mul among its
    # inputs read as a leaky ReLU (ViT has none); the scale is the one unfused op, as max-autotune's code reads.
    for mode in ("default", "max-autotune"):
        for proj in ("q_proj", "k_proj"):
            g = _group("hf_vit", mode, f"layers.0-11.attention.{proj}")
            assert (g.verdict, g.fused, g.unfused) == ("partial", ("bias",), ("mul",)), (mode, proj)


def test_gpt2s_written_out_gelu_is_one_op_in_eager_as_in_compiled_code():
    # GPT-2's NewGELUActivation writes GELU's tanh form out: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 *
    # x ** 3))), eight ATen ops in eager. Their dataflow (a cube under a tanh, then 1 + it times x / 2) is
    # gelu-tanh, the op compiled code's body computes
    for mode in ("eager", "default", "max-autotune"):
        fc = [g for g in _mode("hf_gpt2", mode).gemms if g.module.endswith("mlp.c_fc")]
        assert len(fc) == 12 and {(g.verdict, g.fused, g.unfused) for g in fc} == {
            ("partial", ("bias",), ("gelu-tanh",))}, mode
    (gemm,) = [x for x in _mode("hf_gpt2", "eager").gemms if x.module == "transformer.h.0.mlp.c_fc"]
    (ev,) = [e for e in gemm.evidence if e.rule == "eager-dataflow.gelu-tanh"]
    assert ev.facts["ops"] == ("aten::mul", "aten::pow", "aten::mul", "aten::add", "aten::mul", "aten::tanh",
                               "aten::add", "aten::mul")
