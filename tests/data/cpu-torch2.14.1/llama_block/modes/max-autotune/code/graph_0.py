# AOT ID: ['0_inference']
from ctypes import c_void_p, c_long, c_int
import torch
import math
import random
import os
import tempfile
from math import inf, nan
from cmath import nanj
from torch._inductor.hooks import run_intermediate_hooks
from torch._inductor.utils import maybe_profile
from torch._inductor.codegen.memory_planning import _align as align
from torch import device, empty_strided
from torch._inductor.async_compile import AsyncCompile
from torch._inductor.select_algorithm import extern_kernels
from torch._inductor.runtime.runtime_utils import assert_tensor_metadata

aten = torch.ops.aten
inductor_ops = torch.ops.inductor
_quantized = torch.ops._quantized
assert_size_stride = torch._C._dynamo.guards.assert_size_stride
assert_size_stride_grouped = torch._C._dynamo.guards.assert_size_stride_grouped
assert_alignment = torch._C._dynamo.guards.assert_alignment
empty_strided_cpu = torch._C._dynamo.guards._empty_strided_cpu
empty_strided_cpu_pinned = torch._C._dynamo.guards._empty_strided_cpu_pinned
empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda
empty_strided_xpu = torch._C._dynamo.guards._empty_strided_xpu
empty_strided_mtia = torch._C._dynamo.guards._empty_strided_mtia
reinterpret_tensor = torch._C._dynamo.guards._reinterpret_tensor
alloc_from_pool = torch.ops.inductor._alloc_from_pool
async_compile = AsyncCompile()
empty_strided_p2p = torch._C._distributed_c10d._SymmetricMemory.empty_strided_p2p
_frozen_param0 = None  # device(type='cpu') torch.float32 (64,) (1,) 7fe10ee23390
_frozen_param5 = None  # device(type='cpu') torch.float32 (64,) (1,) 7fe10f9c8050
_frozen_param9 = None  # device(type='cpu') torch.float32 (64,) (1,) 7fe10ee23430
_frozen_param14 = None  # device(type='cpu') torch.float32 (64,) (1,) 7fe10ee235c0
_frozen_param18 = None  # device(type='cpu') torch.float32 (64,) (1,) 7fe110bfe940
_frozen_param33 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7fe1077366c0
_frozen_param34 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7fe107736bc0
_frozen_param35 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7fe107737430
_frozen_param36 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7fe107737570
_frozen_param37 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7fe107737110
_frozen_param38 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7fe107737340
constant11 = None  # device(type='cpu') torch.float32 (2, 64, 32) (2048, 32, 1) 7fe1021ad400
constant10 = None  # device(type='cpu') torch.float32 (2, 64, 32) (2048, 32, 1) 7fe1021afe80
constant9 = None  # device(type='cpu') torch.float32 (2, 64, 32) (2048, 32, 1) 7fe1021a7e30
_frozen_param39 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7fe1077379d0
_frozen_param40 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7fe107737930
_frozen_param41 = None  # device(type='cpu') torch.float32 (128, 64) (64, 1) 7fe107736f30
_frozen_param42 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7fe107735cc0
_frozen_param43 = None  # device(type='cpu') torch.float32 (128, 64) (64, 1) 7fe107735720
_frozen_param44 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7fe1077357c0
_frozen_param45 = None  # device(type='cpu') torch.float32 (64, 128) (128, 1) 7fe107735f40
_frozen_param46 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7fe1077368f0
_frozen_param47 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7fe1076199a0
_frozen_param48 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7fe10761ab20
_frozen_param49 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7fe107619f40
_frozen_param50 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7fe107619310
_frozen_param51 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7fe10761b660
_frozen_param52 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7fe10761bed0
constant22 = None  # device(type='cpu') torch.float32 (2, 64, 32) (2048, 32, 1) 7fe102521d10
constant21 = None  # device(type='cpu') torch.float32 (4, 64, 32) (2048, 32, 1) 7fe1021a4af0
constant20 = None  # device(type='cpu') torch.float32 (4, 64, 32) (2048, 32, 1) 7fe1021a4460
constant19 = None  # device(type='cpu') torch.float32 (2, 64, 32) (2048, 32, 1) 7fe102084d20
constant18 = None  # device(type='cpu') torch.float32 (2, 64, 32) (2048, 32, 1) 7fe102087660
constant17 = None  # device(type='cpu') torch.float32 (2, 64, 32) (2048, 32, 1) 7fe1079ffe30
_frozen_param53 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7fe1076184b0
_frozen_param54 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7fe10761bcf0
_frozen_param55 = None  # device(type='cpu') torch.float32 (128, 64) (64, 1) 7fe107618910
_frozen_param56 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7fe10761b430
_frozen_param57 = None  # device(type='cpu') torch.float32 (128, 64) (64, 1) 7fe10761bbb0
_frozen_param58 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7fe10761a710
_frozen_param59 = None  # device(type='cpu') torch.float32 (64, 128) (128, 1) 7fe107618af0
_frozen_param60 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7fe10761a6c0
constant24 = None  # device(type='cpu') torch.float32 (2, 64, 32) (2048, 32, 1) 7fe1020b7ca0
constant23 = None  # device(type='cpu') torch.float32 (4, 64, 32) (2048, 32, 1) 7fe1020b7e30
constant22_0 = None  # device(type='cpu') torch.float32 (4, 64, 32) (2048, 32, 1) 7fe1020c0910


cpp_fused_add_mean_mul_pow_rsqrt_0 = async_compile.cpp_pybinding(['const float*', 'const float*', 'float*', 'float*'], r'''
#include <torch/csrc/inductor/aoti_runtime/utils.h>
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(const float* in_ptr0,
                       const float* in_ptr1,
                       float* out_ptr0,
                       float* out_ptr1)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused_add_mean_mul_pow_rsqrt_0_("graph_0_cpp_fused_add_mean_mul_pow_rsqrt_0", nullptr);
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(32L); x0+=static_cast<int64_t>(1L))
            {
                {
                    float tmp_acc0 = 0;
                    at::vec::Vectorized<float> tmp_acc0_vec = at::vec::Vectorized<float>(0);
                    for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(64L); x1+=static_cast<int64_t>(16L))
                    {
                        {
                            if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(64L)))
                            {
                                auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                                auto tmp1 = tmp0 * tmp0;
                                tmp_acc0_vec = tmp_acc0_vec + tmp1;
                            }
                        }
                    }
                    tmp_acc0 = tmp_acc0 + at::vec::vec_reduce_all<float, 1>([](at::vec::Vectorized<float>& x, at::vec::Vectorized<float>& y) { return x + y; }, tmp_acc0_vec);
                    out_ptr0[static_cast<int64_t>(x0)] = static_cast<float>(tmp_acc0);
                }
                for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(64L); x1+=static_cast<int64_t>(16L))
                {
                    {
                        if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(64L)))
                        {
                            auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr1 + static_cast<int64_t>(x1), static_cast<int64_t>(16));
                            auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                            auto tmp2 = out_ptr0[static_cast<int64_t>(x0)];
                            auto tmp3 = static_cast<float>(64.0);
                            auto tmp4 = tmp2 / tmp3;
                            auto tmp5 = static_cast<float>(1e-06);
                            auto tmp6 = float(tmp4 + tmp5);
                            auto tmp7 = 1 / std::sqrt(tmp6);
                            auto tmp8 = at::vec::Vectorized<float>(tmp7);
                            auto tmp9 = tmp1 * tmp8;
                            auto tmp10 = tmp0 * tmp9;
                            tmp10.store(out_ptr1 + static_cast<int64_t>(x1 + 64L*x0));
                        }
                    }
                }
            }
        }
    }
    inductor_cpu_integer_div_error_flag = nullptr;
    inductor_cpu_throw_if_integer_div_error(inductor_cpu_integer_div_error);
}
''')


