"""Kernels per iteration, categories and backends: exact numbers on real H200 traces."""

from __future__ import annotations

import pytest

from kernelscope.analysis import patterns
from kernelscope.analysis.kernels import analyze_kernels
from kernelscope.errors import UsageError
from kernelscope.trace import load_trace

from .conftest import H200_211, H200_2141

# (fixture, iterations, method, kernels/iter, memops/iter, {category: n}, {backend: n})
CASES = [
    (H200_211 / "seed-eager", 5, "top_level_ops", 3, 0, {"gemm": 2, "pointwise": 1}, {"cuBLASLt": 2, "ATen native": 1}),
    (H200_211 / "seed-default", 5, "compiled_graph_calls", 3, 0, {"gemm": 2, "pointwise": 1},
     {"cuBLASLt": 2, "Triton": 1}),
    (H200_211 / "seed-max-autotune", 5, "compiled_graph_calls", 2, 0, {"gemm": 1, "pointwise": 1},
     {"Triton template": 1, "Triton": 1}),
    (H200_211 / "big-eager", 5, "top_level_ops", 2, 1, {"gemm": 1, "pointwise": 1, "memset": 1},
     {"cuBLASLt": 1, "ATen native": 1}),
    (H200_211 / "big-default", 5, "compiled_graph_calls", 2, 1, {"gemm": 1, "pointwise": 1, "memset": 1},
     {"cuBLASLt": 1, "Triton": 1}),
    (H200_211 / "big-max-autotune", 5, "compiled_graph_calls", 2, 1, {"gemm": 1, "pointwise": 1, "memset": 1},
     {"cuBLASLt": 1, "Triton": 1}),
    (H200_211 / "sbr-cutlass-noevt", 3, "profiler_steps", 2, 0, {"gemm": 1, "pointwise": 1},
     {"CUTLASS": 1, "Triton": 1}),
    (H200_211 / "cutedsl-gemm-plain", 3, "profiler_steps", 1, 0, {"gemm": 1}, {"NVGEMM/CuTeDSL": 1}),
    (H200_2141 / "mmrelu-nvgemm", 3, "profiler_steps", 2, 0, {"gemm": 1, "pointwise": 1},
     {"NVGEMM/CuTeDSL": 1, "Triton": 1}),
    (H200_2141 / "seed-aten-triton", 3, "profiler_steps", 1, 0, {"gemm": 1}, {"Triton template": 1}),
]


@pytest.mark.parametrize(("stem", "iters", "method", "kpi", "mpi", "cats", "backends"), CASES,
                         ids=[c[0].name for c in CASES])
def test_real_h200_traces(stem, iters, method, kpi, mpi, cats, backends):
    ka = analyze_kernels(load_trace(stem.with_name(stem.name + ".trace.json.gz")))
    assert ka.device == "cuda"
    assert (ka.iterations.count, ka.iterations.method, ka.iterations.consistent) == (iters, method, True)
    assert ka.iterations.kernels_per_step == (kpi,) * iters
    assert (ka.kernels_per_iter, ka.memops_per_iter) == (kpi, mpi)
    assert ka.by_category == cats
    assert ka.by_backend == backends
    assert all(s.calls_per_iter == 1 for s in ka.stats)


def test_split_k_reduce_counts_as_gemm_kernel_of_cublaslt():
    ka = analyze_kernels(load_trace(H200_211 / "seed-eager.trace.json.gz"))
    names = {s.name.split("<")[0]: (s.category, s.backend) for s in ka.stats}
    assert names["void cublasLt::splitKreduce_kernel"] == ("gemm", "cuBLASLt")
    assert names["nvjet_sm90_hsh_64x16_64x16_2x1_v_bz_splitK_bias_TNT"] == ("gemm", "cuBLASLt")


def test_time_per_iteration_is_mean_of_iterations():
    ka = analyze_kernels(load_trace(H200_2141 / "mmrelu-nvgemm.trace.json.gz"))
    gemm = next(s for s in ka.stats if s.category == "gemm")
    # three launches of 94.688, 94.624 and 94.207 µs
    assert gemm.time_us_per_iter == pytest.approx((94.688 + 94.624 + 94.207) / 3)


def test_given_iterations_override_inference():
    t = load_trace(H200_211 / "seed-eager.trace.json.gz")
    ka = analyze_kernels(t, iterations=5)
    assert (ka.iterations.count, ka.iterations.method, ka.kernels_per_iter) == (5, "given", 3)
    with pytest.raises(UsageError, match="cannot be split"):
        analyze_kernels(t, iterations=4)


