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
_frozen_param30 = None  # device(type='cpu') torch.float32 (16,) (1,) 7fdaea1acbe0
_frozen_param32 = None  # device(type='cpu') torch.float32 (16, 16, 3, 3) (1, 0, 0, 0) 7fdaea86fac0
_frozen_param31 = None  # device(type='cpu') torch.float32 (16,) (1,) 7fdaea1acaf0
_frozen_param33 = None  # device(type='cpu') torch.float32 (16, 16, 3, 3) (1, 0, 0, 0) 7fdaea1ae0d0


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
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(2L); x0+=static_cast<int64_t>(1L))
            {
                for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(16L); x1+=static_cast<int64_t>(16L))
                {
                    for(int64_t x2=static_cast<int64_t>(0L); x2<static_cast<int64_t>(256L); x2+=static_cast<int64_t>(16L))
                    {
                        {
                            if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(16L) && x2 >= static_cast<int64_t>(0) && x2 < static_cast<int64_t>(256L)))
                            {
                                alignas(std::max(std::size_t(16), alignof(float))) float tmp1[16*16];
                                alignas(std::max(std::size_t(16), alignof(float))) float tmp2[16*16];
                                for (long x1_inner = 0; x1_inner < static_cast<int64_t>(16); x1_inner++)
                                {
                                    auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x2 + 256L*x1 + 256L*x1_inner + 4096L*x0), static_cast<int64_t>(16));
                                    tmp0.store(tmp1 + static_cast<int64_t>(16L*x1_inner));
                                    tmp0.store(tmp2 + static_cast<int64_t>(16L*x1_inner));
                                }
                                transpose_mxn<float,static_cast<int64_t>(16),static_cast<int64_t>(16),false>(tmp1, static_cast<int64_t>(16), out_ptr0 + static_cast<int64_t>(x1 + 16L*x2 + 4096L*x0), static_cast<int64_t>(16L));
                                transpose_mxn<float,static_cast<int64_t>(16),static_cast<int64_t>(16),false>(tmp2, static_cast<int64_t>(16), out_ptr1 + static_cast<int64_t>(x1 + 16L*x2 + 4096L*x0), static_cast<int64_t>(16L));
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