cpp_fused_add_mean_mm_mul_pow_rsqrt_view_1 = async_compile.cpp_pybinding(['const float*', 'const float*', 'float*'], r'''
#include <torch/csrc/inductor/cpp_prefix.h>
#include <c10/util/Unroll.h>
#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/inductor/aoti_runtime/utils.h>




template <int64_t BLOCK_M, int64_t BLOCK_N, bool accum, bool prefetch=false>
inline void kernel_micro_gemm_kernel(
    const float* __restrict__ A,
    const float* __restrict__ B,
    float* __restrict__ C,
    int64_t K,
    int64_t lda,
    int64_t ldb,
    int64_t ldc
) {
    using Vectorized = at::vec::Vectorized<float>;
    constexpr auto VLEN = Vectorized::size();
    constexpr auto ROWS = BLOCK_M;
    constexpr auto COLS = BLOCK_N / VLEN;

    Vectorized va;
    at::vec::VectorizedN<float, COLS> vb;
    at::vec::VectorizedN<float, ROWS*COLS> vc;
    auto loadc = [&](auto i) {
        if constexpr (accum) {
            constexpr int row = i / COLS;
            constexpr int col = i % COLS;
            vc[i] = Vectorized::loadu(C + row * ldc + col * VLEN);
        } else {
            vc[i] = Vectorized(0.0f);
        }
    };
    c10::ForcedUnroll<ROWS * COLS>{}(loadc);

    auto compute = [&, COLS](auto i, int k) {
        constexpr int row = i / COLS;
        constexpr int col = i % COLS;
        if constexpr (col == 0) {
            va = Vectorized(static_cast<float>(A[row * lda + k]));
        }

        if constexpr (row == 0) {
            vb[col] = Vectorized::loadu(B + k * ldb + col * VLEN);

        }

        constexpr int idx = row * COLS + col;
        vc[idx] = at::vec::fmadd(va, vb[col], vc[idx]);
    };

    for (int k = 0; k < K; ++k) {
        c10::ForcedUnroll<ROWS * COLS>{}(compute, k);
    }

    // store to C
    auto storec = [&](auto i) {
        constexpr int row = i / COLS;
        constexpr int col = i % COLS;
        vc[i].store(C + row * ldc + col * VLEN);
    };
    c10::ForcedUnroll<ROWS * COLS>{}(storec);
}

template <bool accum, bool prefetch=false>
inline void kernel_micro_gemm(
    const float* __restrict__ A,
    const float* __restrict__ B,
    float* __restrict__ C,
    int64_t M,
    int64_t N,
    int64_t K,
    int64_t lda,
    int64_t ldb,
    int64_t ldc
) {
    using Vectorized = at::vec::Vectorized<float>;
    constexpr auto VLEN = Vectorized::size();
    TORCH_CHECK(32 % VLEN == 0, "block_n dimension must be multiple of Vector size");
    TORCH_CHECK(K % 1 == 0, "K dimension must be multiple of 1");
    // TODO(jgong5): loop unroll for M and N
    for (int64_t m = 0; m < M; m += 8) {
        int64_t block_m = std::min<int64_t>(M - m, 8);
        for (int64_t n = 0; n < N; n += 32) {
            int64_t block_n = std::min<int64_t>(N - n, 32);
            if (block_m == 8 && block_n == 32) {
                kernel_micro_gemm_kernel<8, 32, accum, prefetch>(
                    A + m * lda,
                    B + n,
                    C + m * ldc + n,
                    K,
                    lda,
                    ldb,
                    ldc
                );
            } else {
                switch (block_m) {
                case 7:
                    kernel_micro_gemm_kernel<7, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 6:
                    kernel_micro_gemm_kernel<6, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 5:
                    kernel_micro_gemm_kernel<5, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 4:
                    kernel_micro_gemm_kernel<4, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 3:
                    kernel_micro_gemm_kernel<3, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 2:
                    kernel_micro_gemm_kernel<2, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 1:
                    kernel_micro_gemm_kernel<1, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                default:
                    TORCH_CHECK(false, "Unsupported block_m: 8");
                }
            }
        }
    }
}

extern "C" 
void kernel(const float* X, const float* W, float* Y)
{
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_gemm_m32n64k64_kernel_("graph_0_gemm_m32n64k64_kernel", nullptr);

    constexpr int64_t num_threads = 2;
    constexpr int64_t N = 64;
    constexpr int64_t K = 64;
    constexpr int64_t Mr = 8;
    constexpr int64_t Nr = 32;
    constexpr int64_t Kr = 1;
    constexpr int64_t Nr_blocks = (N + Nr - 1) / Nr;
    constexpr int64_t Kr_blocks = (K + Kr - 1) / Kr;
    constexpr int64_t M = static_cast<int64_t>(32L);
    constexpr int64_t Mr_blocks = (M + Mr - 1) / Mr;
    constexpr int64_t Mt_blocks = 4;
    constexpr int64_t Nt_blocks = 1;
    constexpr int64_t Kt_blocks = 64;
    constexpr int64_t Mc_blocks = 4;
    constexpr int64_t Nc_blocks = 1;
    constexpr int64_t Kc_blocks = 64;
    constexpr int64_t num_Mc_blocks = (Mr_blocks + Mc_blocks - 1) / Mc_blocks;
    constexpr int64_t num_Nc_blocks = (Nr_blocks + Nc_blocks - 1) / Nc_blocks;
    constexpr int64_t num_Mt_blocks = (Mr_blocks + Mt_blocks - 1) / Mt_blocks;
    constexpr int64_t num_Nt_blocks = (Nr_blocks + Nt_blocks - 1) / Nt_blocks;
    constexpr int64_t num_Kt_blocks = (Kr_blocks + Kt_blocks - 1) / Kt_blocks;

    // make sure all partitions are assigned
    TORCH_CHECK(
        Mt_blocks * Nt_blocks * Kt_blocks * 2 >= Mr_blocks * Nr_blocks * Kr_blocks,
        "Not all partitions are assigned."
    );
    #pragma omp parallel
    {

        #pragma omp for schedule(static, 1)
        for (int64_t tid = 0; tid < 2; tid++) {

            const int64_t k_group_id = tid / num_Kt_blocks;
            const int64_t k_slice_id = tid % num_Kt_blocks;
            const int64_t n_group_id = k_group_id / num_Nt_blocks;
            const int64_t n_slice_id = k_group_id % num_Nt_blocks;
            const int64_t k_block_start = k_slice_id * Kt_blocks;
            const int64_t k_block_end = std::min(k_block_start + Kt_blocks, Kr_blocks);
            const int64_t n_block_start = n_slice_id * Nt_blocks;
            const int64_t n_block_end = std::min(n_block_start + Nt_blocks, Nr_blocks);
            const int64_t m_block_start = std::min(n_group_id * Mt_blocks, Mr_blocks);
            const int64_t m_block_end = std::min(m_block_start + Mt_blocks, Mr_blocks);
            const int64_t num_Mc_blocks_per_thread = (m_block_end - m_block_start + Mc_blocks - 1) / Mc_blocks;
        for (int64_t mc_block_id = 0; mc_block_id < num_Mc_blocks_per_thread; mc_block_id++) {

            const int64_t my_mc_block_id = (mc_block_id + n_slice_id) % num_Mc_blocks_per_thread;
            const int64_t mc = m_block_start + my_mc_block_id * Mc_blocks;
            const int64_t m_start = mc * Mr;
            const int64_t m_end = std::min(std::min(mc + Mc_blocks, m_block_end) * Mr, M);
            const int64_t m_size = m_end - m_start;
            for (int64_t nc = n_block_start; nc < n_block_end; nc += Nc_blocks) {

                const int64_t n_start = nc * Nr;
                const int64_t n_end = std::min(std::min(nc + Nc_blocks, n_block_end) * Nr, N);
                const int64_t n_size = n_end - n_start;
                // NB: assume we pad N, nc_block_end won't exceed padded N here.
                const int64_t nc_block_end = std::min(nc + Nc_blocks, n_block_end);
                for (int64_t kc = k_block_start; kc < k_block_end; kc += Kc_blocks) {
                    int64_t k_start = kc * Kr;
                    int64_t k_end = std::min(std::min(kc + Kc_blocks, k_block_end) * Kr, K);
                    for (int64_t nci = nc; nci < nc_block_end; nci++) {
                        if (kc == k_block_start) {
                            kernel_micro_gemm<static_cast<bool>(false), static_cast<bool>(false)>(
                                &(X[static_cast<int64_t>(k_start + 64L*m_start)]),
                                &(W[static_cast<int64_t>(32L*k_start + 2048L*nci)]),
                                &(Y[static_cast<int64_t>(n_start + 64L*m_start + Nr*nci + ((-1L)*Nr*nc))]),
                                static_cast<int64_t>(m_end + ((-1L)*m_start)),
                                static_cast<int64_t>(Nr),
                                static_cast<int64_t>(k_end + ((-1L)*k_start)),
                                static_cast<int64_t>(64L),
                                static_cast<int64_t>(32L),
                                static_cast<int64_t>(64L)
                            );

                        } else {
                            kernel_micro_gemm<static_cast<bool>(true), static_cast<bool>(false)>(
                                &(X[static_cast<int64_t>(k_start + 64L*m_start)]),
                                &(W[static_cast<int64_t>(32L*k_start + 2048L*nci)]),
                                &(Y[static_cast<int64_t>(n_start + 64L*m_start + Nr*nci + ((-1L)*Nr*nc))]),
                                static_cast<int64_t>(m_end + ((-1L)*m_start)),
                                static_cast<int64_t>(Nr),
                                static_cast<int64_t>(k_end + ((-1L)*k_start)),
                                static_cast<int64_t>(64L),
                                static_cast<int64_t>(32L),
                                static_cast<int64_t>(64L)
                            );

                        }
                    }
                }
                {

                }
            }
        }
            }

    }
}
''')


cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_2 = async_compile.cpp_pybinding(['const float*', 'const float*', 'const float*', 'float*', 'float*'], r'''
#include <torch/csrc/inductor/aoti_runtime/utils.h>
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(const float* in_ptr0,
                       const float* in_ptr1,
                       const float* in_ptr2,
                       float* out_ptr0,
                       float* out_ptr1)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_2_("graph_0_cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_2", nullptr);
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(32L); x0+=static_cast<int64_t>(1L))
            {
                {
                    float tmp_acc0 = 0;
                    at::vec::Vectorized<float> tmp_acc0_vec = at::vec::Vectorized<float>(0);
                    for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(64L); x1+=static_cast<int64_t>(16L))
                    {
                        {
                            if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(64L)))
                            {
                                auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                                auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr1 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                                auto tmp2 = tmp0 + tmp1;
                                auto tmp3 = tmp2 * tmp2;
                                tmp_acc0_vec = tmp_acc0_vec + tmp3;
                            }
                        }
                    }
                    tmp_acc0 = tmp_acc0 + at::vec::vec_reduce_all<float, 1>([](at::vec::Vectorized<float>& x, at::vec::Vectorized<float>& y) { return x + y; }, tmp_acc0_vec);
                    out_ptr0[static_cast<int64_t>(x0)] = static_cast<float>(tmp_acc0);
                }
                for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(64L); x1+=static_cast<int64_t>(16L))
                {
                    {
                        if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(64L)))
                        {
                            auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr2 + static_cast<int64_t>(x1), static_cast<int64_t>(16));
                            auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                            auto tmp2 = at::vec::Vectorized<float>::loadu(in_ptr1 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                            auto tmp4 = out_ptr0[static_cast<int64_t>(x0)];
                            auto tmp3 = tmp1 + tmp2;
                            auto tmp5 = static_cast<float>(64.0);
                            auto tmp6 = tmp4 / tmp5;
                            auto tmp7 = static_cast<float>(1e-06);
                            auto tmp8 = float(tmp6 + tmp7);
                            auto tmp9 = 1 / std::sqrt(tmp8);
                            auto tmp10 = at::vec::Vectorized<float>(tmp9);
                            auto tmp11 = tmp3 * tmp10;
                            auto tmp12 = tmp0 * tmp11;
                            tmp12.store(out_ptr1 + static_cast<int64_t>(x1 + 64L*x0));
                        }
                    }
                }
            }
        }
    }
    inductor_cpu_integer_div_error_flag = nullptr;
    inductor_cpu_throw_if_integer_div_error(inductor_cpu_integer_div_error);
}
''')