@pytest.mark.parametrize(
    ("name", "on_cpu", "category", "backend"),
    [
        ("triton_poi_fused_addmm_gelu_2", False, "pointwise", patterns.TRITON),
        ("triton_red_fused_sum_0", False, "reduction", patterns.TRITON),
        ("triton_per_fused__softmax_1", False, "reduction", patterns.TRITON),
        ("triton_tem_fused_addmm_gelu_t_0", False, "gemm", patterns.TRITON_TEMPLATE),
        ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT", False, "gemm", patterns.CUBLASLT),
        ("kernel_cutlass_kernel_cutlassoperatorsproviders_0", False, "gemm", patterns.NVGEMM),
        ("void cutlass::device_kernel<cutlass3x_sm90_tensorop_gemm_bf16>(T)", False, "gemm", patterns.CUTLASS),
        ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128> >(Flash_fwd_params)", False, "attention",
         patterns.FLASH),
        ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float> >(T)", False, "reduction", patterns.ATEN),
        ("Memset (Device)", False, "memset", patterns.CUDA_RUNTIME),
        ("Memcpy HtoD (Pageable -> Device)", False, "memcpy", patterns.CUDA_RUNTIME),
        ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", False, "communication",
         patterns.NCCL),
        ("graph_0_cpp_fused_gelu_0", True, "pointwise", patterns.INDUCTOR_CPP),
        ("graph_0_gemm_m32n256k256_kernel", True, "gemm", patterns.INDUCTOR_CPP_TEMPLATE),
        ("mkl::_mkl_linear", True, "gemm", patterns.CPU_BLAS),
        ("aten::addmm", True, "gemm", patterns.CPU_ATEN),
        ("aten::gelu", True, "pointwise", patterns.CPU_ATEN),
        ("aten::sum", True, "reduction", patterns.CPU_ATEN),
    ],
)
def test_classification_table(name, on_cpu, category, backend):
    assert patterns.classify(name, on_cpu=on_cpu) == (category, backend)


# kernelscope's own H200 captures (tests/data/h200-torch2.11-kernelscope): (model, mode dir, kernels/iter, memops,
# backends)
KS = DATA_KS = H200_211.parent / "h200-torch2.11-kernelscope"
KS_CASES = [
    ("linear_gelu", "eager", 3, 0, {"cuBLASLt": 2, "ATen native": 1}),
    ("linear_gelu", "default", 3, 0, {"cuBLASLt": 2, "Triton": 1}),
    ("linear_gelu", "max-autotune", 1, 0, {"Triton template": 1}),
    ("linear_gelu", "max-autotune_TRITON", 1, 0, {"Triton template": 1}),
    ("linear_gelu", "max-autotune_ATEN", 4, 0, {"cuBLASLt": 2, "Triton": 1, "ATen native": 1}),
    ("linear_gelu", "reduce-overhead", 4, 0, {"cuBLASLt": 2, "Triton": 1, "ATen native": 1}),
    ("mlp", "eager", 8, 0, {"cuBLASLt": 4, "ATen native": 4}),
    ("mlp", "default", 7, 0, {"cuBLASLt": 4, "Triton": 3}),
    ("mlp", "max-autotune", 4, 0, {"Triton template": 3, "Triton": 1}),
    ("transformer_block", "eager", 10, 1, {"cuBLASLt": 4, "ATen native": 5, "cuDNN": 1}),
    ("transformer_block", "default", 9, 1, {"cuBLASLt": 4, "Triton": 4, "cuDNN": 1}),
    ("transformer_block", "max-autotune", 9, 1, {"Triton template": 4, "Triton": 4, "cuDNN": 1}),
    ("addmm_activation", "eager", 2, 0, {"cuBLASLt": 2}),
    ("prologue", "max-autotune_TRITON", 2, 0, {"Triton template": 1, "Triton": 1}),
]


@pytest.mark.parametrize(("model", "mode", "kpi", "mpi", "backends"), KS_CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in KS_CASES])
def test_kernelscope_h200_captures(model, mode, kpi, mpi, backends):
    (trace,) = (KS / model / "tb" / mode).glob("*.pt.trace.json.gz")
    ka = analyze_kernels(load_trace(trace))
    assert (ka.iterations.count, ka.iterations.method, ka.iterations.consistent) == (3, "profiler_steps", True)
    assert (ka.kernels_per_iter, ka.memops_per_iter) == (kpi, mpi)
    assert ka.by_backend == backends
