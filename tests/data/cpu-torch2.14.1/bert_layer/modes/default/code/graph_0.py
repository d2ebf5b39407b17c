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
_frozen_param1 = None  # device(type='cpu') torch.float32 (64,) (1,) 7f22ccac0c30
_frozen_param3 = None  # device(type='cpu') torch.float32 (64,) (1,) 7f22cb7fb930
_frozen_param5 = None  # device(type='cpu') torch.float32 (64,) (1,) 7f22cb7fb9d0
_frozen_param7 = None  # device(type='cpu') torch.float32 (64,) (1,) 7f22cb7fba20
_frozen_param8 = None  # device(type='cpu') torch.float32 (64,) (1,) 7f236f51b520
_frozen_param9 = None  # device(type='cpu') torch.float32 (64,) (1,) 7f22ce45dd10
_frozen_param11 = None  # device(type='cpu') torch.float32 (256,) (1,) 7f236f51b4d0
_frozen_param13 = None  # device(type='cpu') torch.float32 (64,) (1,) 7f22cb7fba70
_frozen_param14 = None  # device(type='cpu') torch.float32 (64,) (1,) 7f22cb7fbac0
_frozen_param15 = None  # device(type='cpu') torch.float32 (64,) (1,) 7f22cb7fbb10
_frozen_param22 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7f22c37f68a0
_frozen_param23 = None  # device(type='cpu') torch.float32 (1982689, 1) (1, 0) 7f22c36b5fe0
_frozen_param24 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7f22c36d5ea0
_frozen_param25 = None  # device(type='cpu') torch.float32 (1982689, 1) (1, 0) 7f22c36d51d0
_frozen_param26 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7f22c36d4640
_frozen_param27 = None  # device(type='cpu') torch.float32 (1982689, 1) (1, 0) 7f22c36d6440
_frozen_param28 = None  # device(type='cpu') torch.float32 (64, 64) (64, 1) 7f22c36d4d20
_frozen_param29 = None  # device(type='cpu') torch.float32 (1982689, 1) (1, 0) 7f22c36d5cc0
_frozen_param30 = None  # device(type='cpu') torch.float32 (256, 64) (64, 1) 7f22c36d5bd0
_frozen_param31 = None  # device(type='cpu') torch.float32 (1982689, 1) (1, 0) 7f22c36d59a0
_frozen_param32 = None  # device(type='cpu') torch.float32 (64, 256) (256, 1) 7f22c36d4aa0
_frozen_param33 = None  # device(type='cpu') torch.float32 (1982689, 1) (1, 0) 7f22c36d4190


