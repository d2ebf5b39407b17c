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
_frozen_param0 = None  # device(type='cpu') torch.float32 (64,) (1,) 7f75a161f3e0
_frozen_param5 = None  # device(type='cpu') torch.float32 (64,) (1,) 7f75a17efa20
_frozen_param9 = None  # device(type='cpu') torch.float32 (64,) (1,) 7f75a161f430
_frozen_param14 = None  # device(type='cpu') torch.float32 (64,) (1,) 7f75a161f5c0
_frozen_param18 = None  # device(type='cpu') torch.float32 (64,) (1,) 7f75a3a6c230
_frozen_param33 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7f7599f79360
_frozen_param34 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7f759a694820
_frozen_param35 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7f7599f7bbb0
_frozen_param36 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7f7599f7bed0
_frozen_param37 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7f7599f78aa0
_frozen_param38 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7f7599f7bca0
_frozen_param39 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7f7599f7b250
_frozen_param40 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7f7599f79860
_frozen_param41 = None  # device(type='cpu') torch.float32 (128, 64) (64, 1) 7f7599f22e90
_frozen_param42 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7f7599f22080
_frozen_param43 = None  # device(type='cpu') torch.float32 (128, 64) (64, 1) 7f7599f23480
_frozen_param44 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7f7599f234d0
_frozen_param45 = None  # device(type='cpu') torch.float32 (64, 128) (128, 1) 7f7599f231b0
_frozen_param46 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7f7599f216d0
_frozen_param47 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7f7599f20aa0
_frozen_param48 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7f7599f21fe0
_frozen_param49 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7f7599f23340
_frozen_param50 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7f7599f22120
_frozen_param51 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7f7599f20280
_frozen_param52 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7f7599f20a50
_frozen_param53 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7f7599f20320
_frozen_param54 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7f7599f23250
_frozen_param55 = None  # device(type='cpu') torch.float32 (128, 64) (64, 1) 7f7599f21860
_frozen_param56 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7f7599f21950
_frozen_param57 = None  # device(type='cpu') torch.float32 (128, 64) (64, 1) 7f7599f22c60
_frozen_param58 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7f7599f21630
_frozen_param59 = None  # device(type='cpu') torch.float32 (64, 128) (128, 1) 7f7599f20640
_frozen_param60 = None  # device(type='cpu') torch.float32 (1459233, 1) (1, 0) 7f7599f22a30


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


cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_1 = async_compile.cpp_pybinding(['const float*', 'const float*', 'const float*', 'float*', 'float*'], r'''
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
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_1_("graph_0_cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_1", nullptr);
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


cpp_fused__unsafe_view_mul_silu_2 = async_compile.cpp_pybinding(['float*', 'const float*'], r'''
#include <torch/csrc/inductor/aoti_runtime/utils.h>
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(float* in_out_ptr0,
                       const float* in_ptr0)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused__unsafe_view_mul_silu_2_("graph_0_cpp_fused__unsafe_view_mul_silu_2", nullptr);
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(4096L); x0+=static_cast<int64_t>(16L))
            {
                {
                    if(C10_LIKELY(x0 >= static_cast<int64_t>(0) && x0 < static_cast<int64_t>(4096L)))
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
                }
            }
        }
    }
    inductor_cpu_integer_div_error_flag = nullptr;
    inductor_cpu_throw_if_integer_div_error(inductor_cpu_integer_div_error);
}
''')


cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_3 = async_compile.cpp_pybinding(['const float*', 'const float*', 'const float*', 'const float*', 'float*', 'float*'], r'''
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
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_3_("graph_0_cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_3", nullptr);
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


cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_4 = async_compile.cpp_pybinding(['const float*', 'const float*', 'const float*', 'const float*', 'const float*', 'float*', 'float*'], r'''
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
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_4_("graph_0_cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_4", nullptr);
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


cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_5 = async_compile.cpp_pybinding(['float*', 'const float*', 'const float*', 'const float*', 'const float*', 'const float*', 'float*'], r'''
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
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_5_("graph_0_cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_5", nullptr);
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
        # Topologically Sorted Source Nodes: [pow_1, mean, add, rsqrt, mul, mul_1, linear], Original ATen: [aten.pow, aten.mean, aten.add, aten.rsqrt, aten.mul, aten.view, aten.mm]
        # [Provenance debug handles] torch.ops.mkl._mkl_linear.default:2
        buf2 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf1, (32, 64), (64, 1), 0), _frozen_param34, _frozen_param33, None, 32)
        assert_tensor_metadata(buf2, (32, 64), (64, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        # Topologically Sorted Source Nodes: [pow_1, mean, add, rsqrt, mul, mul_1, linear, linear_1], Original ATen: [aten.pow, aten.mean, aten.add, aten.rsqrt, aten.mul, aten.view, aten.mm]
        # [Provenance debug handles] torch.ops.mkl._mkl_linear.default:3
        buf3 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf1, (32, 64), (64, 1), 0), _frozen_param36, _frozen_param35, None, 32)
        assert_tensor_metadata(buf3, (32, 64), (64, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        # Topologically Sorted Source Nodes: [pow_1, mean, add, rsqrt, mul, mul_1, linear, linear_2], Original ATen: [aten.pow, aten.mean, aten.add, aten.rsqrt, aten.mul, aten.view, aten.mm]
        # [Provenance debug handles] torch.ops.mkl._mkl_linear.default:4
        buf4 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf1, (32, 64), (64, 1), 0), _frozen_param38, _frozen_param37, None, 32)
        assert_tensor_metadata(buf4, (32, 64), (64, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        del buf1
        # Topologically Sorted Source Nodes: [linear, view, q, linear_1, view_1, k, linear_2, view_2, v, att], Original ATen: [aten._unsafe_view, aten.view, aten.transpose, aten._scaled_dot_product_flash_attention_for_cpu]
        # [Provenance debug handles] torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default:5
        buf5 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(reinterpret_tensor(buf2, (2, 4, 16, 16), (1024, 16, 64, 1), 0), reinterpret_tensor(buf3, (2, 4, 16, 16), (1024, 16, 64, 1), 0), reinterpret_tensor(buf4, (2, 4, 16, 16), (1024, 16, 64, 1), 0), 0.0, True)
        del buf2
        del buf3
        del buf4
        buf6 = buf5[0]
        assert_tensor_metadata(buf6, (2, 4, 16, 16), (1024, 16, 64, 1), torch.float32, 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default')
        assert_alignment(buf6, 16, 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default')
        del buf5
        # Topologically Sorted Source Nodes: [transpose_3, reshape, linear_3], Original ATen: [aten.transpose, aten.view, aten.mm]
        # [Provenance debug handles] torch.ops.mkl._mkl_linear.default:6
        buf8 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf6, (32, 64), (64, 1), 0), _frozen_param40, _frozen_param39, None, 32)
        assert_tensor_metadata(buf8, (32, 64), (64, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        buf9 = buf0; del buf0  # reuse
        buf10 = reinterpret_tensor(buf6, (2, 16, 64), (1024, 64, 1), 0); del buf6  # reuse
        # [Provenance debug handles] cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_1:7
        cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_1(arg19_1, buf8, _frozen_param5, buf9, buf10)
        # Topologically Sorted Source Nodes: [linear_3, x, pow_2, mean_1, add_2, rsqrt_1, mul_2, mul_3, linear_4], Original ATen: [aten._unsafe_view, aten.add, aten.pow, aten.mean, aten.rsqrt, aten.mul, aten.view, aten.mm]
        # [Provenance debug handles] torch.ops.mkl._mkl_linear.default:8
        buf11 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf10, (32, 64), (64, 1), 0), _frozen_param42, _frozen_param41, None, 32)
        assert_tensor_metadata(buf11, (32, 128), (128, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        # Topologically Sorted Source Nodes: [linear_3, x, pow_2, mean_1, add_2, rsqrt_1, mul_2, mul_3, linear_4, linear_5], Original ATen: [aten._unsafe_view, aten.add, aten.pow, aten.mean, aten.rsqrt, aten.mul, aten.view, aten.mm]
        # [Provenance debug handles] torch.ops.mkl._mkl_linear.default:9
        buf12 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf10, (32, 64), (64, 1), 0), _frozen_param44, _frozen_param43, None, 32)
        assert_tensor_metadata(buf12, (32, 128), (128, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        buf13 = reinterpret_tensor(buf11, (2, 16, 128), (2048, 128, 1), 0); del buf11  # reuse
        # [Provenance debug handles] cpp_fused__unsafe_view_mul_silu_2:10
        cpp_fused__unsafe_view_mul_silu_2(buf13, buf12)
        del buf12
        # Topologically Sorted Source Nodes: [linear_4, silu, linear_5, mul_4, linear_6], Original ATen: [aten._unsafe_view, aten.silu, aten.mul, aten.view, aten.mm]
        # [Provenance debug handles] torch.ops.mkl._mkl_linear.default:11
        buf14 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf13, (32, 128), (128, 1), 0), _frozen_param46, _frozen_param45, None, 32)
        assert_tensor_metadata(buf14, (32, 64), (64, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        del buf13
        buf15 = buf9; del buf9  # reuse
        buf16 = buf10; del buf10  # reuse
        # [Provenance debug handles] cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_3:12
        cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_3(arg19_1, buf8, buf14, _frozen_param9, buf15, buf16)
        # Topologically Sorted Source Nodes: [linear_3, x, linear_6, x_1, pow_3, mean_2, add_4, rsqrt_2, mul_5, mul_6, linear_7], Original ATen: [aten._unsafe_view, aten.add, aten.pow, aten.mean, aten.rsqrt, aten.mul, aten.view, aten.mm]
        # [Provenance debug handles] torch.ops.mkl._mkl_linear.default:13
        buf17 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf16, (32, 64), (64, 1), 0), _frozen_param48, _frozen_param47, None, 32)
        assert_tensor_metadata(buf17, (32, 64), (64, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        # Topologically Sorted Source Nodes: [linear_3, x, linear_6, x_1, pow_3, mean_2, add_4, rsqrt_2, mul_5, mul_6, linear_7, linear_8], Original ATen: [aten._unsafe_view, aten.add, aten.pow, aten.mean, aten.rsqrt, aten.mul, aten.view, aten.mm]
        # [Provenance debug handles] torch.ops.mkl._mkl_linear.default:14
        buf18 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf16, (32, 64), (64, 1), 0), _frozen_param50, _frozen_param49, None, 32)
        assert_tensor_metadata(buf18, (32, 64), (64, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        # Topologically Sorted Source Nodes: [linear_3, x, linear_6, x_1, pow_3, mean_2, add_4, rsqrt_2, mul_5, mul_6, linear_7, linear_9], Original ATen: [aten._unsafe_view, aten.add, aten.pow, aten.mean, aten.rsqrt, aten.mul, aten.view, aten.mm]
        # [Provenance debug handles] torch.ops.mkl._mkl_linear.default:15
        buf19 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf16, (32, 64), (64, 1), 0), _frozen_param52, _frozen_param51, None, 32)
        assert_tensor_metadata(buf19, (32, 64), (64, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        del buf16
        # Topologically Sorted Source Nodes: [linear_7, view_3, q_1, linear_8, view_4, k_1, linear_9, view_5, v_1, att_1], Original ATen: [aten._unsafe_view, aten.view, aten.transpose, aten._scaled_dot_product_flash_attention_for_cpu]
        # [Provenance debug handles] torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default:16
        buf20 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(reinterpret_tensor(buf17, (2, 4, 16, 16), (1024, 16, 64, 1), 0), reinterpret_tensor(buf18, (2, 4, 16, 16), (1024, 16, 64, 1), 0), reinterpret_tensor(buf19, (2, 4, 16, 16), (1024, 16, 64, 1), 0), 0.0, True)
        del buf17
        del buf18
        del buf19
        buf21 = buf20[0]
        assert_tensor_metadata(buf21, (2, 4, 16, 16), (1024, 16, 64, 1), torch.float32, 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default')
        assert_alignment(buf21, 16, 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default')
        del buf20
        # Topologically Sorted Source Nodes: [transpose_7, reshape_1, linear_10], Original ATen: [aten.transpose, aten.view, aten.mm]
        # [Provenance debug handles] torch.ops.mkl._mkl_linear.default:17
        buf23 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf21, (32, 64), (64, 1), 0), _frozen_param54, _frozen_param53, None, 32)
        assert_tensor_metadata(buf23, (32, 64), (64, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        buf24 = buf15; del buf15  # reuse
        buf25 = reinterpret_tensor(buf21, (2, 16, 64), (1024, 64, 1), 0); del buf21  # reuse
        # [Provenance debug handles] cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_4:18
        cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_4(arg19_1, buf8, buf14, buf23, _frozen_param14, buf24, buf25)
        del buf24
        # Topologically Sorted Source Nodes: [linear_3, x, linear_6, x_1, linear_10, x_2, pow_4, mean_3, add_6, rsqrt_3, mul_7, mul_8, linear_11], Original ATen: [aten._unsafe_view, aten.add, aten.pow, aten.mean, aten.rsqrt, aten.mul, aten.view, aten.mm]
        # [Provenance debug handles] torch.ops.mkl._mkl_linear.default:19
        buf26 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf25, (32, 64), (64, 1), 0), _frozen_param56, _frozen_param55, None, 32)
        assert_tensor_metadata(buf26, (32, 128), (128, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        # Topologically Sorted Source Nodes: [linear_3, x, linear_6, x_1, linear_10, x_2, pow_4, mean_3, add_6, rsqrt_3, mul_7, mul_8, linear_11, linear_12], Original ATen: [aten._unsafe_view, aten.add, aten.pow, aten.mean, aten.rsqrt, aten.mul, aten.view, aten.mm]
        # [Provenance debug handles] torch.ops.mkl._mkl_linear.default:20
        buf27 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf25, (32, 64), (64, 1), 0), _frozen_param58, _frozen_param57, None, 32)
        assert_tensor_metadata(buf27, (32, 128), (128, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        del buf25
        buf28 = reinterpret_tensor(buf26, (2, 16, 128), (2048, 128, 1), 0); del buf26  # reuse
        # [Provenance debug handles] cpp_fused__unsafe_view_mul_silu_2:21
        cpp_fused__unsafe_view_mul_silu_2(buf28, buf27)
        del buf27
        # Topologically Sorted Source Nodes: [linear_11, silu_1, linear_12, mul_9, linear_13], Original ATen: [aten._unsafe_view, aten.silu, aten.mul, aten.view, aten.mm]
        # [Provenance debug handles] torch.ops.mkl._mkl_linear.default:22
        buf29 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf28, (32, 128), (128, 1), 0), _frozen_param60, _frozen_param59, None, 32)
        assert_tensor_metadata(buf29, (32, 64), (64, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        del buf28
        buf30 = reinterpret_tensor(buf8, (2, 16, 64), (1024, 64, 1), 0); del buf8  # reuse
        buf31 = empty_strided_cpu((2, 16, 1), (16, 1, 32), torch.float32)
        buf32 = buf30; del buf30  # reuse
        # [Provenance debug handles] cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_5:23
        cpp_fused__unsafe_view_add_mean_mul_pow_rsqrt_5(buf32, arg19_1, buf14, buf23, buf29, _frozen_param18, buf31)
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
    global _frozen_param33
    _frozen_param33 = rand_strided((64, 64), (64, 1), device='cpu', dtype=torch.float32)
    global _frozen_param34
    _frozen_param34 = rand_strided((1459233, 1), (1, 0), device='cpu', dtype=torch.float32)
    global _frozen_param35
    _frozen_param35 = rand_strided((64, 64), (64, 1), device='cpu', dtype=torch.float32)
    global _frozen_param36
    _frozen_param36 = rand_strided((1459233, 1), (1, 0), device='cpu', dtype=torch.float32)
    global _frozen_param37
    _frozen_param37 = rand_strided((64, 64), (64, 1), device='cpu', dtype=torch.float32)
    global _frozen_param38
    _frozen_param38 = rand_strided((1459233, 1), (1, 0), device='cpu', dtype=torch.float32)
    global _frozen_param39
    _frozen_param39 = rand_strided((64, 64), (64, 1), device='cpu', dtype=torch.float32)
    global _frozen_param40
    _frozen_param40 = rand_strided((1459233, 1), (1, 0), device='cpu', dtype=torch.float32)
    global _frozen_param41
    _frozen_param41 = rand_strided((128, 64), (64, 1), device='cpu', dtype=torch.float32)
    global _frozen_param42
    _frozen_param42 = rand_strided((1459233, 1), (1, 0), device='cpu', dtype=torch.float32)
    global _frozen_param43
    _frozen_param43 = rand_strided((128, 64), (64, 1), device='cpu', dtype=torch.float32)
    global _frozen_param44
    _frozen_param44 = rand_strided((1459233, 1), (1, 0), device='cpu', dtype=torch.float32)
    global _frozen_param45
    _frozen_param45 = rand_strided((64, 128), (128, 1), device='cpu', dtype=torch.float32)
    global _frozen_param46
    _frozen_param46 = rand_strided((1459233, 1), (1, 0), device='cpu', dtype=torch.float32)
    global _frozen_param47
    _frozen_param47 = rand_strided((64, 64), (64, 1), device='cpu', dtype=torch.float32)
    global _frozen_param48
    _frozen_param48 = rand_strided((1459233, 1), (1, 0), device='cpu', dtype=torch.float32)
    global _frozen_param49
    _frozen_param49 = rand_strided((64, 64), (64, 1), device='cpu', dtype=torch.float32)
    global _frozen_param50
    _frozen_param50 = rand_strided((1459233, 1), (1, 0), device='cpu', dtype=torch.float32)
    global _frozen_param51
    _frozen_param51 = rand_strided((64, 64), (64, 1), device='cpu', dtype=torch.float32)
    global _frozen_param52
    _frozen_param52 = rand_strided((1459233, 1), (1, 0), device='cpu', dtype=torch.float32)
    global _frozen_param53
    _frozen_param53 = rand_strided((64, 64), (64, 1), device='cpu', dtype=torch.float32)
    global _frozen_param54
    _frozen_param54 = rand_strided((1459233, 1), (1, 0), device='cpu', dtype=torch.float32)
    global _frozen_param55
    _frozen_param55 = rand_strided((128, 64), (64, 1), device='cpu', dtype=torch.float32)
    global _frozen_param56
    _frozen_param56 = rand_strided((1459233, 1), (1, 0), device='cpu', dtype=torch.float32)
    global _frozen_param57
    _frozen_param57 = rand_strided((128, 64), (64, 1), device='cpu', dtype=torch.float32)
    global _frozen_param58
    _frozen_param58 = rand_strided((1459233, 1), (1, 0), device='cpu', dtype=torch.float32)
    global _frozen_param59
    _frozen_param59 = rand_strided((64, 128), (128, 1), device='cpu', dtype=torch.float32)
    global _frozen_param60
    _frozen_param60 = rand_strided((1459233, 1), (1, 0), device='cpu', dtype=torch.float32)
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