cpp_fused_1 = async_compile.cpp_pybinding(['const float*', 'float*'], r'''
#include <torch/csrc/inductor/aoti_runtime/utils.h>
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(const float* in_ptr0,
                       float* out_ptr0)
{
    std::atomic<int> inductor_cpu_integer_div_error{0};
    inductor_cpu_integer_div_error_flag = &inductor_cpu_integer_div_error;
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused_1_("graph_0_cpp_fused_1", nullptr);
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(2L); x0+=static_cast<int64_t>(1L))
            {
                for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(16L); x1+=static_cast<int64_t>(16L))
                {
                    for(int64_t x2=static_cast<int64_t>(0L); x2<static_cast<int64_t>(256L); x2+=static_cast<int64_t>(16L))
                    {
                        {
                            if(C10_LIKELY(x1 >= static_cast<int64_t>(0) && x1 < static_cast<int64_t>(16L) && x2 >= static_cast<int64_t>(0) && x2 < static_cast<int64_t>(256L)))
                            {
                                alignas(std::max(std::size_t(16), alignof(float))) float tmp0[16*16];
                                transpose_mxn<float,static_cast<int64_t>(16),static_cast<int64_t>(16),false>(in_ptr0 + static_cast<int64_t>(x1 + 16L*x2 + 4096L*x0), static_cast<int64_t>(16L), tmp0, static_cast<int64_t>(16));
                                for (long x1_inner = 0; x1_inner < static_cast<int64_t>(16); x1_inner++)
                                {
                                    auto tmp1 = at::vec::Vectorized<float>::loadu(tmp0 + static_cast<int64_t>(16L*x1_inner), static_cast<int64_t>(16));
                                    tmp1.store(out_ptr0 + static_cast<int64_t>(x2 + 256L*x1 + 256L*x1_inner + 4096L*x0));
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
        arg10_1, = args
        args.clear()
        assert_size_stride(arg10_1, (2, 16, 16, 16), (4096, 256, 16, 1), 'input')
        buf0 = empty_strided_cpu((2, 16, 16, 16), (4096, 1, 256, 16), torch.float32)
        buf3 = empty_strided_cpu((2, 16, 16, 16), (4096, 1, 256, 16), torch.float32)
        # [Provenance debug handles] cpp_fused_relu_0:1
        cpp_fused_relu_0(arg10_1, buf0, buf3)
        del arg10_1
        # Topologically Sorted Source Nodes: [], Original ATen: [aten.relu]
        # [Provenance debug handles] torch.ops.mkldnn._convolution_pointwise.default:2
        buf1 = torch.ops.mkldnn._convolution_pointwise.default(buf0, _frozen_param32, _frozen_param30, [1, 1], [1, 1], [1, 1], 1, 'relu', [None], '')
        del buf0
        buf2 = buf1
        assert_tensor_metadata(buf2, (2, 16, 16, 16), (4096, 1, 256, 16), torch.float32, "torch._inductor.fx_passes.functools.partial(<function _register_unary_fusion_lowering.<locals>.fn at 0x7fdae9f94860>, Match(..., [arg10_1, _reorder_convolution_weight_1, add_tensor_1, [1, 1], [1, 1], [1, 1], 1, 'none', [], ''], {}))")
        assert_alignment(buf2, 16, "torch._inductor.fx_passes.functools.partial(<function _register_unary_fusion_lowering.<locals>.fn at 0x7fdae9f94860>, Match(..., [arg10_1, _reorder_convolution_weight_1, add_tensor_1, [1, 1], [1, 1], [1, 1], 1, 'none', [], ''], {}))")
        del buf1
        # Topologically Sorted Source Nodes: [], Original ATen: [aten.relu]
        # [Provenance debug handles] torch.ops.mkldnn._convolution_pointwise.binary:3
        buf4 = torch.ops.mkldnn._convolution_pointwise.binary(buf2, buf3, _frozen_param33, _frozen_param31, [1, 1], [1, 1], [1, 1], 1, 'add', 1.0, 'relu', [None], '')
        del buf2
        buf5 = buf4
        assert_tensor_metadata(buf5, (2, 16, 16, 16), (4096, 1, 256, 16), torch.float32, "torch._inductor.fx_passes.functools.partial(<function _register_binary_unary_fusion_lowering.<locals>.fn at 0x7fdae9f97560>, Match(..., [relu, _reorder_convolution_weight, add_tensor, [1, 1], [1, 1], [1, 1], 1, 'none', [], ''], {'other': arg10_1}))")
        assert_alignment(buf5, 16, "torch._inductor.fx_passes.functools.partial(<function _register_binary_unary_fusion_lowering.<locals>.fn at 0x7fdae9f97560>, Match(..., [relu, _reorder_convolution_weight, add_tensor, [1, 1], [1, 1], [1, 1], 1, 'none', [], ''], {'other': arg10_1}))")
        del buf4
        buf6 = reinterpret_tensor(buf3, (2, 16, 16, 16), (4096, 256, 16, 1), 0); del buf3  # reuse
        # [Provenance debug handles] cpp_fused_1:4
        cpp_fused_1(buf5, buf6)
        return (buf6, )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    global _frozen_param30
    _frozen_param30 = rand_strided((16, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param32
    _frozen_param32 = rand_strided((16, 16, 3, 3), (1, 0, 0, 0), device='cpu', dtype=torch.float32)
    global _frozen_param31
    _frozen_param31 = rand_strided((16, ), (1, ), device='cpu', dtype=torch.float32)
    global _frozen_param33
    _frozen_param33 = rand_strided((16, 16, 3, 3), (1, 0, 0, 0), device='cpu', dtype=torch.float32)
    arg10_1 = rand_strided((2, 16, 16, 16), (4096, 256, 16, 1), device='cpu', dtype=torch.float32)
    return [arg10_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat, device='cpu')


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