cpp_fused__unsafe_view_add_mean_mm_mul_pow_rsqrt_view_3 = async_compile.cpp_pybinding(['const float*', 'const float*', 'float*'], r'''
#include <torch/csrc/inductor/cpp_prefix.h>
#include <c10/util/Unroll.h>
#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/inductor/aoti_runtime/utils.h>




template <int64_t BLOCK_M, int64_t BLOCK_N, bool accum, bool prefetch=false>
inline void kernel_micro_gemm_kernel(
    const float* __restrict__ A,
    const float* __restrict__ B,
    float* __restrict__ C,
    int64_t K,
    int64_t lda,
    int64_t ldb,
    int64_t ldc
) {
    using Vectorized = at::vec::Vectorized<float>;
    constexpr auto VLEN = Vectorized::size();
    constexpr auto ROWS = BLOCK_M;
    constexpr auto COLS = BLOCK_N / VLEN;

    Vectorized va;
    at::vec::VectorizedN<float, COLS> vb;
    at::vec::VectorizedN<float, ROWS*COLS> vc;
    auto loadc = [&](auto i) {
        if constexpr (accum) {
            constexpr int row = i / COLS;
            constexpr int col = i % COLS;
            vc[i] = Vectorized::loadu(C + row * ldc + col * VLEN);
        } else {
            vc[i] = Vectorized(0.0f);
        }
    };
    c10::ForcedUnroll<ROWS * COLS>{}(loadc);

    auto compute = [&, COLS](auto i, int k) {
        constexpr int row = i / COLS;
        constexpr int col = i % COLS;
        if constexpr (col == 0) {
            va = Vectorized(static_cast<float>(A[row * lda + k]));
        }

        if constexpr (row == 0) {
            vb[col] = Vectorized::loadu(B + k * ldb + col * VLEN);

        }

        constexpr int idx = row * COLS + col;
        vc[idx] = at::vec::fmadd(va, vb[col], vc[idx]);
    };

    for (int k = 0; k < K; ++k) {
        c10::ForcedUnroll<ROWS * COLS>{}(compute, k);
    }

    // store to C
    auto storec = [&](auto i) {
        constexpr int row = i / COLS;
        constexpr int col = i % COLS;
        vc[i].store(C + row * ldc + col * VLEN);
    };
    c10::ForcedUnroll<ROWS * COLS>{}(storec);
}

template <bool accum, bool prefetch=false>
inline void kernel_micro_gemm(
    const float* __restrict__ A,
    const float* __restrict__ B,
    float* __restrict__ C,
    int64_t M,
    int64_t N,
    int64_t K,
    int64_t lda,
    int64_t ldb,
    int64_t ldc
) {
    using Vectorized = at::vec::Vectorized<float>;
    constexpr auto VLEN = Vectorized::size();
    TORCH_CHECK(32 % VLEN == 0, "block_n dimension must be multiple of Vector size");
    TORCH_CHECK(K % 1 == 0, "K dimension must be multiple of 1");
    // TODO(jgong5): loop unroll for M and N
    for (int64_t m = 0; m < M; m += 8) {
        int64_t block_m = std::min<int64_t>(M - m, 8);
        for (int64_t n = 0; n < N; n += 32) {
            int64_t block_n = std::min<int64_t>(N - n, 32);
            if (block_m == 8 && block_n == 32) {
                kernel_micro_gemm_kernel<8, 32, accum, prefetch>(
                    A + m * lda,
                    B + n,
                    C + m * ldc + n,
                    K,
                    lda,
                    ldb,
                    ldc
                );
            } else {
                switch (block_m) {
                case 7:
                    kernel_micro_gemm_kernel<7, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 6:
                    kernel_micro_gemm_kernel<6, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 5:
                    kernel_micro_gemm_kernel<5, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 4:
                    kernel_micro_gemm_kernel<4, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 3:
                    kernel_micro_gemm_kernel<3, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 2:
                    kernel_micro_gemm_kernel<2, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 1:
                    kernel_micro_gemm_kernel<1, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                default:
                    TORCH_CHECK(false, "Unsupported block_m: 8");
                }
            }
        }
    }
}

extern "C" 
void kernel(const float* X, const float* W, float* Y)
{
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_gemm_m32n128k64_kernel_("graph_0_gemm_m32n128k64_kernel", nullptr);

    constexpr int64_t num_threads = 2;
    constexpr int64_t N = 128;
    constexpr int64_t K = 64;
    constexpr int64_t Mr = 8;
    constexpr int64_t Nr = 32;
    constexpr int64_t Kr = 1;
    constexpr int64_t Nr_blocks = (N + Nr - 1) / Nr;
    constexpr int64_t Kr_blocks = (K + Kr - 1) / Kr;
    constexpr int64_t M = static_cast<int64_t>(32L);
    constexpr int64_t Mr_blocks = (M + Mr - 1) / Mr;
    constexpr int64_t Mt_blocks = 4;
    constexpr int64_t Nt_blocks = 2;
    constexpr int64_t Kt_blocks = 64;
    constexpr int64_t Mc_blocks = 4;
    constexpr int64_t Nc_blocks = 1;
    constexpr int64_t Kc_blocks = 64;
    constexpr int64_t num_Mc_blocks = (Mr_blocks + Mc_blocks - 1) / Mc_blocks;
    constexpr int64_t num_Nc_blocks = (Nr_blocks + Nc_blocks - 1) / Nc_blocks;
    constexpr int64_t num_Mt_blocks = (Mr_blocks + Mt_blocks - 1) / Mt_blocks;
    constexpr int64_t num_Nt_blocks = (Nr_blocks + Nt_blocks - 1) / Nt_blocks;
    constexpr int64_t num_Kt_blocks = (Kr_blocks + Kt_blocks - 1) / Kt_blocks;

    // make sure all partitions are assigned
    TORCH_CHECK(
        Mt_blocks * Nt_blocks * Kt_blocks * 2 >= Mr_blocks * Nr_blocks * Kr_blocks,
        "Not all partitions are assigned."
    );
    #pragma omp parallel
    {

        #pragma omp for schedule(static, 1)
        for (int64_t tid = 0; tid < 2; tid++) {

            const int64_t k_group_id = tid / num_Kt_blocks;
            const int64_t k_slice_id = tid % num_Kt_blocks;
            const int64_t n_group_id = k_group_id / num_Nt_blocks;
            const int64_t n_slice_id = k_group_id % num_Nt_blocks;
            const int64_t k_block_start = k_slice_id * Kt_blocks;
            const int64_t k_block_end = std::min(k_block_start + Kt_blocks, Kr_blocks);
            const int64_t n_block_start = n_slice_id * Nt_blocks;
            const int64_t n_block_end = std::min(n_block_start + Nt_blocks, Nr_blocks);
            const int64_t m_block_start = std::min(n_group_id * Mt_blocks, Mr_blocks);
            const int64_t m_block_end = std::min(m_block_start + Mt_blocks, Mr_blocks);
            const int64_t num_Mc_blocks_per_thread = (m_block_end - m_block_start + Mc_blocks - 1) / Mc_blocks;
        for (int64_t mc_block_id = 0; mc_block_id < num_Mc_blocks_per_thread; mc_block_id++) {

            const int64_t my_mc_block_id = (mc_block_id + n_slice_id) % num_Mc_blocks_per_thread;
            const int64_t mc = m_block_start + my_mc_block_id * Mc_blocks;
            const int64_t m_start = mc * Mr;
            const int64_t m_end = std::min(std::min(mc + Mc_blocks, m_block_end) * Mr, M);
            const int64_t m_size = m_end - m_start;
            for (int64_t nc = n_block_start; nc < n_block_end; nc += Nc_blocks) {

                const int64_t n_start = nc * Nr;
                const int64_t n_end = std::min(std::min(nc + Nc_blocks, n_block_end) * Nr, N);
                const int64_t n_size = n_end - n_start;
                // NB: assume we pad N, nc_block_end won't exceed padded N here.
                const int64_t nc_block_end = std::min(nc + Nc_blocks, n_block_end);
                for (int64_t kc = k_block_start; kc < k_block_end; kc += Kc_blocks) {
                    int64_t k_start = kc * Kr;
                    int64_t k_end = std::min(std::min(kc + Kc_blocks, k_block_end) * Kr, K);
                    for (int64_t nci = nc; nci < nc_block_end; nci++) {
                        if (kc == k_block_start) {
                            kernel_micro_gemm<static_cast<bool>(false), static_cast<bool>(false)>(
                                &(X[static_cast<int64_t>(k_start + 64L*m_start)]),
                                &(W[static_cast<int64_t>(32L*k_start + 2048L*nci)]),
                                &(Y[static_cast<int64_t>(n_start + 128L*m_start + Nr*nci + ((-1L)*Nr*nc))]),
                                static_cast<int64_t>(m_end + ((-1L)*m_start)),
                                static_cast<int64_t>(Nr),
                                static_cast<int64_t>(k_end + ((-1L)*k_start)),
                                static_cast<int64_t>(64L),
                                static_cast<int64_t>(32L),
                                static_cast<int64_t>(128L)
                            );

                        } else {
                            kernel_micro_gemm<static_cast<bool>(true), static_cast<bool>(false)>(
                                &(X[static_cast<int64_t>(k_start + 64L*m_start)]),
                                &(W[static_cast<int64_t>(32L*k_start + 2048L*nci)]),
                                &(Y[static_cast<int64_t>(n_start + 128L*m_start + Nr*nci + ((-1L)*Nr*nc))]),
                                static_cast<int64_t>(m_end + ((-1L)*m_start)),
                                static_cast<int64_t>(Nr),
                                static_cast<int64_t>(k_end + ((-1L)*k_start)),
                                static_cast<int64_t>(64L),
                                static_cast<int64_t>(32L),
                                static_cast<int64_t>(128L)
                            );

                        }
                    }
                }
                {

                }
            }
        }
            }

    }
}
''')


