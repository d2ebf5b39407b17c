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
_frozen_param3 = None  # device(type='cpu') torch.float32 (16,) (1,) 7f1262145900
_frozen_param5 = None  # device(type='cpu') torch.float32 (32,) (1,) 7f12515eead0
_frozen_param7 = None  # device(type='cpu') torch.float32 (32,) (1,) 7f1262147b60
_frozen_param9 = None  # device(type='cpu') torch.float32 (32,) (1,) 7f1262147ac0
_frozen_param11 = None  # device(type='cpu') torch.float32 (32,) (1,) 7f1262147a70
_frozen_param18 = None  # device(type='cpu') torch.float32 (8, 3, 3, 3) (1, 0, 0, 0) 7f1249d1afd0
_frozen_param19 = None  # device(type='cpu') torch.float32 (16, 8, 3, 3) (1, 0, 0, 0) 7f1249d80320
_frozen_param20 = None  # device(type='cpu') torch.float32 (32, 16) (16, 1) 7f124a5d5900
_frozen_param21 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7f124a5ce990
_frozen_param22 = None  # device(type='cpu') torch.float32 (32, 32) (32, 1) 7f1249d19590
_frozen_param23 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7f1249d81b80
_frozen_param24 = None  # device(type='cpu') torch.float32 (32, 32) (32, 1) 7f1249d83e80
_frozen_param25 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7f1249d80140
_frozen_param26 = None  # device(type='cpu') torch.float32 (32, 32) (32, 1) 7f1249d80be0
_frozen_param27 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7f1249d82ee0
constant15 = None  # device(type='cpu') torch.float32 (2, 16, 16) (256, 16, 1) 7f1247f3eda0
constant14 = None  # device(type='cpu') torch.float32 (2, 32, 16) (512, 16, 1) 7f1247f6a710
constant13 = None  # device(type='cpu') torch.float32 (2, 32, 16) (512, 16, 1) 7f1247f68140
constant12 = None  # device(type='cpu') torch.float32 (2, 32, 16) (512, 16, 1) 7f1247f346e0


cpp_fused_relu_0 = async_compile.cpp_pybinding(['const float*', 'float*', 'float*'], r'''
#include <torch/csrc/inductor/aoti_runtime/utils.h>
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(const float* in_ptr0,
                       float* out_ptr0,
                       float* out_ptr1)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused_relu_0_("graph_0_cpp_fused_relu_0", nullptr);
    {
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(8L); x0+=static_cast<int64_t>(16L))
        {
            {
                if(C10_LIKELY(x0 >= static_cast<int64_t>(0L) && x0 < static_cast<int64_t>(8L)))
                {
                    for (int64_t x0_tail = static_cast<int64_t>(0L);x0_tail < static_cast<int64_t>(8L); x0_tail++)
                    {
                        auto tmp0 = x0_tail;
                        auto tmp1 = c10::convert<int64_t>(tmp0);
                        auto tmp2 = static_cast<int64_t>(4);
                        auto tmp3 = tmp1 < tmp2;
                        auto tmp4 = static_cast<int64_t>(2);
                        auto tmp5 = tmp1 < tmp4;
                        auto tmp6 = static_cast<int64_t>(1);
                        auto tmp7 = tmp1 < tmp6;
                        auto tmp8 = static_cast<float>(-0.150535449385643);
                        auto tmp9 = static_cast<float>(-0.10086914151906967);
                        auto tmp10 = tmp7 ? tmp8 : tmp9;
                        auto tmp11 = static_cast<int64_t>(3);
                        auto tmp12 = tmp1 < tmp11;
                        auto tmp13 = static_cast<float>(0.1554020494222641);
                        auto tmp14 = static_cast<float>(-0.15618222951889038);
                        auto tmp15 = tmp12 ? tmp13 : tmp14;
                        auto tmp16 = tmp5 ? tmp10 : tmp15;
                        auto tmp17 = static_cast<int64_t>(6);
                        auto tmp18 = tmp1 < tmp17;
                        auto tmp19 = static_cast<int64_t>(5);
                        auto tmp20 = tmp1 < tmp19;
                        auto tmp21 = static_cast<float>(-0.013819108717143536);
                        auto tmp22 = static_cast<float>(0.1903790831565857);
                        auto tmp23 = tmp20 ? tmp21 : tmp22;
                        auto tmp24 = static_cast<int64_t>(7);
                        auto tmp25 = tmp1 < tmp24;
                        auto tmp26 = static_cast<float>(0.06952010095119476);
                        auto tmp27 = static_cast<float>(0.0054488470777869225);
                        auto tmp28 = tmp25 ? tmp26 : tmp27;
                        auto tmp29 = tmp18 ? tmp23 : tmp28;
                        auto tmp30 = tmp3 ? tmp16 : tmp29;
                        out_ptr0[static_cast<int64_t>(x0_tail)] = tmp30;
                    }
                }
            }
        }
    }
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(2L); x0+=static_cast<int64_t>(1L))
            {
                for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(3L); x1+=static_cast<int64_t>(16L))
                {
                    for(int64_t x2=static_cast<int64_t>(0L); x2<static_cast<int64_t>(256L); x2+=static_cast<int64_t>(16L))
                    {
                        {
                            if(C10_LIKELY(x1 >= static_cast<int64_t>(0L) && x1 < static_cast<int64_t>(3L) && x2 >= static_cast<int64_t>(0) && x2 < static_cast<int64_t>(256L)))
                            {
                                alignas(std::max(std::size_t(16), alignof(float))) float tmp1[16*16];
                                for (long x1_inner = 0; x1_inner < static_cast<int64_t>(3L); x1_inner++)
                                {
                                    auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x2 + 256L*x1 + 256L*x1_inner + 768L*x0), static_cast<int64_t>(16));
                                    tmp0.store(tmp1 + static_cast<int64_t>(16L*x1_inner));
                                }
                                transpose_mxn<float,static_cast<int64_t>(3L),static_cast<int64_t>(16),false>(tmp1, static_cast<int64_t>(16), out_ptr1 + static_cast<int64_t>(x1 + 3L*x2 + 768L*x0), static_cast<int64_t>(3L));
                            }
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


cpp_fused_max_pool2d_with_indices_1 = async_compile.cpp_pybinding(['const float*', 'float*'], r'''
#include <torch/csrc/inductor/aoti_runtime/utils.h>
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(const float* in_ptr0,
                       float* out_ptr0)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused_max_pool2d_with_indices_1_("graph_0_cpp_fused_max_pool2d_with_indices_1", nullptr);
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(16L); x0+=static_cast<int64_t>(1L))
            {
                #pragma GCC ivdep
                for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(8L); x1+=static_cast<int64_t>(1L))
                {
                    for(int64_t x2=static_cast<int64_t>(0L); x2<static_cast<int64_t>(8L); x2+=static_cast<int64_t>(16L))
                    {
                        {
                            if(C10_LIKELY(x2 >= static_cast<int64_t>(0L) && x2 < static_cast<int64_t>(8L)))
                            {
                                auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x2 + 16L*x1 + 256L*x0), static_cast<int64_t>(8L));
                                auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(8L + x2 + 16L*x1 + 256L*x0), static_cast<int64_t>(8L));
                                auto tmp3 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(128L + x2 + 16L*x1 + 256L*x0), static_cast<int64_t>(8L));
                                auto tmp5 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(136L + x2 + 16L*x1 + 256L*x0), static_cast<int64_t>(8L));
                                auto tmp2 = at::vec::maximum(tmp0, tmp1);
                                auto tmp4 = at::vec::maximum(tmp2, tmp3);
                                auto tmp6 = at::vec::maximum(tmp4, tmp5);
                                tmp6.store(out_ptr0 + static_cast<int64_t>(x2 + 8L*x1 + 64L*x0), static_cast<int64_t>(8L));
                            }
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


