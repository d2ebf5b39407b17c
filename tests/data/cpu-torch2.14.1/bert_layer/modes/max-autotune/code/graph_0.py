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
_frozen_param1 = None  # device(type='cpu') torch.float32 (64,) (1,) 7fc30d1e6080
_frozen_param3 = None  # device(type='cpu') torch.float32 (64,) (1,) 7fc30d1e50e0
_frozen_param5 = None  # device(type='cpu') torch.float32 (64,) (1,) 7fc30cfff8e0
_frozen_param7 = None  # device(type='cpu') torch.float32 (64,) (1,) 7fc30cfff980
_frozen_param8 = None  # device(type='cpu') torch.float32 (64,) (1,) 7fc30d1e5950
_frozen_param9 = None  # device(type='cpu') torch.float32 (64,) (1,) 7fc3101a8f50
_frozen_param11 = None  # device(type='cpu') torch.float32 (256,) (1,) 7fc3b0d1fc00
_frozen_param13 = None  # device(type='cpu') torch.float32 (64,) (1,) 7fc30d0ef1b0
_frozen_param14 = None  # device(type='cpu') torch.float32 (64,) (1,) 7fc30d0ef250
_frozen_param15 = None  # device(type='cpu') torch.float32 (64,) (1,) 7fc30d0ef2a0
_frozen_param22 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7fc30509f020
_frozen_param23 = None  # device(type='cpu') torch.float32 (1982689, 1) (1, 0) 7fc304efd220
_frozen_param24 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7fc304f85fe0
_frozen_param25 = None  # device(type='cpu') torch.float32 (1982689, 1) (1, 0) 7fc304f85400
_frozen_param26 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7fc304f850e0
_frozen_param27 = None  # device(type='cpu') torch.float32 (1982689, 1) (1, 0) 7fc304f858b0
constant16 = None  # device(type='cpu') torch.float32 (2, 64, 32) (2048, 32, 1) 7fc301a73c50
constant15 = None  # device(type='cpu') torch.float32 (2, 64, 32) (2048, 32, 1) 7fc301bbac10
constant14 = None  # device(type='cpu') torch.float32 (2, 64, 32) (2048, 32, 1) 7fc301a5e440
_frozen_param28 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7fc304f84af0
_frozen_param29 = None  # device(type='cpu') torch.float32 (1982689, 1) (1, 0) 7fc304f840a0
constant15_0 = None  # device(type='cpu') torch.float32 (2, 64, 32) (2048, 32, 1) 7fc301b12cb0
_frozen_param30 = None  # device(type='cpu') torch.float32 (256, 64) (64, 1) 7fc304f864e0
_frozen_param31 = None  # device(type='cpu') torch.float32 (1982689, 1) (1, 0) 7fc304f84c30
_frozen_param32 = None  # device(type='cpu') torch.float32 (64, 256) (256, 1) 7fc304f85b30
_frozen_param33 = None  # device(type='cpu') torch.float32 (1982689, 1) (1, 0) 7fc304f85cc0