cpp_fused__scaled_dot_product_flash_attention_for_cpu_addmm_transpose_view_0 = async_compile.cpp_pybinding(['float*', 'float*', 'float*', 'const float*', 'const float*', 'const float*'], r'''
#include <torch/csrc/inductor/aoti_runtime/utils.h>
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(float* in_out_ptr0,
                       float* in_out_ptr1,
                       float* in_out_ptr2,
                       const float* in_ptr0,
                       const float* in_ptr1,
                       const float* in_ptr2)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused__scaled_dot_product_flash_attention_for_cpu_addmm_transpose_view_0_("graph_0_cpp_fused__scaled_dot_product_flash_attention_for_cpu_addmm_transpose_view_0", nullptr);
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(32L); x0+=static_cast<int64_t>(1L))
            {
                for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(64L); x1+=static_cast<int64_t>(16L))
                {
                    {
                        if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(64L)))
                        {
                            auto tmp0 = at::vec::Vectorized<float>::loadu(in_out_ptr0 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                            auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x1), static_cast<int64_t>(16));
                            auto tmp2 = tmp0 + tmp1;
                            tmp2.store(in_out_ptr0 + static_cast<int64_t>(x1 + 64L*x0));
                        }
                    }
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
                            auto tmp2 = tmp0 + tmp1;
                            tmp2.store(in_out_ptr1 + static_cast<int64_t>(x1 + 64L*x0));
                        }
                    }
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
                            auto tmp0 = at::vec::Vectorized<float>::loadu(in_out_ptr2 + static_cast<int64_t>(x1 + 64L*x0), static_cast<int64_t>(16));
                            auto tmp1 = at::vec::Vectorized<float>::loadu(in_ptr2 + static_cast<int64_t>(x1), static_cast<int64_t>(16));
                            auto tmp2 = tmp0 + tmp1;
                            tmp2.store(in_out_ptr2 + static_cast<int64_t>(x1 + 64L*x0));
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


cpp_fused_add_addmm_native_layer_norm_transpose_view_1 = async_compile.cpp_pybinding(['float*', 'float*', 'const float*', 'const float*', 'const float*', 'const float*', 'float*'], r'''
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
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused_add_addmm_native_layer_norm_transpose_view_1_("graph_0_cpp_fused_add_addmm_native_layer_norm_transpose_view_1", nullptr);
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


cpp_fused_addmm_gelu_view_2 = async_compile.cpp_pybinding(['float*', 'const float*'], r'''
#include <torch/csrc/inductor/aoti_runtime/utils.h>
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(float* in_out_ptr0,
                       const float* in_ptr0)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused_addmm_gelu_view_2_("graph_0_cpp_fused_addmm_gelu_view_2", nullptr);
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
        # Topologically Sorted Source Nodes: [linear], Original ATen: [aten.view, aten.addmm]
        buf0 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(arg16_1, (32, 64), (64, 1), 0), _frozen_param23, _frozen_param22, None, 32)
        assert_tensor_metadata(buf0, (32, 64), (64, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        # Topologically Sorted Source Nodes: [linear, linear_1], Original ATen: [aten.view, aten.addmm]
        buf1 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(arg16_1, (32, 64), (64, 1), 0), _frozen_param25, _frozen_param24, None, 32)
        assert_tensor_metadata(buf1, (32, 64), (64, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        # Topologically Sorted Source Nodes: [linear, linear_2], Original ATen: [aten.view, aten.addmm]
        buf2 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(arg16_1, (32, 64), (64, 1), 0), _frozen_param27, _frozen_param26, None, 32)
        assert_tensor_metadata(buf2, (32, 64), (64, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        buf3 = reinterpret_tensor(buf0, (2, 4, 16, 16), (1024, 16, 64, 1), 0); del buf0  # reuse
        buf4 = reinterpret_tensor(buf1, (2, 4, 16, 16), (1024, 16, 64, 1), 0); del buf1  # reuse
        buf5 = reinterpret_tensor(buf2, (2, 4, 16, 16), (1024, 16, 64, 1), 0); del buf2  # reuse
        cpp_fused__scaled_dot_product_flash_attention_for_cpu_addmm_transpose_view_0(buf3, buf4, buf5, _frozen_param1, _frozen_param3, _frozen_param5)
        # Topologically Sorted Source Nodes: [linear, view, q, linear_1, view_1, k, linear_2, view_2, v, att], Original ATen: [aten.view, aten.addmm, aten.transpose, aten._scaled_dot_product_flash_attention_for_cpu]
        buf6 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(buf3, buf4, buf5)
        del buf3
        del buf4
        del buf5
        buf7 = buf6[0]
        assert_tensor_metadata(buf7, (2, 4, 16, 16), (1024, 16, 64, 1), torch.float32, 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default')
        assert_alignment(buf7, 16, 'torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default')
        del buf6
        # Topologically Sorted Source Nodes: [transpose_3, reshape, linear_3], Original ATen: [aten.transpose, aten.view, aten.addmm]
        buf9 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf7, (32, 64), (64, 1), 0), _frozen_param29, _frozen_param28, None, 32)
        assert_tensor_metadata(buf9, (32, 64), (64, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        del buf7
        buf10 = empty_strided_cpu((2, 16, 1), (16, 1, 32), torch.float32)
        buf11 = buf10; del buf10  # reuse
        buf12 = empty_strided_cpu((2, 16, 1), (16, 1, 32), torch.float32)
        buf13 = reinterpret_tensor(buf9, (2, 16, 64), (1024, 64, 1), 0); del buf9  # reuse
        cpp_fused_add_addmm_native_layer_norm_transpose_view_1(buf11, buf13, _frozen_param7, arg16_1, _frozen_param8, _frozen_param9, buf12)
        del arg16_1
        del buf11
        del buf12
        # Topologically Sorted Source Nodes: [linear_4], Original ATen: [aten.view, aten.addmm]
        buf14 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf13, (32, 64), (64, 1), 0), _frozen_param31, _frozen_param30, None, 32)
        assert_tensor_metadata(buf14, (32, 256), (256, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        buf15 = reinterpret_tensor(buf14, (2, 16, 256), (4096, 256, 1), 0); del buf14  # reuse
        cpp_fused_addmm_gelu_view_2(buf15, _frozen_param11)
        # Topologically Sorted Source Nodes: [linear_4, gelu, linear_5], Original ATen: [aten.view, aten.addmm, aten.gelu]
        buf16 = torch.ops.mkl._mkl_linear.default(reinterpret_tensor(buf15, (32, 256), (256, 1), 0), _frozen_param33, _frozen_param32, None, 32)
        assert_tensor_metadata(buf16, (32, 64), (64, 1), torch.float32, 'torch.ops.mkl._mkl_linear')
        del buf15
        buf17 = empty_strided_cpu((2, 16, 1), (16, 1, 32), torch.float32)
        buf18 = buf17; del buf17  # reuse
        buf19 = empty_strided_cpu((2, 16, 1), (16, 1, 32), torch.float32)
        buf20 = reinterpret_tensor(buf16, (2, 16, 64), (1024, 64, 1), 0); del buf16  # reuse
        cpp_fused_add_addmm_native_layer_norm_transpose_view_1(buf18, buf20, _frozen_param13, buf13, _frozen_param14, _frozen_param15, buf19)
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
    global _frozen_param22
    _frozen_param22 = rand_strided((64, 64), (64, 1), device='cpu', dtype=torch.float32)
    global _frozen_param23
    _frozen_param23 = rand_strided((1982689, 1), (1, 0), device='cpu', dtype=torch.float32)
    global _frozen_param24
    _frozen_param24 = rand_strided((64, 64), (64, 1), device='cpu', dtype=torch.float32)
    global _frozen_param25
    _frozen_param25 = rand_strided((1982689, 1), (1, 0), device='cpu', dtype=torch.float32)
    global _frozen_param26
    _frozen_param26 = rand_strided((64, 64), (64, 1), device='cpu', dtype=torch.float32)
    global _frozen_param27
    _frozen_param27 = rand_strided((1982689, 1), (1, 0), device='cpu', dtype=torch.float32)
    global _frozen_param28
    _frozen_param28 = rand_strided((64, 64), (64, 1), device='cpu', dtype=torch.float32)
    global _frozen_param29
    _frozen_param29 = rand_strided((1982689, 1), (1, 0), device='cpu', dtype=torch.float32)
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