cpp_fused_avg_pool2d_2 = async_compile.cpp_pybinding(['const float*', 'float*'], r'''
#include <torch/csrc/inductor/aoti_runtime/utils.h>
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(const float* in_ptr0,
                       float* out_ptr0)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused_avg_pool2d_2_("graph_0_cpp_fused_avg_pool2d_2", nullptr);
    {
        #pragma GCC ivdep
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(8L); x0+=static_cast<int64_t>(1L))
        {
            #pragma GCC ivdep
            for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(4L); x1+=static_cast<int64_t>(1L))
            {
                for(int64_t x2=static_cast<int64_t>(0L); x2<static_cast<int64_t>(16L); x2+=static_cast<int64_t>(16L))
                {
                    {
                        if(C10_LIKELY(x2 >= static_cast<int64_t>(0) && x2 < static_cast<int64_t>(16L)))
                        {
                            auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x2 + 32L*x1 + 256L*x0), static_cast<int64_t>(16));
                            auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(16L + x2 + 32L*x1 + 256L*x0), static_cast<int64_t>(16));
                            auto tmp3 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(128L + x2 + 32L*x1 + 256L*x0), static_cast<int64_t>(16));
                            auto tmp5 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(144L + x2 + 32L*x1 + 256L*x0), static_cast<int64_t>(16));
                            auto tmp2 = tmp0 + tmp1;
                            auto tmp4 = tmp2 + tmp3;
                            auto tmp6 = tmp4 + tmp5;
                            auto tmp7 = static_cast<float>(4.0);
                            auto tmp8 = at::vec::Vectorized<float>(tmp7);
                            auto tmp9 = tmp6 / tmp8;
                            tmp9.store(out_ptr0 + static_cast<int64_t>(x2 + 16L*x1 + 64L*x0));
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


cpp_fused__unsafe_view_add_avg_pool2d_gelu_mm_transpose_view_3 = async_compile.cpp_pybinding(['const float*', 'const float*', 'const float*', 'float*'], r'''
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
    TORCH_CHECK(16 % VLEN == 0, "block_n dimension must be multiple of Vector size");
    TORCH_CHECK(K % 1 == 0, "K dimension must be multiple of 1");
    // TODO(jgong5): loop unroll for M and N
    for (int64_t m = 0; m < M; m += 16) {
        int64_t block_m = std::min<int64_t>(M - m, 16);
        for (int64_t n = 0; n < N; n += 16) {
            int64_t block_n = std::min<int64_t>(N - n, 16);
            if (block_m == 16 && block_n == 16) {
                kernel_micro_gemm_kernel<16, 16, accum, prefetch>(
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
                case 15:
                    kernel_micro_gemm_kernel<15, 16, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 14:
                    kernel_micro_gemm_kernel<14, 16, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 13:
                    kernel_micro_gemm_kernel<13, 16, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 12:
                    kernel_micro_gemm_kernel<12, 16, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 11:
                    kernel_micro_gemm_kernel<11, 16, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 10:
                    kernel_micro_gemm_kernel<10, 16, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 9:
                    kernel_micro_gemm_kernel<9, 16, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 8:
                    kernel_micro_gemm_kernel<8, 16, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 7:
                    kernel_micro_gemm_kernel<7, 16, accum, prefetch>(
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
                    kernel_micro_gemm_kernel<6, 16, accum, prefetch>(
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
                    kernel_micro_gemm_kernel<5, 16, accum, prefetch>(
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
                    kernel_micro_gemm_kernel<4, 16, accum, prefetch>(
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
                    kernel_micro_gemm_kernel<3, 16, accum, prefetch>(
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
                    kernel_micro_gemm_kernel<2, 16, accum, prefetch>(
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
                    kernel_micro_gemm_kernel<1, 16, accum, prefetch>(
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
                    TORCH_CHECK(false, "Unsupported block_m: 16");
                }
            }
        }
    }
}

extern "C" 
void kernel(const float* X, const float* W, const float* in_ptr2, float* Y)
{
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_gemm_m32n32k16_kernel_("graph_0_gemm_m32n32k16_kernel", nullptr);

    constexpr int64_t num_threads = 2;
    constexpr int64_t N = 32;
    constexpr int64_t K = 16;
    constexpr int64_t Mr = 16;
    constexpr int64_t Nr = 16;
    constexpr int64_t Kr = 1;
    constexpr int64_t Nr_blocks = (N + Nr - 1) / Nr;
    constexpr int64_t Kr_blocks = (K + Kr - 1) / Kr;
    constexpr int64_t M = static_cast<int64_t>(32L);
    constexpr int64_t Mr_blocks = (M + Mr - 1) / Mr;
    constexpr int64_t Mt_blocks = 2;
    constexpr int64_t Nt_blocks = 1;
    constexpr int64_t Kt_blocks = 16;
    constexpr int64_t Mc_blocks = 2;
    constexpr int64_t Nc_blocks = 1;
    constexpr int64_t Kc_blocks = 16;
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
                                &(X[static_cast<int64_t>(k_start + 16L*m_start)]),
                                &(W[static_cast<int64_t>(16L*k_start + 256L*nci)]),
                                &(Y[static_cast<int64_t>(n_start + 32L*m_start + Nr*nci + ((-1L)*Nr*nc))]),
                                static_cast<int64_t>(m_end + ((-1L)*m_start)),
                                static_cast<int64_t>(Nr),
                                static_cast<int64_t>(k_end + ((-1L)*k_start)),
                                static_cast<int64_t>(16L),
                                static_cast<int64_t>(16L),
                                static_cast<int64_t>(32L)
                            );

                        } else {
                            kernel_micro_gemm<static_cast<bool>(true), static_cast<bool>(false)>(
                                &(X[static_cast<int64_t>(k_start + 16L*m_start)]),
                                &(W[static_cast<int64_t>(16L*k_start + 256L*nci)]),
                                &(Y[static_cast<int64_t>(n_start + 32L*m_start + Nr*nci + ((-1L)*Nr*nc))]),
                                static_cast<int64_t>(m_end + ((-1L)*m_start)),
                                static_cast<int64_t>(Nr),
                                static_cast<int64_t>(k_end + ((-1L)*k_start)),
                                static_cast<int64_t>(16L),
                                static_cast<int64_t>(16L),
                                static_cast<int64_t>(32L)
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
                                        auto tmp0 = at::vec::Vectorized<float>::loadu(Y + static_cast<int64_t>(n_start + x1 + 32L*((static_cast<int64_t>(m_start + x0) % static_cast<int64_t>(32L)))), static_cast<int64_t>(16));
                                        auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr2 + static_cast<int64_t>(n_start + x1), static_cast<int64_t>(16));
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
                                        tmp13.store(Y + static_cast<int64_t>(n_start + x1 + 32L*m_start + 32L*x0));
                                    }
                                    if(C10_UNLIKELY(x1 >= static_cast<int64_t>(16L*(c10::div_floor_integer(static_cast<int64_t>(n_end + ((-1L)*n_start)), static_cast<int64_t>(16L)))) && x1 < static_cast<int64_t>(n_end + ((-1L)*n_start))))
                                    {
                                        auto tmp0 = at::vec::Vectorized<float>::loadu(Y + static_cast<int64_t>(n_start + x1 + 32L*((static_cast<int64_t>(m_start + x0) % static_cast<int64_t>(32L)))), static_cast<int64_t>(n_end + ((-1L)*n_start) + (-16L)*(c10::div_floor_integer(static_cast<int64_t>(n_end + ((-1L)*n_start)), static_cast<int64_t>(16L)))));
                                        auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr2 + static_cast<int64_t>(n_start + x1), static_cast<int64_t>(n_end + ((-1L)*n_start) + (-16L)*(c10::div_floor_integer(static_cast<int64_t>(n_end + ((-1L)*n_start)), static_cast<int64_t>(16L)))));
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
                                        tmp13.store(Y + static_cast<int64_t>(n_start + x1 + 32L*m_start + 32L*x0), static_cast<int64_t>(n_end + ((-1L)*n_start) + (-16L)*(c10::div_floor_integer(static_cast<int64_t>(n_end + ((-1L)*n_start)), static_cast<int64_t>(16L)))));
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


cpp_fused__unsafe_view_add_addmm_gelu_view_4 = async_compile.cpp_pybinding(['const float*', 'const float*', 'const float*', 'float*'], r'''
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
    TORCH_CHECK(16 % VLEN == 0, "block_n dimension must be multiple of Vector size");
    TORCH_CHECK(K % 1 == 0, "K dimension must be multiple of 1");
    // TODO(jgong5): loop unroll for M and N
    for (int64_t m = 0; m < M; m += 16) {
        int64_t block_m = std::min<int64_t>(M - m, 16);
        for (int64_t n = 0; n < N; n += 16) {
            int64_t block_n = std::min<int64_t>(N - n, 16);
            if (block_m == 16 && block_n == 16) {
                kernel_micro_gemm_kernel<16, 16, accum, prefetch>(
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
                case 15:
                    kernel_micro_gemm_kernel<15, 16, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 14:
                    kernel_micro_gemm_kernel<14, 16, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 13:
                    kernel_micro_gemm_kernel<13, 16, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 12:
                    kernel_micro_gemm_kernel<12, 16, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 11:
                    kernel_micro_gemm_kernel<11, 16, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 10:
                    kernel_micro_gemm_kernel<10, 16, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 9:
                    kernel_micro_gemm_kernel<9, 16, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 8:
                    kernel_micro_gemm_kernel<8, 16, accum, prefetch>(
                        A + m * lda,
                        B + n,
                        C + m * ldc + n,
                        K,
                        lda,
                        ldb,
                        ldc
                    );
                    break;
                case 7:
                    kernel_micro_gemm_kernel<7, 16, accum, prefetch>(
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
                    kernel_micro_gemm_kernel<6, 16, accum, prefetch>(
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
                    kernel_micro_gemm_kernel<5, 16, accum, prefetch>(
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
                    kernel_micro_gemm_kernel<4, 16, accum, prefetch>(
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
                    kernel_micro_gemm_kernel<3, 16, accum, prefetch>(
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
                    kernel_micro_gemm_kernel<2, 16, accum, prefetch>(
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
                    kernel_micro_gemm_kernel<1, 16, accum, prefetch>(
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
                    TORCH_CHECK(false, "Unsupported block_m: 16");
                }
            }
        }
    }
}

extern "C" 
void kernel(const float* X, const float* W, const float* in_ptr2, float* Y)
{
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_gemm_m32n32k32_kernel_("graph_0_gemm_m32n32k32_kernel", nullptr);

    constexpr int64_t num_threads = 2;
    constexpr int64_t N = 32;
    constexpr int64_t K = 32;
    constexpr int64_t Mr = 16;
    constexpr int64_t Nr = 16;
    constexpr int64_t Kr = 1;
    constexpr int64_t Nr_blocks = (N + Nr - 1) / Nr;
    constexpr int64_t Kr_blocks = (K + Kr - 1) / Kr;
    constexpr int64_t M = static_cast<int64_t>(32L);
    constexpr int64_t Mr_blocks = (M + Mr - 1) / Mr;
    constexpr int64_t Mt_blocks = 2;
    constexpr int64_t Nt_blocks = 1;
    constexpr int64_t Kt_blocks = 32;
    constexpr int64_t Mc_blocks = 2;
    constexpr int64_t Nc_blocks = 1;
    constexpr int64_t Kc_blocks = 32;
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
                                &(X[static_cast<int64_t>(k_start + 32L*m_start)]),
                                &(W[static_cast<int64_t>(16L*k_start + 512L*nci)]),
                                &(Y[static_cast<int64_t>(n_start + 32L*m_start + Nr*nci + ((-1L)*Nr*nc))]),
                                static_cast<int64_t>(m_end + ((-1L)*m_start)),
                                static_cast<int64_t>(Nr),
                                static_cast<int64_t>(k_end + ((-1L)*k_start)),
                                static_cast<int64_t>(32L),
                                static_cast<int64_t>(16L),
                                static_cast<int64_t>(32L)
                            );

                        } else {
                            kernel_micro_gemm<static_cast<bool>(true), static_cast<bool>(false)>(
                                &(X[static_cast<int64_t>(k_start + 32L*m_start)]),
                                &(W[static_cast<int64_t>(16L*k_start + 512L*nci)]),
                                &(Y[static_cast<int64_t>(n_start + 32L*m_start + Nr*nci + ((-1L)*Nr*nc))]),
                                static_cast<int64_t>(m_end + ((-1L)*m_start)),
                                static_cast<int64_t>(Nr),
                                static_cast<int64_t>(k_end + ((-1L)*k_start)),
                                static_cast<int64_t>(32L),
                                static_cast<int64_t>(16L),
                                static_cast<int64_t>(32L)
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
                                        auto tmp0 = at::vec::Vectorized<float>::loadu(Y + static_cast<int64_t>(n_start + x1 + 32L*m_start + 32L*x0), static_cast<int64_t>(16));
                                        auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr2 + static_cast<int64_t>(n_start + x1), static_cast<int64_t>(16));
                                        auto tmp2 = tmp0 + tmp1;
                                        tmp2.store(Y + static_cast<int64_t>(n_start + x1 + 32L*m_start + 32L*x0));
                                    }
                                    if(C10_UNLIKELY(x1 >= static_cast<int64_t>(16L*(c10::div_floor_integer(static_cast<int64_t>(n_end + ((-1L)*n_start)), static_cast<int64_t>(16L)))) && x1 < static_cast<int64_t>(n_end + ((-1L)*n_start))))
                                    {
                                        auto tmp0 = at::vec::Vectorized<float>::loadu(Y + static_cast<int64_t>(n_start + x1 + 32L*m_start + 32L*x0), static_cast<int64_t>(n_end + ((-1L)*n_start) + (-16L)*(c10::div_floor_integer(static_cast<int64_t>(n_end + ((-1L)*n_start)), static_cast<int64_t>(16L)))));
                                        auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr2 + static_cast<int64_t>(n_start + x1), static_cast<int64_t>(n_end + ((-1L)*n_start) + (-16L)*(c10::div_floor_integer(static_cast<int64_t>(n_end + ((-1L)*n_start)), static_cast<int64_t>(16L)))));
                                        auto tmp2 = tmp0 + tmp1;
                                        tmp2.store(Y + static_cast<int64_t>(n_start + x1 + 32L*m_start + 32L*x0), static_cast<int64_t>(n_end + ((-1L)*n_start) + (-16L)*(c10::div_floor_integer(static_cast<int64_t>(n_end + ((-1L)*n_start)), static_cast<int64_t>(16L)))));
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


cpp_fused__unsafe_view_add_addmm_clone_gelu_transpose_view_5 = async_compile.cpp_pybinding(['const float*', 'const float*', 'float*', 'float*'], r'''
#include <torch/csrc/inductor/aoti_runtime/utils.h>
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(const float* in_ptr0,
                       const float* in_ptr1,
                       float* out_ptr0,
                       float* out_ptr1)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused__unsafe_view_add_addmm_clone_gelu_transpose_view_5_("graph_0_cpp_fused__unsafe_view_add_addmm_clone_gelu_transpose_view_5", nullptr);
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(2L); x0+=static_cast<int64_t>(1L))
            {
                #pragma GCC ivdep
                for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(2L); x1+=static_cast<int64_t>(1L))
                {
                    #pragma GCC ivdep
                    for(int64_t x2=static_cast<int64_t>(0L); x2<static_cast<int64_t>(16L); x2+=static_cast<int64_t>(1L))
                    {
                        for(int64_t x3=static_cast<int64_t>(0L); x3<static_cast<int64_t>(16L); x3+=static_cast<int64_t>(16L))
                        {
                            {
                                if(C10_LIKELY(x3 >= static_cast<int64_t>(0) && x3 < static_cast<int64_t>(16L)))
                                {
                                    auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x3 + 16L*x1 + 32L*x2 + 512L*x0), static_cast<int64_t>(16));
                                    tmp0.store(out_ptr0 + static_cast<int64_t>(x3 + 16L*x2 + 256L*x1 + 512L*x0));
                                }
                            }
                        }
                    }
                }
            }
        }
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(2L); x0+=static_cast<int64_t>(1L))
            {
                #pragma GCC ivdep
                for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(2L); x1+=static_cast<int64_t>(1L))
                {
                    #pragma GCC ivdep
                    for(int64_t x2=static_cast<int64_t>(0L); x2<static_cast<int64_t>(16L); x2+=static_cast<int64_t>(1L))
                    {
                        for(int64_t x3=static_cast<int64_t>(0L); x3<static_cast<int64_t>(16L); x3+=static_cast<int64_t>(16L))
                        {
                            {
                                if(C10_LIKELY(x3 >= static_cast<int64_t>(0) && x3 < static_cast<int64_t>(16L)))
                                {
                                    auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr1 + static_cast<int64_t>(x3 + 16L*x1 + 32L*x2 + 512L*x0), static_cast<int64_t>(16));
                                    tmp0.store(out_ptr1 + static_cast<int64_t>(x3 + 16L*x2 + 256L*x1 + 512L*x0));
                                }
                            }
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


cpp_fused__softmax__unsafe_view_abs_add_addmm_all_amax_clone_eq_gelu_mul_ne_sub_transpose_view_6 = async_compile.cpp_pybinding(['const float*', 'const float*', 'bool*', 'float*', 'float*', 'float*', 'float*', 'float*'], r'''
#include <torch/csrc/inductor/aoti_runtime/utils.h>
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(const float* in_ptr0,
                       const float* in_ptr1,
                       bool* out_ptr0,
                       float* out_ptr1,
                       float* out_ptr2,
                       float* out_ptr3,
                       float* out_ptr4,
                       float* out_ptr5)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused__softmax__unsafe_view_abs_add_addmm_all_amax_clone_eq_gelu_mul_ne_sub_transpose_view_6_("graph_0_cpp_fused__softmax__unsafe_view_abs_add_addmm_all_amax_clone_eq_gelu_mul_ne_sub_transpose_view_6", nullptr);
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        {
            std::unique_ptr<float []> buf_local_buffer_data_0 = std::make_unique<float []>(16L);
            float* local_buffer_data_0 = buf_local_buffer_data_0.get();
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(64L); x0+=static_cast<int64_t>(1L))
            {
                {
                    bool tmp_acc0 = 0;
                    at::vec::VecMask<float,1> tmp_acc0_vec = at::vec::VecMask<float,1>::from(0);
                    float tmp_acc1 = -std::numeric_limits<float>::infinity();
                    at::vec::Vectorized<float> tmp_acc1_vec = at::vec::Vectorized<float>(-std::numeric_limits<float>::infinity());
                    float tmp_acc2 = -std::numeric_limits<float>::infinity();
                    at::vec::Vectorized<float> tmp_acc2_vec = at::vec::Vectorized<float>(-std::numeric_limits<float>::infinity());
                    for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(16L); x1+=static_cast<int64_t>(16L))
                    {
                        {
                            if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(16L)))
                            {
                                auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x1 + 16L*x0), static_cast<int64_t>(16));
                                auto tmp1 = static_cast<float>(0.25);
                                auto tmp2 = at::vec::Vectorized<float>(tmp1);
                                auto tmp3 = tmp0 * tmp2;
                                auto tmp4 = at::vec::VecMask<float,1>(tmp3 == tmp3);
                                auto tmp5 = tmp3.abs();
                                auto tmp6 = std::numeric_limits<float>::infinity();
                                auto tmp7 = at::vec::Vectorized<float>(tmp6);
                                auto tmp8 = at::vec::VecMask<float,1>(tmp5 != tmp7);
                                auto tmp9 = tmp4.template cast<int32_t,1>();
                                auto tmp10 = tmp8.template cast<int32_t,1>();
                                auto tmp11 = tmp9 & tmp10;
                                auto tmp12 = ~tmp11;
                                auto tmp13 = tmp12.template cast<float,1>();
                                auto tmp14 = static_cast<float>(1.0);
                                auto tmp15 = at::vec::Vectorized<float>(tmp14);
                                auto tmp16 = tmp0 * tmp15;
                                tmp_acc0_vec = tmp_acc0_vec | tmp13;
                                tmp_acc1_vec = at::vec::maximum(tmp_acc1_vec, tmp16);
                                tmp_acc2_vec = at::vec::maximum(tmp_acc2_vec, tmp3);
                            }
                        }
                    }
                    tmp_acc0 = tmp_acc0 || !tmp_acc0_vec.all_zero();
                    out_ptr0[static_cast<int64_t>(x0)] = static_cast<bool>(tmp_acc0);
                    tmp_acc1 = max_propagate_nan(tmp_acc1, at::vec::vec_reduce_all<float, 1>([](at::vec::Vectorized<float>& x, at::vec::Vectorized<float>& y) { return at::vec::maximum(x, y); }, tmp_acc1_vec));
                    out_ptr1[static_cast<int64_t>(x0)] = static_cast<float>(tmp_acc1);
                    tmp_acc2 = max_propagate_nan(tmp_acc2, at::vec::vec_reduce_all<float, 1>([](at::vec::Vectorized<float>& x, at::vec::Vectorized<float>& y) { return at::vec::maximum(x, y); }, tmp_acc2_vec));
                    out_ptr2[static_cast<int64_t>(x0)] = static_cast<float>(tmp_acc2);
                }
                {
                    float tmp_acc0 = 0;
                    at::vec::Vectorized<float> tmp_acc0_vec = at::vec::Vectorized<float>(0);
                    for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(16L); x1+=static_cast<int64_t>(16L))
                    {
                        {
                            if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(16L)))
                            {
                                auto tmp0 = out_ptr0[static_cast<int64_t>(x0)];
                                auto tmp2 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x1 + 16L*x0), static_cast<int64_t>(16));
                                auto tmp6 = out_ptr1[static_cast<int64_t>(x0)];
                                auto tmp13 = out_ptr2[static_cast<int64_t>(x0)];
                                auto tmp1 = !tmp0;
                                auto tmp3 = static_cast<float>(1.0);
                                auto tmp4 = at::vec::Vectorized<float>(tmp3);
                                auto tmp5 = tmp2 * tmp4;
                                auto tmp7 = at::vec::Vectorized<float>(tmp6);
                                auto tmp8 = tmp5 - tmp7;
                                auto tmp9 = static_cast<float>(0.25);
                                auto tmp10 = at::vec::Vectorized<float>(tmp9);
                                auto tmp11 = tmp8 * tmp10;
                                auto tmp12 = tmp2 * tmp10;
                                auto tmp14 = at::vec::Vectorized<float>(tmp13);
                                auto tmp15 = tmp12 - tmp14;
                                auto tmp16 = at::vec::VecMask<float,1>::from(tmp1);
                                auto tmp17 = decltype(tmp11)::blendv(tmp15, tmp11, tmp16.template cast<float,1>());
                                auto tmp18 = tmp17.exp();
                                tmp18.store(local_buffer_data_0 + static_cast<int64_t>(x1));
                                tmp_acc0_vec = tmp_acc0_vec + tmp18;
                            }
                        }
                    }
                    tmp_acc0 = tmp_acc0 + at::vec::vec_reduce_all<float, 1>([](at::vec::Vectorized<float>& x, at::vec::Vectorized<float>& y) { return x + y; }, tmp_acc0_vec);
                    out_ptr3[static_cast<int64_t>(x0)] = static_cast<float>(tmp_acc0);
                }
                for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(16L); x1+=static_cast<int64_t>(16L))
                {
                    {
                        if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(16L)))
                        {
                            auto tmp0 = at::vec::Vectorized<float>::loadu(local_buffer_data_0 + static_cast<int64_t>(x1), static_cast<int64_t>(16));
                            auto tmp1 = out_ptr3[static_cast<int64_t>(x0)];
                            auto tmp2 = at::vec::Vectorized<float>(tmp1);
                            auto tmp3 = tmp0 / tmp2;
                            tmp3.store(out_ptr4 + static_cast<int64_t>(x1 + 16L*x0));
                        }
                    }
                }
            }
        }
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(2L); x0+=static_cast<int64_t>(1L))
            {
                #pragma GCC ivdep
                for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(2L); x1+=static_cast<int64_t>(1L))
                {
                    #pragma GCC ivdep
                    for(int64_t x2=static_cast<int64_t>(0L); x2<static_cast<int64_t>(16L); x2+=static_cast<int64_t>(1L))
                    {
                        for(int64_t x3=static_cast<int64_t>(0L); x3<static_cast<int64_t>(16L); x3+=static_cast<int64_t>(16L))
                        {
                            {
                                if(C10_LIKELY(x3 >= static_cast<int64_t>(0) && x3 < static_cast<int64_t>(16L)))
                                {
                                    auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr1 + static_cast<int64_t>(x3 + 16L*x1 + 32L*x2 + 512L*x0), static_cast<int64_t>(16));
                                    tmp0.store(out_ptr5 + static_cast<int64_t>(x3 + 16L*x2 + 256L*x1 + 512L*x0));
                                }
                            }
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


cpp_fused_add_transpose_view_7 = async_compile.cpp_pybinding(['float*', 'const float*'], r'''
#include <torch/csrc/inductor/aoti_runtime/utils.h>
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(float* in_out_ptr0,
                       const float* in_ptr0)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused_add_transpose_view_7_("graph_0_cpp_fused_add_transpose_view_7", nullptr);
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(2L); x0+=static_cast<int64_t>(1L))
            {
                #pragma GCC ivdep
                for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(16L); x1+=static_cast<int64_t>(1L))
                {
                    for(int64_t x2=static_cast<int64_t>(0L); x2<static_cast<int64_t>(32L); x2+=static_cast<int64_t>(16L))
                    {
                        {
                            if(C10_LIKELY(x2 >= static_cast<int64_t>(0) && x2 < static_cast<int64_t>(32L)))
                            {
                                auto tmp0 = at::vec::Vectorized<float>::loadu(in_out_ptr0 + static_cast<int64_t>(x2 + 32L*x1 + 512L*x0), static_cast<int64_t>(16));
                                auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(16L*x1 + 256L*(c10::div_floor_integer(static_cast<int64_t>(x2), static_cast<int64_t>(16L))) + 512L*x0 + ((static_cast<int64_t>(x2) % static_cast<int64_t>(16L)))), static_cast<int64_t>(16));
                                auto tmp2 = tmp0 + tmp1;
                                tmp2.store(in_out_ptr0 + static_cast<int64_t>(x2 + 32L*x1 + 512L*x0));
                            }
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
        arg12_1, = args
        args.clear()
        buf0 = empty_strided_cpu((8, ), (1, ), torch.float32)
        assert_size_stride(arg12_1, (2, 3, 16, 16), (768, 256, 16, 1), 'input')
        buf1 = empty_strided_cpu((2, 3, 16, 16), (768, 1, 48, 3), torch.float32)
        # [Provenance debug handles] cpp_fused_relu_0:1
        cpp_fused_relu_0(arg12_1, buf0, buf1)
        del arg12_1
        # Topologically Sorted Source Nodes: [], Original ATen: [aten.relu]
        # [Provenance debug handles] torch.ops.mkldnn._convolution_pointwise.default:2
        buf2 = torch.ops.mkldnn._convolution_pointwise.default(buf1, _frozen_param18, buf0, [1, 1], [1, 1], [1, 1], 1, 'relu', [None], '')
        del buf0
        del buf1
        buf3 = buf2
        assert_tensor_metadata(buf3, (2, 8, 16, 16), (2048, 1, 128, 8), torch.float32, "torch._inductor.fx_passes.functools.partial(<function _register_unary_fusion_lowering.<locals>.fn at 0x7f12485a8f40>, Match(..., [arg12_1, _reorder_convolution_weight_1, arg1_1, [1, 1], [1, 1], [1, 1], 1, 'none', [], ''], {}))")
        assert_alignment(buf3, 16, "torch._inductor.fx_passes.functools.partial(<function _register_unary_fusion_lowering.<locals>.fn at 0x7f12485a8f40>, Match(..., [arg12_1, _reorder_convolution_weight_1, arg1_1, [1, 1], [1, 1], [1, 1], 1, 'none', [], ''], {}))")
        del buf2
        buf4 = empty_strided_cpu((2, 8, 8, 8), (512, 1, 64, 8), torch.float32)
        # [Provenance debug handles] cpp_fused_max_pool2d_with_indices_1:3
        cpp_fused_max_pool2d_with_indices_1(buf3, buf4)
        del buf3
        # Topologically Sorted Source Nodes: [x, conv2d_1], Original ATen: [aten.max_pool2d_with_indices, aten.convolution]
        # [Provenance debug handles] torch.ops.mkldnn._convolution_pointwise.default:4
        buf5 = torch.ops.mkldnn._convolution_pointwise.default(buf4, _frozen_param19, _frozen_param3, [1, 1], [1, 1], [1, 1], 1, 'none', [None], '')
        buf6 = buf5
        assert_tensor_metadata(buf6, (2, 16, 8, 8), (1024, 1, 128, 16), torch.float32, 'torch.ops.mkldnn._convolution_pointwise.default')
        assert_alignment(buf6, 16, 'torch.ops.mkldnn._convolution_pointwise.default')
        del buf5
        buf7 = empty_strided_cpu((2, 16, 4, 4), (256, 1, 64, 16), torch.float32)
        # [Provenance debug handles] cpp_fused_avg_pool2d_2:5
        cpp_fused_avg_pool2d_2(buf6, buf7)
        del buf6
        buf8 = reinterpret_tensor(buf4, (32, 32), (32, 1), 0); del buf4  # reuse
        buf9 = empty_strided_cpu((2, 16, 32), (512, 32, 1), torch.float32)
        # [Provenance debug handles] cpp_fused__unsafe_view_add_avg_pool2d_gelu_mm_transpose_view_3:6
        cpp_fused__unsafe_view_add_avg_pool2d_gelu_mm_transpose_view_3(buf7, constant15, _frozen_param5, buf9)
        del buf7
        buf10 = buf8; del buf8  # reuse
        buf11 = empty_strided_cpu((32, 32), (32, 1), torch.float32)
        # [Provenance debug handles] cpp_fused__unsafe_view_add_addmm_gelu_view_4:7
        cpp_fused__unsafe_view_add_addmm_gelu_view_4(buf9, constant14, _frozen_param7, buf11)
        buf12 = buf10; del buf10  # reuse
        buf13 = empty_strided_cpu((32, 32), (32, 1), torch.float32)
        # [Provenance debug handles] cpp_fused__unsafe_view_add_addmm_gelu_view_4:8
        cpp_fused__unsafe_view_add_addmm_gelu_view_4(buf9, constant13, _frozen_param9, buf13)
        buf14 = buf12; del buf12  # reuse
        buf15 = empty_strided_cpu((32, 32), (32, 1), torch.float32)
        # [Provenance debug handles] cpp_fused__unsafe_view_add_addmm_gelu_view_4:9
        cpp_fused__unsafe_view_add_addmm_gelu_view_4(buf9, constant12, _frozen_param11, buf15)
        del buf14
        # Topologically Sorted Source Nodes: [linear, gelu, linear_1, view, q, linear_2, view_1, k, linear_3, view_2, v, fused], Original ATen: [aten._unsafe_view, aten.add, aten.gelu, aten.view, aten.addmm, aten.transpose, aten._scaled_dot_product_flash_attention_for_cpu]
        # [Provenance debug handles] torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default:10
        buf16 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(reinterpret_tensor(buf11, (2, 2, 16, 16), (512, 16, 32, 1), 0), reinterpret_tensor(buf13, (2, 2, 16, 16), (512, 16, 32, 1), 0), reinterpret_tensor(buf15, (2, 2, 16, 16), (512, 16, 32, 1), 0))
        buf17 = buf16[0]
        assert_tensor_metadata(buf17, (2, 2, 16, 16), (512, 16, 32, 1), torch.float32, 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default')
        assert_alignment(buf17, 16, 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default')
        del buf16
        buf19 = reinterpret_tensor(buf9, (2, 2, 16, 16), (512, 256, 16, 1), 0); del buf9  # reuse
        buf20 = empty_strided_cpu((2, 2, 16, 16), (512, 256, 16, 1), torch.float32)
        # [Provenance debug handles] cpp_fused__unsafe_view_add_addmm_clone_gelu_transpose_view_5:11
        cpp_fused__unsafe_view_add_addmm_clone_gelu_transpose_view_5(buf11, buf13, buf19, buf20)
        del buf11
        buf22 = reinterpret_tensor(buf13, (4, 16, 16), (256, 16, 1), 0); del buf13  # reuse
        # Topologically Sorted Source Nodes: [linear, gelu, linear_1, view, q, linear_2, view_1, k, q_1, k_1, transpose_4, bmm], Original ATen: [aten._unsafe_view, aten.add, aten.gelu, aten.view, aten.addmm, aten.transpose, aten.clone, aten.bmm]
        # [Provenance debug handles] extern_kernels.bmm:12
        extern_kernels.bmm(reinterpret_tensor(buf19, (4, 16, 16), (256, 16, 1), 0), reinterpret_tensor(buf20, (4, 16, 16), (256, 1, 16), 0), out=buf22)
        del buf19
        buf23 = empty_strided_cpu((4, 16, 1), (16, 1, 64), torch.bool)
        buf24 = empty_strided_cpu((4, 16, 1), (16, 1, 64), torch.float32)
        buf25 = empty_strided_cpu((4, 16, 1), (16, 1, 64), torch.float32)
        buf27 = empty_strided_cpu((4, 16, 1), (16, 1, 64), torch.float32)
        buf28 = reinterpret_tensor(buf20, (4, 16, 16), (256, 16, 1), 0); del buf20  # reuse
        buf29 = empty_strided_cpu((2, 2, 16, 16), (512, 256, 16, 1), torch.float32)
        # [Provenance debug handles] cpp_fused__softmax__unsafe_view_abs_add_addmm_all_amax_clone_eq_gelu_mul_ne_sub_transpose_view_6:13
        cpp_fused__softmax__unsafe_view_abs_add_addmm_all_amax_clone_eq_gelu_mul_ne_sub_transpose_view_6(buf22, buf15, buf23, buf24, buf25, buf27, buf28, buf29)
        del buf15
        del buf23
        del buf24
        del buf25
        del buf27
        buf30 = buf22; del buf22  # reuse
        # Topologically Sorted Source Nodes: [linear, gelu, linear_1, linear_3, view_2, v, softmax, v_1, bmm_1], Original ATen: [aten._unsafe_view, aten.add, aten.gelu, aten.view, aten.addmm, aten.transpose, aten._softmax, aten.clone, aten.bmm]
        # [Provenance debug handles] extern_kernels.bmm:14
        extern_kernels.bmm(buf28, reinterpret_tensor(buf29, (4, 16, 16), (256, 16, 1), 0), out=buf30)
        del buf28
        del buf29
        buf31 = reinterpret_tensor(buf17, (2, 16, 32), (512, 32, 1), 0); del buf17  # reuse
        # [Provenance debug handles] cpp_fused_add_transpose_view_7:15
        cpp_fused_add_transpose_view_7(buf31, buf30)
        return (buf31, )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    global _frozen_param3
    _frozen_param3 = rand_strided((16, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param5
    _frozen_param5 = rand_strided((32, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param7
    _frozen_param7 = rand_strided((32, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param9
    _frozen_param9 = rand_strided((32, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param11
    _frozen_param11 = rand_strided((32, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param18
    _frozen_param18 = rand_strided((8, 3, 3, 3), (1, 0, 0, 0), device='cpu', dtype=torch.float32)
    global _frozen_param19
    _frozen_param19 = rand_strided((16, 8, 3, 3), (1, 0, 0, 0), device='cpu', dtype=torch.float32)
    global constant15
    constant15 = rand_strided((2, 16, 16), (256, 16, 1), device='cpu', dtype=torch.float32)
    global constant14
    constant14 = rand_strided((2, 32, 16), (512, 16, 1), device='cpu', dtype=torch.float32)
    global constant13
    constant13 = rand_strided((2, 32, 16), (512, 16, 1), device='cpu', dtype=torch.float32)
    global constant12
    constant12 = rand_strided((2, 32, 16), (512, 16, 1), device='cpu', dtype=torch.float32)
    arg12_1 = rand_strided((2, 3, 16, 16), (768, 256, 16, 1), device='cpu', dtype=torch.float32)
    return [arg12_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat, device='cpu')


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