cpp_fused__scaled_dot_product_flash_attention_for_cpu_addmm_transpose_view_0 = async_compile.cpp_pybinding(['const float*', 'const float*', 'const float*', 'float*'], r'''
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
                    {
                        #pragma GCC ivdep
                        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(m_end + ((-1L)*m_start)); x0+=static_cast<int64_t>(1L))
                        {
                            #pragma GCC ivdep
                            for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(n_end + ((-1L)*n_start)); x1+=static_cast<int64_t>(1L))
                            {
                                {
                                    {
                                        auto tmp0 = Y[static_cast<int64_t>(64L*((static_cast<int64_t>(m_start + x0) % static_cast<int64_t>(32L))) + ((static_cast<int64_t>(n_start + x1) % static_cast<int64_t>(64L))))];
                                        auto tmp1 = in_ptr2[static_cast<int64_t>((static_cast<int64_t>(n_start + x1) % static_cast<int64_t>(64L)))];
                                        auto tmp2 = float(tmp0 + tmp1);
                                        Y[static_cast<int64_t>(n_start + x1 + 64L*m_start + 64L*x0)] = tmp2;
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


cpp_fused_addmm_transpose_view_1 = async_compile.cpp_pybinding(['const float*', 'const float*', 'float*'], r'''
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


cpp_fused_add_addmm_native_layer_norm_transpose_view_2 = async_compile.cpp_pybinding(['float*', 'float*', 'const float*', 'const float*', 'const float*', 'const float*', 'float*'], r'''
#include <torch/csrc/inductor/aoti_runtime/utils.h>
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(float* in_out_ptr0,
                       float* in_out_ptr1,
                       const float* in_ptr1,
                       const float* in_ptr2,
                       const float* in_ptr3,
                       const float* in_ptr4,
                       float* out_ptr1)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused_add_addmm_native_layer_norm_transpose_view_2_("graph_0_cpp_fused_add_addmm_native_layer_norm_transpose_view_2", nullptr);
    auto out_ptr0 = in_out_ptr0;
    auto in_ptr0 = in_out_ptr1;
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
                                auto tmp0 = at::vec::Vectorized<float>::loadu(in_out_ptr1 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                                auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr1 + static_cast<int64_t>(x1), static_cast<int64_t>(16));
                                auto tmp3 = at::vec::Vectorized<float>::loadu(in_ptr2 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                                auto tmp2 = tmp0 + tmp1;
                                auto tmp4 = tmp2 + tmp3;
                                tmp_acc0_vec = tmp_acc0_vec + tmp4;
                            }
                        }
                    }
                    tmp_acc0 = tmp_acc0 + at::vec::vec_reduce_all<float, 1>([](at::vec::Vectorized<float>& x, at::vec::Vectorized<float>& y) { return x + y; }, tmp_acc0_vec);
                    in_out_ptr0[static_cast<int64_t>(x0)] = static_cast<float>(tmp_acc0);
                }
            }
        }
        #pragma omp single
        {
            {
                for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(32L); x0+=static_cast<int64_t>(16L))
                {
                    {
                        if(C10_LIKELY(x0 >= static_cast<int64_t>(0) && x0 < static_cast<int64_t>(32L)))
                        {
                            auto tmp0 = at::vec::Vectorized<float>::loadu(out_ptr0 + static_cast<int64_t>(x0), static_cast<int64_t>(16));
                            auto tmp1 = static_cast<float>(64.0);
                            auto tmp2 = at::vec::Vectorized<float>(tmp1);
                            auto tmp3 = tmp0 / tmp2;
                            tmp3.store(in_out_ptr0 + static_cast<int64_t>(x0));
                        }
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
                                auto tmp0 = at::vec::Vectorized<float>::loadu(in_out_ptr1 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                                auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr1 + static_cast<int64_t>(x1), static_cast<int64_t>(16));
                                auto tmp3 = at::vec::Vectorized<float>::loadu(in_ptr2 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                                auto tmp5 = in_out_ptr0[static_cast<int64_t>(x0)];
                                auto tmp2 = tmp0 + tmp1;
                                auto tmp4 = tmp2 + tmp3;
                                auto tmp6 = at::vec::Vectorized<float>(tmp5);
                                auto tmp7 = tmp4 - tmp6;
                                auto tmp8 = tmp7 * tmp7;
                                tmp_acc0_vec = tmp_acc0_vec + tmp8;
                            }
                        }
                    }
                    tmp_acc0 = tmp_acc0 + at::vec::vec_reduce_all<float, 1>([](at::vec::Vectorized<float>& x, at::vec::Vectorized<float>& y) { return x + y; }, tmp_acc0_vec);
                    out_ptr1[static_cast<int64_t>(x0)] = static_cast<float>(tmp_acc0);
                }
            }
        }
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(32L); x0+=static_cast<int64_t>(1L))
            {
                for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(64L); x1+=static_cast<int64_t>(16L))
                {
                    {
                        if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(64L)))
                        {
                            auto tmp0 = at::vec::Vectorized<float>::loadu(in_out_ptr1 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                            auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr1 + static_cast<int64_t>(x1), static_cast<int64_t>(16));
                            auto tmp3 = at::vec::Vectorized<float>::loadu(in_ptr2 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                            auto tmp5 = in_out_ptr0[static_cast<int64_t>(x0)];
                            auto tmp8 = out_ptr1[static_cast<int64_t>(x0)];
                            auto tmp16 = at::vec::Vectorized<float>::loadu(in_ptr3 + static_cast<int64_t>(x1), static_cast<int64_t>(16));
                            auto tmp18 = at::vec::Vectorized<float>::loadu(in_ptr4 + static_cast<int64_t>(x1), static_cast<int64_t>(16));
                            auto tmp2 = tmp0 + tmp1;
                            auto tmp4 = tmp2 + tmp3;
                            auto tmp6 = at::vec::Vectorized<float>(tmp5);
                            auto tmp7 = tmp4 - tmp6;
                            auto tmp9 = static_cast<float>(64.0);
                            auto tmp10 = tmp8 / tmp9;
                            auto tmp11 = static_cast<float>(1e-12);
                            auto tmp12 = float(tmp10 + tmp11);
                            auto tmp13 = 1 / std::sqrt(tmp12);
                            auto tmp14 = at::vec::Vectorized<float>(tmp13);
                            auto tmp15 = tmp7 * tmp14;
                            auto tmp17 = tmp15 * tmp16;
                            auto tmp19 = tmp17 + tmp18;
                            tmp19.store(in_out_ptr1 + static_cast<int64_t>(x1 + 64L*x0));
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


cpp_fused_addmm_gelu_view_3 = async_compile.cpp_pybinding(['float*', 'const float*'], r'''
#include <torch/csrc/inductor/aoti_runtime/utils.h>
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(float* in_out_ptr0,
                       const float* in_ptr0)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused_addmm_gelu_view_3_("graph_0_cpp_fused_addmm_gelu_view_3", nullptr);
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(32L); x0+=static_cast<int64_t>(1L))
            {
                for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(256L); x1+=static_cast<int64_t>(16L))
                {
                    {
                        if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(256L)))
                        {
                            auto tmp0 = at::vec::Vectorized<float>::loadu(in_out_ptr0 + static_cast<int64_t>(x1 + 256L*x0), static_cast<int64_t>(16));
                            auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x1), static_cast<int64_t>(16));
                            auto tmp2 = tmp0 + tmp1;
                            auto tmp3 = static_cast<float>(0.5);
                            auto tmp4 = at::vec::Vectorized<float>(tmp3);
                            auto tmp5 = tmp2 * tmp4;
                            auto tmp6 = static_cast<float>(0.7071067811865476);
                            auto tmp7 = at::vec::Vectorized<float>(tmp6);
                            auto tmp8 = tmp2 * tmp7;
                            auto tmp9 = tmp8.erf();
                            auto tmp10 = static_cast<float>(1.0);
                            auto tmp11 = at::vec::Vectorized<float>(tmp10);
                            auto tmp12 = tmp9 + tmp11;
                            auto tmp13 = tmp5 * tmp12;
                            tmp13.store(in_out_ptr0 + static_cast<int64_t>(x1 + 256L*x0));
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
        arg16_1, = args
        args.clear()
        assert_size_stride(arg16_1, (2, 16, 64), (1024, 64, 1), 'input')
        buf0 = empty_strided_cpu((32, 64), (64, 1), torch.float32)
        buf3 = empty_strided_cpu((2, 4, 16, 16), (1024, 16, 64, 1), torch.float32)
        cpp_fused__scaled_dot_product_flash_attention_for_cpu_addmm_transpose_view_0(arg16_1, constant16, _frozen_param1, buf3)
        buf1 = buf0; del buf0  # reuse
        buf4 = empty_strided_cpu((2, 4, 16, 16), (1024, 16, 64, 1), torch.float32)
        cpp_fused__scaled_dot_product_flash_attention_for_cpu_addmm_transpose_view_0(arg16_1, constant15, _frozen_param3, buf4)
        buf2 = buf1; del buf1  # reuse
        buf5 = empty_strided_cpu((2, 4, 16, 16), (1024, 16, 64, 1), torch.float32)
        cpp_fused__scaled_dot_product_flash_attention_for_cpu_addmm_transpose_view_0(arg16_1, constant14, _frozen_param5, buf5)
        del buf2
        # Topologically Sorted Source Nodes: [linear, view, q, linear_1, view_1, k, linear_2, view_2, v, att], Original ATen: [aten.view, aten.addmm, aten.transpose, aten._scaled_dot_product_flash_attention_for_cpu]
        buf6 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(buf3, buf4, buf5)
        del buf3
        del buf4
        buf7 = buf6[0]
        assert_tensor_metadata(buf7, (2, 4, 16, 16), (1024, 16, 64, 1), torch.float32, 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default')
        assert_alignment(buf7, 16, 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default')
        del buf6
        buf9 = reinterpret_tensor(buf5, (32, 64), (64, 1), 0); del buf5  # reuse
        cpp_fused_addmm_transpose_view_1(buf7, constant15_0, buf9)
        del buf7
        buf10 = empty_strided_cpu((2, 16, 1), (16, 1, 32), torch.float32)
        buf11 = buf10; del buf10  # reuse
        buf12 = empty_strided_cpu((2, 16, 1), (16, 1, 32), torch.float32)
        buf13 = reinterpret_tensor(buf9, (2, 16, 64), (1024, 64, 1), 0); del buf9  # reuse
        cpp_fused_add_addmm_native_layer_norm_transpose_view_2(buf11, buf13, _frozen_param7, arg16_1, _frozen_param8, _frozen_param9, buf12)
        del arg16_1
        del buf11
        del buf12
        # Topologically Sorted Source Nodes: [linear_4], Original ATen: [aten.view, aten.addmm]
        buf14 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf13, (32, 64), (64, 1), 0), _frozen_param31, _frozen_param30, None, 32)
        assert_tensor_metadata(buf14, (32, 256), (256, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        buf15 = reinterpret_tensor(buf14, (2, 16, 256), (4096, 256, 1), 0); del buf14  # reuse
        cpp_fused_addmm_gelu_view_3(buf15, _frozen_param11)
        # Topologically Sorted Source Nodes: [linear_4, gelu, linear_5], Original ATen: [aten.view, aten.addmm, aten.gelu]
        buf16 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf15, (32, 256), (256, 1), 0), _frozen_param33, _frozen_param32, None, 32)
        assert_tensor_metadata(buf16, (32, 64), (64, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        del buf15
        buf17 = empty_strided_cpu((2, 16, 1), (16, 1, 32), torch.float32)
        buf18 = buf17; del buf17  # reuse
        buf19 = empty_strided_cpu((2, 16, 1), (16, 1, 32), torch.float32)
        buf20 = reinterpret_tensor(buf16, (2, 16, 64), (1024, 64, 1), 0); del buf16  # reuse
        cpp_fused_add_addmm_native_layer_norm_transpose_view_2(buf18, buf20, _frozen_param13, buf13, _frozen_param14, _frozen_param15, buf19)
        return (buf20, )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    global _frozen_param1
    _frozen_param1 = rand_strided((64, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param3
    _frozen_param3 = rand_strided((64, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param5
    _frozen_param5 = rand_strided((64, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param7
    _frozen_param7 = rand_strided((64, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param8
    _frozen_param8 = rand_strided((64, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param9
    _frozen_param9 = rand_strided((64, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param11
    _frozen_param11 = rand_strided((256, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param13
    _frozen_param13 = rand_strided((64, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param14
    _frozen_param14 = rand_strided((64, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param15
    _frozen_param15 = rand_strided((64, ), (1, ), device='cpu', dtype=torch.float32)
    global constant16
    constant16 = rand_strided((2, 64, 32), (2048, 32, 1), device='cpu', dtype=torch.float32)
    global constant15
    constant15 = rand_strided((2, 64, 32), (2048, 32, 1), device='cpu', dtype=torch.float32)
    global constant14
    constant14 = rand_strided((2, 64, 32), (2048, 32, 1), device='cpu', dtype=torch.float32)
    global constant15_0
    constant15_0 = rand_strided((2, 64, 32), (2048, 32, 1), device='cpu', dtype=torch.float32)
    global _frozen_param30
    _frozen_param30 = rand_strided((256, 64), (64, 1), device='cpu', dtype=torch.float32)
    global _frozen_param31
    _frozen_param31 = rand_strided((1982689, 1), (1, 0), device='cpu', dtype=torch.float32)
    global _frozen_param32
    _frozen_param32 = rand_strided((64, 256), (256, 1), device='cpu', dtype=torch.float32)
    global _frozen_param33
    _frozen_param33 = rand_strided((1982689, 1), (1, 0), device='cpu', dtype=torch.float32)
    arg16_1 = rand_strided((2, 16, 64), (1024, 64, 1), device='cpu', dtype=torch.float32)
    return [arg16_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat, device='cpu')


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