cpp_fused__unsafe_view_add_mean_mm_mul_pow_rsqrt_silu_view_4 = async_compile.cpp_pybinding(['const float*', 'const float*', 'const float*', 'float*'], r'''
#include <torch/csrc/inductor/cpp_prefix.h>
#include <c10/util/Unroll.h>
#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/inductor/aoti_runtime/utils.h>




template <int64_t BLOCK_M, int64_t BLOCK_N, bool accum, bool prefetch=false>
inline void kernel_micro_gemm_kernel(
    const float* __restrict__ A,
    const float* __restrict__ B,
    float* __restrict__ C,
    int64_t K,
    int64_t lda,
    int64_t ldb,
    int64_t ldc
) {
    using Vectorized = at::vec::Vectorized<float>;
    constexpr auto VLEN = Vectorized::size();
    constexpr auto ROWS = BLOCK_M;
    constexpr auto COLS = BLOCK_N / VLEN;

    Vectorized va;
    at::vec::VectorizedN<float, COLS> vb;
    at::vec::VectorizedN<float, ROWS*COLS> vc;
    auto loadc = [&](auto i) {
        if constexpr (accum) {
            constexpr int row = i / COLS;
            constexpr int col = i % COLS;
            vc[i] = Vectorized::loadu(C + row * ldc + col * VLEN);
        } else {
            vc[i] = Vectorized(0.0f);
        }
    };
    c10::ForcedUnroll<ROWS * COLS>{}(loadc);

    auto compute = [&, COLS](auto i, int k) {
        constexpr int row = i / COLS;
        constexpr int col = i % COLS;
        if constexpr (col == 0) {
            va = Vectorized(static_cast<float>(A[row * lda + k]));
        }

        if constexpr (row == 0) {
            vb[col] = Vectorized::loadu(B + k * ldb + col * VLEN);

        }

        constexpr int idx = row * COLS + col;
        vc[idx] = at::vec::fmadd(va, vb[col], vc[idx]);
    };

    for (int k = 0; k < K; ++k) {
        c10::ForcedUnroll<ROWS * COLS>{}(compute, k);
    }

    // store to C
    auto storec = [&](auto i) {
        constexpr int row = i / COLS;
        constexpr int col = i % COLS;
        vc[i].store(C + row * ldc + col * VLEN);
    };
    c10::ForcedUnroll<ROWS * COLS>{}(storec);
}

template <bool accum, bool prefetch=false>
inline void kernel_micro_gemm(
    const float* __restrict__ A,
    const float* __restrict__ B,
    float* __restrict__ C,
    int64_t M,
    int64_t N,
    int64_t K,
    int64_t lda,
    int64_t ldb,
    int64_t ldc
) {
    using Vectorized = at::vec::Vectorized<float>;
    constexpr auto VLEN = Vectorized::size();
    TORCH_CHECK(32 % VLEN == 0, "block_n dimension must be multiple of Vector size");
    TORCH_CHECK(K % 1 == 0, "K dimension must be multiple of 1");
    // TODO(jgong5): loop unroll for M and N
    for (int64_t m = 0; m < M; m += 8) {
        int64_t block_m = std::min<int64_t>(M - m, 8);
        for (int64_t n = 0; n < N; n += 32) {
            int64_t block_n = std::min<int64_t>(N - n, 32);
            if (block_m == 8 && block_n == 32) {
                kernel_micro_gemm_kernel<8, 32, accum, prefetch>(
                    A + m * lda,
                    B + n,
                    C + m * ldc + n,
                    K,
                    lda,
                    ldb,
                    ldc
                );
            } else {
                switch (block_m) {
                case 7:
                    kernel_micro_gemm_kernel<7, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 6:
                    kernel_micro_gemm_kernel<6, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 5:
                    kernel_micro_gemm_kernel<5, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 4:
                    kernel_micro_gemm_kernel<4, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 3:
                    kernel_micro_gemm_kernel<3, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 2:
                    kernel_micro_gemm_kernel<2, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 1:
                    kernel_micro_gemm_kernel<1, 32, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                default:
                    TORCH_CHECK(false, "Unsupported block_m: 8");
                }
            }
        }
    }
}

extern "C" 
void kernel(const float* X, const float* W, const float* in_ptr2, float* Y)
{
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_gemm_m32n128k64_kernel_("graph_0_gemm_m32n128k64_kernel", nullptr);

    constexpr int64_t num_threads = 2;
    constexpr int64_t N = 128;
    constexpr int64_t K = 64;
    constexpr int64_t Mr = 8;
    constexpr int64_t Nr = 32;
    constexpr int64_t Kr = 1;
    constexpr int64_t Nr_blocks = (N + Nr - 1) / Nr;
    constexpr int64_t Kr_blocks = (K + Kr - 1) / Kr;
    constexpr int64_t M = static_cast<int64_t>(32L);
    constexpr int64_t Mr_blocks = (M + Mr - 1) / Mr;
    constexpr int64_t Mt_blocks = 4;
    constexpr int64_t Nt_blocks = 2;
    constexpr int64_t Kt_blocks = 64;
    constexpr int64_t Mc_blocks = 4;
    constexpr int64_t Nc_blocks = 1;
    constexpr int64_t Kc_blocks = 64;
    constexpr int64_t num_Mc_blocks = (Mr_blocks + Mc_blocks - 1) / Mc_blocks;
    constexpr int64_t num_Nc_blocks = (Nr_blocks + Nc_blocks - 1) / Nc_blocks;
    constexpr int64_t num_Mt_blocks = (Mr_blocks + Mt_blocks - 1) / Mt_blocks;
    constexpr int64_t num_Nt_blocks = (Nr_blocks + Nt_blocks - 1) / Nt_blocks;
    constexpr int64_t num_Kt_blocks = (Kr_blocks + Kt_blocks - 1) / Kt_blocks;

    // make sure all partitions are assigned
    TORCH_CHECK(
        Mt_blocks * Nt_blocks * Kt_blocks * 2 >= Mr_blocks * Nr_blocks * Kr_blocks,
        "Not all partitions are assigned."
    );
    #pragma omp parallel
    {

        #pragma omp for schedule(static, 1)
        for (int64_t tid = 0; tid < 2; tid++) {

            const int64_t k_group_id = tid / num_Kt_blocks;
            const int64_t k_slice_id = tid % num_Kt_blocks;
            const int64_t n_group_id = k_group_id / num_Nt_blocks;
            const int64_t n_slice_id = k_group_id % num_Nt_blocks;
            const int64_t k_block_start = k_slice_id * Kt_blocks;
            const int64_t k_block_end = std::min(k_block_start + Kt_blocks, Kr_blocks);
            const int64_t n_block_start = n_slice_id * Nt_blocks;
            const int64_t n_block_end = std::min(n_block_start + Nt_blocks, Nr_blocks);
            const int64_t m_block_start = std::min(n_group_id * Mt_blocks, Mr_blocks);
            const int64_t m_block_end = std::min(m_block_start + Mt_blocks, Mr_blocks);
            const int64_t num_Mc_blocks_per_thread = (m_block_end - m_block_start + Mc_blocks - 1) / Mc_blocks;
        for (int64_t mc_block_id = 0; mc_block_id < num_Mc_blocks_per_thread; mc_block_id++) {

            const int64_t my_mc_block_id = (mc_block_id + n_slice_id) % num_Mc_blocks_per_thread;
            const int64_t mc = m_block_start + my_mc_block_id * Mc_blocks;
            const int64_t m_start = mc * Mr;
            const int64_t m_end = std::min(std::min(mc + Mc_blocks, m_block_end) * Mr, M);
            const int64_t m_size = m_end - m_start;
            for (int64_t nc = n_block_start; nc < n_block_end; nc += Nc_blocks) {

                const int64_t n_start = nc * Nr;
                const int64_t n_end = std::min(std::min(nc + Nc_blocks, n_block_end) * Nr, N);
                const int64_t n_size = n_end - n_start;
                // NB: assume we pad N, nc_block_end won't exceed padded N here.
                const int64_t nc_block_end = std::min(nc + Nc_blocks, n_block_end);
                for (int64_t kc = k_block_start; kc < k_block_end; kc += Kc_blocks) {
                    int64_t k_start = kc * Kr;
                    int64_t k_end = std::min(std::min(kc + Kc_blocks, k_block_end) * Kr, K);
                    for (int64_t nci = nc; nci < nc_block_end; nci++) {
                        if (kc == k_block_start) {
                            kernel_micro_gemm<static_cast<bool>(false), static_cast<bool>(false)>(
                                &(X[static_cast<int64_t>(k_start + 64L*m_start)]),
                                &(W[static_cast<int64_t>(32L*k_start + 2048L*nci)]),
                                &(Y[static_cast<int64_t>(n_start + 128L*m_start + Nr*nci + ((-1L)*Nr*nc))]),
                                static_cast<int64_t>(m_end + ((-1L)*m_start)),
                                static_cast<int64_t>(Nr),
                                static_cast<int64_t>(k_end + ((-1L)*k_start)),
                                static_cast<int64_t>(64L),
                                static_cast<int64_t>(32L),
                                static_cast<int64_t>(128L)
                            );

                        } else {
                            kernel_micro_gemm<static_cast<bool>(true), static_cast<bool>(false)>(
                                &(X[static_cast<int64_t>(k_start + 64L*m_start)]),
                                &(W[static_cast<int64_t>(32L*k_start + 2048L*nci)]),
                                &(Y[static_cast<int64_t>(n_start + 128L*m_start + Nr*nci + ((-1L)*Nr*nc))]),
                                static_cast<int64_t>(m_end + ((-1L)*m_start)),
                                static_cast<int64_t>(Nr),
                                static_cast<int64_t>(k_end + ((-1L)*k_start)),
                                static_cast<int64_t>(64L),
                                static_cast<int64_t>(32L),
                                static_cast<int64_t>(128L)
                            );

                        }
                    }
                }
                {
                    {
                        #pragma GCC ivdep
                        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(m_end + ((-1L)*m_start)); x0+=static_cast<int64_t>(1L))
                        {
                            for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(n_end + ((-1L)*n_start)); x1+=static_cast<int64_t>(16L))
                            {
                                {
                                    if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(16L*(c10::div_floor_integer(static_cast<int64_t>(n_end + ((-1L)*n_start)), static_cast<int64_t>(16L))))))
                                    {
                                        auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr2 + static_cast<int64_t>(n_start + x1 + 128L*((static_cast<int64_t>(m_start + x0) % static_cast<int64_t>(32L)))), static_cast<int64_t>(16));
                                        auto tmp7 = at::vec::Vectorized<float>::loadu(Y + static_cast<int64_t>(n_start + x1 + 128L*((static_cast<int64_t>(m_start + x0) % static_cast<int64_t>(32L)))), static_cast<int64_t>(16));
                                        auto tmp1 = tmp0.neg();
                                        auto tmp2 = tmp1.exp();
                                        auto tmp3 = static_cast<float>(1.0);
                                        auto tmp4 = at::vec::Vectorized<float>(tmp3);
                                        auto tmp5 = tmp2 + tmp4;
                                        auto tmp6 = tmp0 / tmp5;
                                        auto tmp8 = tmp6 * tmp7;
                                        tmp8.store(Y + static_cast<int64_t>(n_start + x1 + 128L*m_start + 128L*x0));
                                    }
                                    if(C10_UNLIKELY(x1 >= static_cast<int64_t>(16L*(c10::div_floor_integer(static_cast<int64_t>(n_end + ((-1L)*n_start)), static_cast<int64_t>(16L)))) && x1 < static_cast<int64_t>(n_end + ((-1L)*n_start))))
                                    {
                                        auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr2 + static_cast<int64_t>(n_start + x1 + 128L*((static_cast<int64_t>(m_start + x0) % static_cast<int64_t>(32L)))), static_cast<int64_t>(n_end + ((-1L)*n_start) + (-16L)*(c10::div_floor_integer(static_cast<int64_t>(n_end + ((-1L)*n_start)), static_cast<int64_t>(16L)))));
                                        auto tmp7 = at::vec::Vectorized<float>::loadu(Y + static_cast<int64_t>(n_start + x1 + 128L*((static_cast<int64_t>(m_start + x0) % static_cast<int64_t>(32L)))), static_cast<int64_t>(n_end + ((-1L)*n_start) + (-16L)*(c10::div_floor_integer(static_cast<int64_t>(n_end + ((-1L)*n_start)), static_cast<int64_t>(16L)))));
                                        auto tmp1 = tmp0.neg();
                                        auto tmp2 = tmp1.exp();
                                        auto tmp3 = static_cast<float>(1.0);
                                        auto tmp4 = at::vec::Vectorized<float>(tmp3);
                                        auto tmp5 = tmp2 + tmp4;
                                        auto tmp6 = tmp0 / tmp5;
                                        auto tmp8 = tmp6 * tmp7;
                                        tmp8.store(Y + static_cast<int64_t>(n_start + x1 + 128L*m_start + 128L*x0), static_cast<int64_t>(n_end + ((-1L)*n_start) + (-16L)*(c10::div_floor_integer(static_cast<int64_t>(n_end + ((-1L)*n_start)), static_cast<int64_t>(16L)))));
                                    }
                                }
                            }
                        }
                    }

                }
            }
        }
            }

    }
}
''')


cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_5 = async_compile.cpp_pybinding(['const float*', 'const float*', 'const float*', 'const float*', 'float*', 'float*'], r'''
#include <torch/csrc/inductor/aoti_runtime/utils.h>
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(const float* in_ptr0,
                       const float* in_ptr1,
                       const float* in_ptr2,
                       const float* in_ptr3,
                       float* out_ptr0,
                       float* out_ptr1)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_5_("graph_0_cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_5", nullptr);
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(32L); x0+=static_cast<int64_t>(1L))
            {
                {
                    float tmp_acc0 = 0;
                    at::vec::Vectorized<float> tmp_acc0_vec = at::vec::Vectorized<float>(0);
                    for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(64L); x1+=static_cast<int64_t>(16L))
                    {
                        {
                            if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(64L)))
                            {
                                auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                                auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr1 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                                auto tmp3 = at::vec::Vectorized<float>::loadu(in_ptr2 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                                auto tmp2 = tmp0 + tmp1;
                                auto tmp4 = tmp2 + tmp3;
                                auto tmp5 = tmp4 * tmp4;
                                tmp_acc0_vec = tmp_acc0_vec + tmp5;
                            }
                        }
                    }
                    tmp_acc0 = tmp_acc0 + at::vec::vec_reduce_all<float, 1>([](at::vec::Vectorized<float>& x, at::vec::Vectorized<float>& y) { return x + y; }, tmp_acc0_vec);
                    out_ptr0[static_cast<int64_t>(x0)] = static_cast<float>(tmp_acc0);
                }
                for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(64L); x1+=static_cast<int64_t>(16L))
                {
                    {
                        if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(64L)))
                        {
                            auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr3 + static_cast<int64_t>(x1), static_cast<int64_t>(16));
                            auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                            auto tmp2 = at::vec::Vectorized<float>::loadu(in_ptr1 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                            auto tmp4 = at::vec::Vectorized<float>::loadu(in_ptr2 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                            auto tmp6 = out_ptr0[static_cast<int64_t>(x0)];
                            auto tmp3 = tmp1 + tmp2;
                            auto tmp5 = tmp3 + tmp4;
                            auto tmp7 = static_cast<float>(64.0);
                            auto tmp8 = tmp6 / tmp7;
                            auto tmp9 = static_cast<float>(1e-06);
                            auto tmp10 = float(tmp8 + tmp9);
                            auto tmp11 = 1 / std::sqrt(tmp10);
                            auto tmp12 = at::vec::Vectorized<float>(tmp11);
                            auto tmp13 = tmp5 * tmp12;
                            auto tmp14 = tmp0 * tmp13;
                            tmp14.store(out_ptr1 + static_cast<int64_t>(x1 + 64L*x0));
                        }
                    }
                }
            }
        }
    }
    inductor_cpu_integer_div_error_flag = nullptr;
    inductor_cpu_throw_if_integer_div_error(inductor_cpu_integer_div_error);
}
''')


cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_6 = async_compile.cpp_pybinding(['const float*', 'const float*', 'const float*', 'const float*', 'const float*', 'float*', 'float*'], r'''
#include <torch/csrc/inductor/aoti_runtime/utils.h>
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(const float* in_ptr0,
                       const float* in_ptr1,
                       const float* in_ptr2,
                       const float* in_ptr3,
                       const float* in_ptr4,
                       float* out_ptr0,
                       float* out_ptr1)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_6_("graph_0_cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_6", nullptr);
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(32L); x0+=static_cast<int64_t>(1L))
            {
                {
                    float tmp_acc0 = 0;
                    at::vec::Vectorized<float> tmp_acc0_vec = at::vec::Vectorized<float>(0);
                    for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(64L); x1+=static_cast<int64_t>(16L))
                    {
                        {
                            if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(64L)))
                            {
                                auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                                auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr1 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                                auto tmp3 = at::vec::Vectorized<float>::loadu(in_ptr2 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                                auto tmp5 = at::vec::Vectorized<float>::loadu(in_ptr3 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                                auto tmp2 = tmp0 + tmp1;
                                auto tmp4 = tmp2 + tmp3;
                                auto tmp6 = tmp4 + tmp5;
                                auto tmp7 = tmp6 * tmp6;
                                tmp_acc0_vec = tmp_acc0_vec + tmp7;
                            }
                        }
                    }
                    tmp_acc0 = tmp_acc0 + at::vec::vec_reduce_all<float, 1>([](at::vec::Vectorized<float>& x, at::vec::Vectorized<float>& y) { return x + y; }, tmp_acc0_vec);
                    out_ptr0[static_cast<int64_t>(x0)] = static_cast<float>(tmp_acc0);
                }
                for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(64L); x1+=static_cast<int64_t>(16L))
                {
                    {
                        if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(64L)))
                        {
                            auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr4 + static_cast<int64_t>(x1), static_cast<int64_t>(16));
                            auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                            auto tmp2 = at::vec::Vectorized<float>::loadu(in_ptr1 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                            auto tmp4 = at::vec::Vectorized<float>::loadu(in_ptr2 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                            auto tmp6 = at::vec::Vectorized<float>::loadu(in_ptr3 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                            auto tmp8 = out_ptr0[static_cast<int64_t>(x0)];
                            auto tmp3 = tmp1 + tmp2;
                            auto tmp5 = tmp3 + tmp4;
                            auto tmp7 = tmp5 + tmp6;
                            auto tmp9 = static_cast<float>(64.0);
                            auto tmp10 = tmp8 / tmp9;
                            auto tmp11 = static_cast<float>(1e-06);
                            auto tmp12 = float(tmp10 + tmp11);
                            auto tmp13 = 1 / std::sqrt(tmp12);
                            auto tmp14 = at::vec::Vectorized<float>(tmp13);
                            auto tmp15 = tmp7 * tmp14;
                            auto tmp16 = tmp0 * tmp15;
                            tmp16.store(out_ptr1 + static_cast<int64_t>(x1 + 64L*x0));
                        }
                    }
                }
            }
        }
    }
    inductor_cpu_integer_div_error_flag = nullptr;
    inductor_cpu_throw_if_integer_div_error(inductor_cpu_integer_div_error);
}
''')


cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_7 = async_compile.cpp_pybinding(['float*', 'const float*', 'const float*', 'const float*', 'const float*', 'const float*', 'float*'], r'''
#include <torch/csrc/inductor/aoti_runtime/utils.h>
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(float* in_out_ptr0,
                       const float* in_ptr0,
                       const float* in_ptr1,
                       const float* in_ptr2,
                       const float* in_ptr3,
                       const float* in_ptr4,
                       float* out_ptr0)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_7_("graph_0_cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_7", nullptr);
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(2048L); x0+=static_cast<int64_t>(16L))
            {
                {
                    if(C10_LIKELY(x0 >= static_cast<int64_t>(0) && x0 < static_cast<int64_t>(2048L)))
                    {
                        auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x0), static_cast<int64_t>(16));
                        auto tmp1 = at::vec::Vectorized<float>::loadu(in_out_ptr0 + static_cast<int64_t>(x0), static_cast<int64_t>(16));
                        auto tmp3 = at::vec::Vectorized<float>::loadu(in_ptr1 + static_cast<int64_t>(x0), static_cast<int64_t>(16));
                        auto tmp5 = at::vec::Vectorized<float>::loadu(in_ptr2 + static_cast<int64_t>(x0), static_cast<int64_t>(16));
                        auto tmp7 = at::vec::Vectorized<float>::loadu(in_ptr3 + static_cast<int64_t>(x0), static_cast<int64_t>(16));
                        auto tmp2 = tmp0 + tmp1;
                        auto tmp4 = tmp2 + tmp3;
                        auto tmp6 = tmp4 + tmp5;
                        auto tmp8 = tmp6 + tmp7;
                        tmp8.store(in_out_ptr0 + static_cast<int64_t>(x0));
                    }
                }
            }
        }
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(32L); x0+=static_cast<int64_t>(1L))
            {
                {
                    float tmp_acc0 = 0;
                    at::vec::Vectorized<float> tmp_acc0_vec = at::vec::Vectorized<float>(0);
                    for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(64L); x1+=static_cast<int64_t>(16L))
                    {
                        {
                            if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(64L)))
                            {
                                auto tmp0 = at::vec::Vectorized<float>::loadu(in_out_ptr0 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                                auto tmp1 = tmp0 * tmp0;
                                tmp_acc0_vec = tmp_acc0_vec + tmp1;
                            }
                        }
                    }
                    tmp_acc0 = tmp_acc0 + at::vec::vec_reduce_all<float, 1>([](at::vec::Vectorized<float>& x, at::vec::Vectorized<float>& y) { return x + y; }, tmp_acc0_vec);
                    out_ptr0[static_cast<int64_t>(x0)] = static_cast<float>(tmp_acc0);
                }
                for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(64L); x1+=static_cast<int64_t>(16L))
                {
                    {
                        if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(64L)))
                        {
                            auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr4 + static_cast<int64_t>(x1), static_cast<int64_t>(16));
                            auto tmp1 = at::vec::Vectorized<float>::loadu(in_out_ptr0 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                            auto tmp2 = out_ptr0[static_cast<int64_t>(x0)];
                            auto tmp3 = static_cast<float>(64.0);
                            auto tmp4 = tmp2 / tmp3;
                            auto tmp5 = static_cast<float>(1e-06);
                            auto tmp6 = float(tmp4 + tmp5);
                            auto tmp7 = 1 / std::sqrt(tmp6);
                            auto tmp8 = at::vec::Vectorized<float>(tmp7);
                            auto tmp9 = tmp1 * tmp8;
                            auto tmp10 = tmp0 * tmp9;
                            tmp10.store(in_out_ptr0 + static_cast<int64_t>(x1 + 64L*x0));
                        }
                    }
                }
            }
        }
    }
    inductor_cpu_integer_div_error_flag = nullptr;
    inductor_cpu_throw_if_integer_div_error(inductor_cpu_integer_div_error);
}
''')


async_compile.wait(globals())
del async_compile

