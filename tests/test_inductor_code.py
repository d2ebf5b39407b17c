"""Inductor output-code parsing, on real output code recorded on the H200 (torch 2.11 and 2.14.1)."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from kernelscope.errors import CodeFileError
from kernelscope.inductor_code import (
    MODULE_SEPARATOR,
    KernelKind,
    load_output_code,
    name_tokens,
    op_base_name,
    parse_output_code,
    torch_dtype_name,
)
from tests.conftest import H200_211, H200_2141


def one(path: Path):
    (code,) = load_output_code(path)
    return code


def test_triton_template_and_pointwise_kernels_with_their_graph_fragments():
    # GIVEN max-autotune output for Linear(4096, 4096) + GELU (fp16, batch 16), torch 2.11
    code = one(H200_211 / "seed-max-autotune.code.py")
    # THEN two kernels, a Triton GEMM template and a Triton pointwise kernel
    assert [(k.name, k.kind) for k in code.kernels] == [
        ("triton_tem_fused_addmm_t_0", KernelKind.TRITON_TEMPLATE.value),
        ("triton_poi_fused_gelu_1", KernelKind.TRITON_POINTWISE.value),
    ]
    tem, poi = code.kernels
    assert tem.origins == ("aten.t", "aten.addmm")
    assert tem.source_nodes == ("input_1",)
    assert tem.node_mapping == (("input_1", ("addmm", "permute")),)
    assert [(n.name, n.op) for n in tem.fragment] == [
        ("arg1_1", "placeholder"),
        ("arg2_1", "placeholder"),
        ("arg0_1", "placeholder"),
        ("permute", "call_function"),
        ("addmm", "call_function"),
    ]
    addmm = tem.node("addmm")
    assert addmm.aten_op == "addmm"
    assert addmm.target == "torch.ops.aten.addmm.default"
    assert addmm.inputs == ("arg1_1", "arg2_1", "permute")
    assert (addmm.dtype, addmm.shape, addmm.num_users, addmm.line) == ("float16", (16, 4096), 1, 46)
    assert tem.returns == ("addmm",)
    assert tem.params == ("in_ptr0", "arg_A", "arg_B", "out_ptr0")
    assert tem.outputs == ("out_ptr0",)
    # The GELU kernel reads the GEMM result as a PlaceHolder: the dataflow between the two kernels.
    assert poi.placeholders[0].name == "addmm"
    assert poi.node("convert_element_type_3").inputs == ("addmm",)
    assert [n.aten_op for n in poi.computed] == [
        "convert_element_type",
        "mul",
        "mul",
        "erf",
        "add",
        "mul",
        "convert_element_type",
    ]
    assert poi.outputs == ("in_out_ptr0",)


def test_wrapper_launch_order_buffers_and_reuse():
    code = one(H200_211 / "seed-max-autotune.code.py")
    assert code.graph_inputs == ("arg0_1", "arg1_1", "arg2_1")
    assert [(x.index, x.kind, x.name, x.reads, x.writes) for x in code.launches] == [
        (0, "kernel", "triton_tem_fused_addmm_t_0", ("arg1_1", "arg2_1", "arg0_1"), ("buf0",)),
        (1, "kernel", "triton_poi_fused_gelu_1", ("buf1",), ("buf1",)),  # in_out_ptr0: read and written
    ]
    assert [x.line for x in code.launches] == [227, 235]
    assert code.aliases == (("buf1", "buf0"),)  # buf1 = buf0; del buf0  # reuse
    assert code.storage("buf1") == "buf0"
    assert code.outputs == ("buf1",)
    assert code.device == "cuda"
    buf = code.buffer("buf1")  # an alias answers with its storage's allocation
    assert (buf.name, buf.shape, buf.dtype) == ("buf0", (16, 4096), "float16")
    assert code.buffer("arg2_1").shape == (16, 4096)


def test_extern_gemm_call_and_its_origins_comment():
    code = one(H200_211 / "seed-default.code.py")
    ext, poi = code.launches
    assert (ext.kind, ext.name, ext.op) == ("extern", "extern_kernels.addmm", "addmm")
    assert ext.reads == ("arg1_1", "arg2_1", "arg0_1")
    assert ext.writes == ("buf0",)  # out=buf0
    assert ext.origins == ("aten.t", "aten.addmm")
    assert ext.source_nodes == ("input_1",)
    assert ext.args[2] == "reinterpret_tensor(arg0_1, (4096, 4096), (1, 4096), 0)"
    assert ("out", "buf0") in ext.kwargs
    assert poi.name == "triton_poi_fused_gelu_0"
    # max-autotune picked cuBLASLt's bias epilogue path: extern_kernels.bias_addmm
    (ext2, _) = one(H200_211 / "big-max-autotune.code.py").launches
    assert (ext2.name, ext2.op) == ("extern_kernels.bias_addmm", "bias_addmm")


def test_cutlass_cpp_kernel_named_fused_has_no_epilogue_in_its_fragment():
    code = one(H200_211 / "sbr-cutlass-noevt.code.py")
    cut, poi = code.kernels
    assert (cut.name, cut.kind, cut.method) == ("cutlass_fused_mm_t_94eaa40b", "cutlass_cpp", "cuda")
    # "fused" in the name, but the fragment holds only the mm (and the weight's permute)
    assert [n.aten_op for n in cut.computed] == ["permute", "mm"]
    assert cut.params[:3] == ("X", "W", "Y")
    assert cut.outputs == ("Y",)
    assert cut.get("cutlass_config").startswith(
        "cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x128x64"
    )
    launch = code.launches[0]  # cutlass_fused_mm_t_94eaa40b.cutlass_fused_mm_t_94eaa40b(c_void_p(...), ...)
    assert (launch.name, launch.reads, launch.writes) == (cut.name, ("arg1_1", "arg0_1"), ("buf0",))
    assert poi.node_mapping == (("add", ("add",)), ("mul", ("mul",)), ("relu", ("relu",)))
    assert [(n.name, n.inputs) for n in poi.computed] == [
        ("mul", ("mm",)),
        ("add", ("mul", "arg2_1")),
        ("relu", ("add",)),
    ]


def test_nv_universal_gemm_kernel():
    code = one(H200_2141 / "mmrelu-nvgemm.code.py")
    nv = code.kernels[0]
    assert (nv.name, nv.kind) == ("nv_universal_gemm_fused_mm_t_fa23e97c", "nv_universal_gemm")
    assert nv.get("has_epilogue") == "False"
    assert nv.get("operator") == (
        "cutedsl.Sm90StaticPersistentGemmOperator_tnt_ABFloat16_BBFloat16_outBFloat16_accFloat32_"
        "cluster1x1x1_tile64x256x64"
    )
    assert nv.params == ("in_ptr0", "in_ptr1", "out_ptr0")
    assert [(x.name, x.reads, x.writes) for x in code.launches] == [
        ("nv_universal_gemm_fused_mm_t_fa23e97c", ("arg1_1", "arg0_1"), ("buf0",)),
        ("triton_poi_fused_relu_0", ("buf1",), ("buf1",)),
    ]
    # assert_size_stride_grouped gives the inputs' shapes
    assert code.buffer("arg1_1").shape == (2048, 4096)


def test_template_fragment_lists_its_gemm_node_twice():
    # torch 2.14.1 lists the template's GEMM node as a PlaceHolder and as the call_function that computes it.
    tem = one(H200_2141 / "seed-aten-triton.code.py").kernels[0]
    assert [n.name for n in tem.fragment].count("addmm") == 2
    assert tem.node("addmm").op == "call_function"
    assert tem.returns == ("addmm", "convert_element_type_4")
    assert tem.node_mapping == (
        ("gelu", ("add", "convert_element_type_3", "convert_element_type_4", "erf", "mul", "mul_1", "mul_2")),
        ("linear", ("addmm", "permute")),
    )


H200_KS = H200_211.parent / "h200-torch2.11-kernelscope"


def test_template_lists_the_origin_of_an_input_it_only_reads():
    # relu((x * 0.5).bf16 @ W.T): the template's fragment lists mul and the cast, but %convert_element_type is
    # also a
    # PlaceHolder (read from buf0, written by triton_poi_fused__to_copy_mul_0) and mul's input is not in the
    # kernel.
    code = one(H200_KS / "prologue" / "modes" / "max-autotune_TRITON" / "code" / "graph_0.py")
    tem = code.kernel("triton_tem_fused__to_copy_mm_mul_relu_t_1")
    assert [n.name for n in tem.computed] == ["mul", "convert_element_type", "permute", "mm", "relu"]
    assert [n.name for n in tem.computed_here] == ["permute", "mm", "relu"]
    assert [(x.name, x.reads, x.writes) for x in code.launches] == [
        ("triton_poi_fused__to_copy_mul_0", ("arg0_1",), ("buf0",)),
        ("triton_tem_fused__to_copy_mm_mul_relu_t_1", ("buf0", "arg1_1"), ("buf2",)),
    ]


def test_split_reduction_placeholder_stands_for_an_input_named_otherwise():
    code = one(H200_KS / "transformer_block" / "modes" / "max-autotune" / "code" / "graph_0.py")
    # the layer norm before the QKV projection: read, not computed, by the template that lists it
    tem = code.kernel("triton_tem_fused_addmm_native_layer_norm_t_view_1")
    assert [n.name for n in tem.computed_here] == ["view", "permute", "addmm"]
    # the layer norm kernel itself reads %buf1 where its nodes say %getitem: all its nodes are computed there
    ln = code.kernel("triton_per_fused_native_layer_norm_0")
    assert "buf1" in [p.name for p in ln.placeholders]
    assert [n.name for n in ln.computed_here] == [n.name for n in ln.computed]


def test_cudagraph_partitions_are_inlined_in_launch_order():
    # reduce-overhead: call() runs self.partitions[0](...), the module-level partition_0 holds the launches
    code = one(H200_KS / "linear_gelu" / "modes" / "reduce-overhead" / "code" / "graph_0.py")
    assert [(x.name, x.reads, x.writes) for x in code.launches] == [
        ("extern_kernels.addmm", ("arg1_1", "arg2_1", "arg0_1"), ("buf0",)),
        ("triton_poi_fused_gelu_0", ("buf1",), ("buf1",)),
    ]
    assert code.graph_inputs == ("arg0_1", "arg1_1", "arg2_1")
    assert code.outputs == ("buf1",)


def test_aten_fallback_call_assigned_to_a_buffer():
    code = one(H200_KS / "addmm_activation" / "modes" / "default" / "code" / "graph_0.py")
    (launch,) = code.launches
    assert (launch.kind, launch.name, launch.op) == (
        "extern",
        "torch.ops.aten._addmm_activation.default",
        "_addmm_activation",
    )
    assert launch.writes == ("buf0",)
    assert ("use_gelu", "True") in launch.kwargs
    assert launch.origins == ("aten.t", "aten._addmm_activation")


def test_several_modules_in_one_file_keep_their_file_line_numbers(tmp_path: Path):
    a = (H200_211 / "seed-max-autotune.code.py").read_text()
    b = (H200_211 / "big-default.code.py").read_text()
    path = tmp_path / "two.code.py"
    text = a + "\n\n" + MODULE_SEPARATOR + "\n" + b
    path.write_text(text)
    first, second = load_output_code(path)
    assert (first.module_index, second.module_index) == (0, 1)
    assert first.first_line == 1
    assert second.first_line == text.splitlines().index(MODULE_SEPARATOR) + 2  # the line after the separator
    assert first.launches[0].line == 227
    assert (
        second.launches[0].line == second.first_line - 1 + 99
    )  # extern_kernels.addmm on line 99 of its own file
    assert second.kernels[0].name == "triton_poi_fused_relu_0"


def test_gzipped_code_file(tmp_path: Path):
    path = tmp_path / "seed-default.code.py.gz"
    path.write_bytes(gzip.compress((H200_211 / "seed-default.code.py").read_bytes()))
    (code,) = load_output_code(path)
    assert [x.name for x in code.launches] == ["extern_kernels.addmm", "triton_poi_fused_gelu_0"]


def test_bad_code_files_raise_code_file_error(tmp_path: Path):
    with pytest.raises(CodeFileError, match="does not exist"):
        load_output_code(tmp_path / "missing.py")
    other = tmp_path / "other.py"
    other.write_text("print('hello')\n")
    with pytest.raises(CodeFileError, match="does not look like Inductor output code"):
        load_output_code(other)


def test_unparsable_module_still_yields_its_kernels_comments():
    text = (
        (H200_211 / "seed-default.code.py")
        .read_text()
        .replace("def call(self, args):", "def call(self, args")
    )
    (code,) = parse_output_code(text, "broken.py")
    assert [k.name for k in code.kernels] == ["triton_poi_fused_gelu_0"]
    assert code.kernels[0].node("addmm").is_placeholder
    assert code.launches == ()
    assert "not valid Python" in code.notes[0]


@pytest.mark.parametrize(
    ("name", "tokens"),
    [
        ("triton_poi_fused_add_mul_relu_0", ("add", "mul", "relu")),
        ("triton_poi_fused_addmm_gelu_2", ("addmm", "gelu")),
        ("triton_tem_fused_addmm_gelu_t_0", ("addmm", "gelu", "t")),
        ("triton_poi_fused__to_copy_add_3", ("_to_copy", "add")),
        ("triton_per_fused_native_layer_norm_1", ("native_layer_norm",)),
        ("cpp_fused_addmm_gelu_0", ("addmm", "gelu")),
        ("graph_0_cpp_fused_gelu_0", ("gelu",)),
        (
            "cpp_fused__softmax_abs_all_amax_eq_mul_ne_sub_0",
            ("_softmax", "abs", "all", "amax", "eq", "mul", "ne", "sub"),
        ),
        ("nv_universal_gemm_fused_mm_t_fa23e97c", ("mm", "t")),
        ("cutlass_fused_mm_t_94eaa40b", ("mm", "t")),
        ("graph_0_gemm_m64n512k512_kernel", ()),
        ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT", ()),
    ],
)
def test_name_tokens(name: str, tokens: tuple[str, ...]):
    assert name_tokens(name) == tokens


@pytest.mark.parametrize(
    ("target", "op"),
    [
        ("torch.ops.aten.addmm.default", "addmm"),
        ("torch.ops.prims.convert_element_type.default", "convert_element_type"),
        ("torch.ops.mkldnn._linear_pointwise.default", "_linear_pointwise"),
        ("aten.addmm", "addmm"),
        ("aten.mul.Tensor", "mul"),
        ("operator.getitem", "getitem"),
    ],
)
def test_op_base_name(target: str, op: str):
    assert op_base_name(target) == op


@pytest.mark.parametrize(
    ("text", "dtype"),
    [
        ("f16", "float16"),
        ("bf16", "bfloat16"),
        ("torch.float32", "float32"),
        ("c10::Half", "float16"),
        ("c10::BFloat16", "bfloat16"),
        ("float", "float32"),
    ],
)
def test_dtype_names(text: str, dtype: str):
    assert torch_dtype_name(text) == dtype


def test_parsing_and_analysis_do_not_import_torch():
    probe = (
        "import sys, kernelscope.inductor_code, kernelscope.analysis.gemm; "
        "assert 'torch' not in sys.modules, 'torch was imported'"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