class Runner:
    def __init__(self, partitions):
        self.partitions = partitions

    def recursively_apply_fns(self, fns):
        new_callables = []
        for fn, c in zip(fns, self.partitions):
            new_callables.append(fn(c))
        self.partitions = new_callables

    def call(self, args):
        arg19_1, = args
        args.clear()
        assert_size_stride(arg19_1, (2, 16, 64), (1024, 64, 1), 'input')
        buf0 = empty_strided_cpu((2, 16, 1), (16, 1, 32), torch.float32)
        buf1 = empty_strided_cpu((2, 16, 64), (1024, 64, 1), torch.float32)
        # [Provenance debug handles] cpp_fused_add_mean_mul_pow_rsqrt_0:1
        cpp_fused_add_mean_mul_pow_rsqrt_0(arg19_1, _frozen_param0, buf0, buf1)
        buf2 = empty_strided_cpu((32, 64), (64, 1), torch.float32)
        # [Provenance debug handles] cpp_fused_add_mean_mm_mul_pow_rsqrt_view_1:2
        cpp_fused_add_mean_mm_mul_pow_rsqrt_view_1(buf1, constant11, buf2)
        buf3 = empty_strided_cpu((32, 64), (64, 1), torch.float32)
        # [Provenance debug handles] cpp_fused_add_mean_mm_mul_pow_rsqrt_view_1:3
        cpp_fused_add_mean_mm_mul_pow_rsqrt_view_1(buf1, constant10, buf3)
        buf4 = empty_strided_cpu((32, 64), (64, 1), torch.float32)
        # [Provenance debug handles] cpp_fused_add_mean_mm_mul_pow_rsqrt_view_1:4
        cpp_fused_add_mean_mm_mul_pow_rsqrt_view_1(buf1, constant9, buf4)
        del buf1
        # Topologically Sorted Source Nodes: [linear, view, q, linear_1, view_1, k, linear_2, view_2, v, att], Original ATen: [aten._unsafe_view, aten.view, aten.transpose, aten._scaled_dot_product_flash_attention_for_cpu]
        # [Provenance debug handles] torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default:5
        buf5 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(reinterpret_tensor(buf2, (2, 4, 16, 16), (1024, 16, 64, 1), 0), reinterpret_tensor(buf3, (2, 4, 16, 16), (1024, 16, 64, 1), 0), reinterpret_tensor(buf4, (2, 4, 16, 16), (1024, 16, 64, 1), 0), 0.0, True)
        del buf2
        buf6 = buf5[0]
        assert_tensor_metadata(buf6, (2, 4, 16, 16), (1024, 16, 64, 1), torch.float32, 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default')
        assert_alignment(buf6, 16, 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default')
        del buf5
        buf8 = buf4; del buf4  # reuse
        # [Provenance debug handles] cpp_fused_add_mean_mm_mul_pow_rsqrt_view_1:6
        cpp_fused_add_mean_mm_mul_pow_rsqrt_view_1(buf6, constant22, buf8)
        buf9 = buf0; del buf0  # reuse
        buf10 = reinterpret_tensor(buf6, (2, 16, 64), (1024, 64, 1), 0); del buf6  # reuse
        # [Provenance debug handles] cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_2:7
        cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_2(arg19_1, buf8, _frozen_param5, buf9, buf10)
        buf11 = empty_strided_cpu((32, 128), (128, 1), torch.float32)
        # [Provenance debug handles] cpp_fused__unsafe_view_add_mean_mm_mul_pow_rsqrt_view_3:8
        cpp_fused__unsafe_view_add_mean_mm_mul_pow_rsqrt_view_3(buf10, constant21, buf11)
        buf12 = empty_strided_cpu((32, 128), (128, 1), torch.float32)
        buf13 = empty_strided_cpu((2, 16, 128), (2048, 128, 1), torch.float32)
        # [Provenance debug handles] cpp_fused__unsafe_view_add_mean_mm_mul_pow_rsqrt_silu_view_4:9
        cpp_fused__unsafe_view_add_mean_mm_mul_pow_rsqrt_silu_view_4(buf10, constant20, buf11, buf13)
        del buf11
        del buf12
        # Topologically Sorted Source Nodes: [linear_4, silu, linear_5, mul_4, linear_6], Original ATen: [aten._unsafe_view, aten.silu, aten.mul, aten.view, aten.mm]
        # [Provenance debug handles] torch.ops.mkl._mkl_linear.default:10
        buf14 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf13, (32, 128), (128, 1), 0), _frozen_param46, _frozen_param45, None, 32)
        assert_tensor_metadata(buf14, (32, 64), (64, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        buf15 = buf9; del buf9  # reuse
        buf16 = buf10; del buf10  # reuse
        # [Provenance debug handles] cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_5:11
        cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_5(arg19_1, buf8, buf14, _frozen_param9, buf15, buf16)
        buf17 = buf3; del buf3  # reuse
        # [Provenance debug handles] cpp_fused_add_mean_mm_mul_pow_rsqrt_view_1:12
        cpp_fused_add_mean_mm_mul_pow_rsqrt_view_1(buf16, constant19, buf17)
        buf18 = empty_strided_cpu((32, 64), (64, 1), torch.float32)
        # [Provenance debug handles] cpp_fused_add_mean_mm_mul_pow_rsqrt_view_1:13
        cpp_fused_add_mean_mm_mul_pow_rsqrt_view_1(buf16, constant18, buf18)
        buf19 = empty_strided_cpu((32, 64), (64, 1), torch.float32)
        # [Provenance debug handles] cpp_fused_add_mean_mm_mul_pow_rsqrt_view_1:14
        cpp_fused_add_mean_mm_mul_pow_rsqrt_view_1(buf16, constant17, buf19)
        del buf16
        # Topologically Sorted Source Nodes: [linear_7, view_3, q_1, linear_8, view_4, k_1, linear_9, view_5, v_1, att_1], Original ATen: [aten._unsafe_view, aten.view, aten.transpose, aten._scaled_dot_product_flash_attention_for_cpu]
        # [Provenance debug handles] torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default:15
        buf20 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(reinterpret_tensor(buf17, (2, 4, 16, 16), (1024, 16, 64, 1), 0), reinterpret_tensor(buf18, (2, 4, 16, 16), (1024, 16, 64, 1), 0), reinterpret_tensor(buf19, (2, 4, 16, 16), (1024, 16, 64, 1), 0), 0.0, True)
        del buf17
        del buf18
        buf21 = buf20[0]
        assert_tensor_metadata(buf21, (2, 4, 16, 16), (1024, 16, 64, 1), torch.float32, 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default')
        assert_alignment(buf21, 16, 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default')
        del buf20
        buf23 = buf19; del buf19  # reuse
        # [Provenance debug handles] cpp_fused_add_mean_mm_mul_pow_rsqrt_view_1:16
        cpp_fused_add_mean_mm_mul_pow_rsqrt_view_1(buf21, constant24, buf23)
        buf24 = buf15; del buf15  # reuse
        buf25 = reinterpret_tensor(buf21, (2, 16, 64), (1024, 64, 1), 0); del buf21  # reuse
        # [Provenance debug handles] cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_6:17
        cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_6(arg19_1, buf8, buf14, buf23, _frozen_param14, buf24, buf25)
        del buf24
        buf26 = reinterpret_tensor(buf13, (32, 128), (128, 1), 0); del buf13  # reuse
        # [Provenance debug handles] cpp_fused__unsafe_view_add_mean_mm_mul_pow_rsqrt_view_3:18
        cpp_fused__unsafe_view_add_mean_mm_mul_pow_rsqrt_view_3(buf25, constant23, buf26)
        buf27 = empty_strided_cpu((32, 128), (128, 1), torch.float32)
        buf28 = empty_strided_cpu((2, 16, 128), (2048, 128, 1), torch.float32)
        # [Provenance debug handles] cpp_fused__unsafe_view_add_mean_mm_mul_pow_rsqrt_silu_view_4:19
        cpp_fused__unsafe_view_add_mean_mm_mul_pow_rsqrt_silu_view_4(buf25, constant22_0, buf26, buf28)
        del buf25
        del buf26
        del buf27
        # Topologically Sorted Source Nodes: [linear_11, silu_1, linear_12, mul_9, linear_13], Original ATen: [aten._unsafe_view, aten.silu, aten.mul, aten.view, aten.mm]
        # [Provenance debug handles] torch.ops.mkl._mkl_linear.default:20
        buf29 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf28, (32, 128), (128, 1), 0), _frozen_param60, _frozen_param59, None, 32)
        assert_tensor_metadata(buf29, (32, 64), (64, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        del buf28
        buf30 = reinterpret_tensor(buf8, (2, 16, 64), (1024, 64, 1), 0); del buf8  # reuse
        buf31 = empty_strided_cpu((2, 16, 1), (16, 1, 32), torch.float32)
        buf32 = buf30; del buf30  # reuse
        # [Provenance debug handles] cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_7:21
        cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_7(buf32, arg19_1, buf14, buf23, buf29, _frozen_param18, buf31)
        del arg19_1
        return (buf32, )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    global _frozen_param0
    _frozen_param0 = rand_strided((64, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param5
    _frozen_param5 = rand_strided((64, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param9
    _frozen_param9 = rand_strided((64, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param14
    _frozen_param14 = rand_strided((64, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param18
    _frozen_param18 = rand_strided((64, ), (1, ), device='cpu', dtype=torch.float32)
    global constant11
    constant11 = rand_strided((2, 64, 32), (2048, 32, 1), device='cpu', dtype=torch.float32)
    global constant10
    constant10 = rand_strided((2, 64, 32), (2048, 32, 1), device='cpu', dtype=torch.float32)
    global constant9
    constant9 = rand_strided((2, 64, 32), (2048, 32, 1), device='cpu', dtype=torch.float32)
    global _frozen_param45
    _frozen_param45 = rand_strided((64, 128), (128, 1), device='cpu', dtype=torch.float32)
    global _frozen_param46
    _frozen_param46 = rand_strided((1459233, 1), (1, 0), device='cpu', dtype=torch.float32)
    global constant22
    constant22 = rand_strided((2, 64, 32), (2048, 32, 1), device='cpu', dtype=torch.float32)
    global constant21
    constant21 = rand_strided((4, 64, 32), (2048, 32, 1), device='cpu', dtype=torch.float32)
    global constant20
    constant20 = rand_strided((4, 64, 32), (2048, 32, 1), device='cpu', dtype=torch.float32)
    global constant19
    constant19 = rand_strided((2, 64, 32), (2048, 32, 1), device='cpu', dtype=torch.float32)
    global constant18
    constant18 = rand_strided((2, 64, 32), (2048, 32, 1), device='cpu', dtype=torch.float32)
    global constant17
    constant17 = rand_strided((2, 64, 32), (2048, 32, 1), device='cpu', dtype=torch.float32)
    global _frozen_param59
    _frozen_param59 = rand_strided((64, 128), (128, 1), device='cpu', dtype=torch.float32)
    global _frozen_param60
    _frozen_param60 = rand_strided((1459233, 1), (1, 0), device='cpu', dtype=torch.float32)
    global constant24
    constant24 = rand_strided((2, 64, 32), (2048, 32, 1), device='cpu', dtype=torch.float32)
    global constant23
    constant23 = rand_strided((4, 64, 32), (2048, 32, 1), device='cpu', dtype=torch.float32)
    global constant22_0
    constant22_0 = rand_strided((4, 64, 32), (2048, 32, 1), device='cpu', dtype=torch.float32)
    arg19_1 = rand_strided((2, 16, 64), (1024, 64, 1), device='cpu', dtype=torch.float32)
    return [arg19_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat, device='cpu')


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
