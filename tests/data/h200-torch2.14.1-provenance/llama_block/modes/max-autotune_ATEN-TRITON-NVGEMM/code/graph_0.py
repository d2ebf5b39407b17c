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
from torch._C._dynamo.guards import copy_if_misaligned
import triton
import triton.language as tl
from torch._inductor.runtime.triton_heuristics import start_graph, end_graph
from torch._C import _cuda_getCurrentRawStream as get_raw_stream
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


# kernel path: /tmp/ks/llama-prov/modes/max-autotune_ATEN-TRITON-NVGEMM/.inductor-cache/2d/c2dgshuqtacaw3aqtqrmphkwhkc6szsncnjafj2lsfsrnssrctqt.py
# Topologically Sorted Source Nodes: [pow_1, mean, add, rsqrt, mul, mul_1], Original ATen: [aten.pow, aten.mean, aten.add, aten.rsqrt, aten.mul]
# Source node to ATen node mapping:
#   add => add
#   mean => mean
#   mul => mul
#   mul_1 => mul_1
#   pow_1 => pow_1
#   rsqrt => rsqrt
# Graph fragment:
#   %arg1_1 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0" = PlaceHolder[target=arg1_1]
#   %arg0_1 : Tensor "bf16[1024][1]cuda:0" = PlaceHolder[target=arg0_1]
#   %buf0 : Tensor "f32[2, 256, 1][256, 1, 512]cuda:0" = PlaceHolder[target=buf0]
#   %pow_1 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.pow.Tensor_Scalar](args = (%arg1_1, 2), kwargs = {})
#   %mean : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mean.dim](args = (%pow_1, [-1], True), kwargs = {})
#   %add : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mean, 1e-06), kwargs = {})
#   %rsqrt : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.rsqrt.default](args = (%add,), kwargs = {})
#   %mul : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%arg1_1, %rsqrt), kwargs = {})
#   %mul_1 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%arg0_1, %mul), kwargs = {})
#   return %buf0,%mul_1
triton_per_fused_add_mean_mul_pow_rsqrt_0 = async_compile.triton('triton_per_fused_add_mean_mul_pow_rsqrt_0', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 512, 'r0_': 1024},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'in_ptr1': '*bf16', 'out_ptr1': '*bf16', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'kernel_name': 'triton_per_fused_add_mean_mul_pow_rsqrt_0', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 2, 'num_store': 1, 'num_reduction': 1, 'autotune_hints': set(), 'tiling_scores': {'x': 0, 'r0_': 3147776}, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'incremental_autotune': False, 'max_autotune': True, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'batch_invariant': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': True, 'dynamic_disable_pipelining': True, 'are_deterministic_algorithms_enabled': False, 'coordinate_descent_tuning': True, 'coordinate_descent_search_radius': 1, 'coordinate_descent_check_all_directions': False}
)
@triton.jit
def triton_per_fused_add_mean_mul_pow_rsqrt_0(in_ptr0, in_ptr1, out_ptr1, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 512
    r0_numel = 1024
    R0_BLOCK: tl.constexpr = 1024
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 1024*x0), xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
    tmp7 = tl.load(in_ptr1 + (r0_1), None, eviction_policy='evict_last').to(tl.float32)
    tmp1 = tmp0 * tmp0
    tmp2 = tmp1.to(tl.float32)
    tmp3 = tl.broadcast_to(tmp2, [XBLOCK, R0_BLOCK])
    tmp5 = tl.where(xmask, tmp3, 0)
    tmp6 = tl.sum(tmp5, 1)[:, None].to(tl.float32)
    tmp8 = tl.full([1, 1], 1024.0, tl.float32)
    tmp9 = (tmp6 / tmp8)
    tmp10 = tmp9.to(tl.float32)
    tmp11 = tl.full([1, 1], 1e-06, tl.float32)
    tmp12 = tmp10 + tmp11
    tmp13 = libdevice.rsqrt(tmp12)
    tmp14 = tmp0 * tmp13
    tmp15 = tmp7 * tmp14
    tl.store(out_ptr1 + (r0_1 + 1024*x0), tmp15, xmask)
''', device_str='cuda')


# kernel path: /tmp/ks/llama-prov/modes/max-autotune_ATEN-TRITON-NVGEMM/.inductor-cache/zp/czp6bhdphapx5vq6qhyohmqznddz2q6sm67same2bxeuned665o5.py
# Topologically Sorted Source Nodes: [pow_1, mean, add, rsqrt, mul, mul_1, linear], Original ATen: [aten.pow, aten.mean, aten.add, aten.rsqrt, aten.mul, aten.view, aten.t, aten.mm]
# Source node to ATen node mapping:
#   add => add
#   linear => mm, permute, view
#   mean => mean
#   mul => mul
#   mul_1 => mul_1
#   pow_1 => pow_1
#   rsqrt => rsqrt
# Graph fragment:
#   %mul_1 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0" = PlaceHolder[target=mul_1]
#   %arg2_1 : Tensor "bf16[1024, 1024][1024, 1]cuda:0" = PlaceHolder[target=arg2_1]
#   %pow_1 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.pow.Tensor_Scalar](args = (%arg1_1, 2), kwargs = {})
#   %mean : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mean.dim](args = (%pow_1, [-1], True), kwargs = {})
#   %add : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mean, 1e-06), kwargs = {})
#   %rsqrt : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.rsqrt.default](args = (%add,), kwargs = {})
#   %mul : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%arg1_1, %rsqrt), kwargs = {})
#   %mul_1 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%arg0_1, %mul), kwargs = {})
#   %view : Tensor "bf16[512, 1024][1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mul_1, [512, 1024]), kwargs = {})
#   %permute : Tensor "bf16[1024, 1024][1, 1024]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.permute.default](args = (%arg2_1, [1, 0]), kwargs = {})
#   %mm : Tensor "bf16[512, 1024][1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mm.default](args = (%view, %permute), kwargs = {})
#   return %mm
nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869 = async_compile.nv_universal_gemm('nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869', r'''
import cutlass
from torch._inductor.codegen.nv_universal_gemm.nv_universal_gemm_kernel import (
    _make_disk_config_key,
    _nvgemm_run,
    _nvgemm_precompile,
)
from torch._inductor.utils import _ensure_fp4_dtype_registered
_ensure_fp4_dtype_registered()

_KERNEL_NAME = 'cutedsl.Sm90StaticPersistentGemmOperator_tnt_ABFloat16_BBFloat16_outBFloat16_accFloat32_cluster2x1x1_tile64x64x64'
_DISK_CACHE_CONFIG_KEY = _make_disk_config_key('cutedsl.Sm90StaticPersistentGemmOperator_tnt_ABFloat16_BBFloat16_outBFloat16_accFloat32_cluster2x1x1_tile64x64x64', 'GEMM', 'torch.float32', 'None', 'None', 'None', 'None')
_compiled_cache = {}
_disk_fn_cache = {}
_VARIANT_KWARGS = None
_ACC_TYPE = cutlass.Float32
_INPUT_PARAM_NAMES = ['in_ptr0', 'in_ptr1']

def nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869_main(in_ptr0, in_ptr1, out_ptr0, stream=None):
    _nvgemm_run(
        "GEMM", _KERNEL_NAME,
        (in_ptr0, in_ptr1), out_ptr0, _ACC_TYPE,
        _compiled_cache, _disk_fn_cache, __file__, _DISK_CACHE_CONFIG_KEY,
        stream=stream, workspace=None,
        variant_kwargs=_VARIANT_KWARGS,
        epilogue_args=None,
        epilogue_source="",
        has_epilogue=False,
        aux_tensors=(),
    )

def nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869_precompile(precompile_shapes, precompile_strides, precompile_dtypes, device_index=0, device_capability=None, **kwargs):
    _nvgemm_precompile(
        precompile_shapes, precompile_strides, precompile_dtypes,
        device_index, device_capability,
        variant_name="GEMM",
        kernel_name=_KERNEL_NAME,
        accumulator_type=_ACC_TYPE,
        compiled_cache=_compiled_cache, disk_fn_cache=_disk_fn_cache,
        module_path=__file__, disk_config_key=_DISK_CACHE_CONFIG_KEY,
        input_param_names=_INPUT_PARAM_NAMES,
        variant_kwargs=_VARIANT_KWARGS,
        max_active_clusters=kwargs.get('max_active_clusters'),
    )
''', precompile_metadata={'precompile_shapes': {'in_ptr0': [512, 1024], 'in_ptr1': [1024, 1024], 'output': [512, 1024]}, 'precompile_strides': {'in_ptr0': [1024, 1], 'in_ptr1': [1, 1024], 'output': [1024, 1]}, 'precompile_dtypes': {'in_ptr0': 'bfloat16', 'in_ptr1': 'bfloat16', 'output': 'bfloat16'}, 'device_index': 0, 'device_capability': (9, 0), 'max_active_clusters': 66})


# kernel path: /tmp/ks/llama-prov/modes/max-autotune_ATEN-TRITON-NVGEMM/.inductor-cache/dz/cdzzftqi4mkzbbcjkw32owrbljw7hkdweed4tygsqojunbmcrrsr.py
# Topologically Sorted Source Nodes: [linear_3, x, pow_2, mean_1, add_2, rsqrt_1, mul_2, mul_3], Original ATen: [aten._unsafe_view, aten.add, aten.pow, aten.mean, aten.rsqrt, aten.mul]
# Source node to ATen node mapping:
#   add_2 => add_2
#   linear_3 => view_11
#   mean_1 => mean_1
#   mul_2 => mul_2
#   mul_3 => mul_3
#   pow_2 => pow_2
#   rsqrt_1 => rsqrt_1
#   x => add_1
# Graph fragment:
#   %arg1_1 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0" = PlaceHolder[target=arg1_1]
#   %mm_3 : Tensor "bf16[512, 1024][1024, 1]cuda:0" = PlaceHolder[target=mm_3]
#   %arg6_1 : Tensor "bf16[1024][1]cuda:0" = PlaceHolder[target=arg6_1]
#   %buf11 : Tensor "f32[2, 256, 1][256, 1, 512]cuda:0" = PlaceHolder[target=buf11]
#   %view_11 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_3, [2, 256, 1024]), kwargs = {})
#   %add_1 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg1_1, %view_11), kwargs = {})
#   %pow_2 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.pow.Tensor_Scalar](args = (%add_1, 2), kwargs = {})
#   %mean_1 : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mean.dim](args = (%pow_2, [-1], True), kwargs = {})
#   %add_2 : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mean_1, 1e-06), kwargs = {})
#   %rsqrt_1 : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.rsqrt.default](args = (%add_2,), kwargs = {})
#   %mul_2 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%add_1, %rsqrt_1), kwargs = {})
#   %mul_3 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%arg6_1, %mul_2), kwargs = {})
#   return %buf11,%mul_3
triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_1 = async_compile.triton('triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_1', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 512, 'r0_': 1024},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'in_ptr1': '*bf16', 'in_ptr2': '*bf16', 'out_ptr1': '*bf16', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'kernel_name': 'triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_1', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 3, 'num_store': 1, 'num_reduction': 1, 'autotune_hints': set(), 'tiling_scores': {'x': 0, 'r0_': 4196352}, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'incremental_autotune': False, 'max_autotune': True, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'batch_invariant': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': True, 'dynamic_disable_pipelining': True, 'are_deterministic_algorithms_enabled': False, 'coordinate_descent_tuning': True, 'coordinate_descent_search_radius': 1, 'coordinate_descent_check_all_directions': False}
)
@triton.jit
def triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_1(in_ptr0, in_ptr1, in_ptr2, out_ptr1, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 512
    r0_numel = 1024
    R0_BLOCK: tl.constexpr = 1024
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 1024*x0), xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
    tmp1 = tl.load(in_ptr1 + (r0_1 + 1024*x0), xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
    tmp9 = tl.load(in_ptr2 + (r0_1), None, eviction_policy='evict_last').to(tl.float32)
    tmp2 = tmp0 + tmp1
    tmp3 = tmp2 * tmp2
    tmp4 = tmp3.to(tl.float32)
    tmp5 = tl.broadcast_to(tmp4, [XBLOCK, R0_BLOCK])
    tmp7 = tl.where(xmask, tmp5, 0)
    tmp8 = tl.sum(tmp7, 1)[:, None].to(tl.float32)
    tmp10 = tl.full([1, 1], 1024.0, tl.float32)
    tmp11 = (tmp8 / tmp10)
    tmp12 = tmp11.to(tl.float32)
    tmp13 = tl.full([1, 1], 1e-06, tl.float32)
    tmp14 = tmp12 + tmp13
    tmp15 = libdevice.rsqrt(tmp14)
    tmp16 = tmp2 * tmp15
    tmp17 = tmp9 * tmp16
    tl.store(out_ptr1 + (r0_1 + 1024*x0), tmp17, xmask)
''', device_str='cuda')


# kernel path: /tmp/ks/llama-prov/modes/max-autotune_ATEN-TRITON-NVGEMM/.inductor-cache/cw/ccwik4zlywi3hlur6pj3v22vy7ftsvudnrmyh3dx5vnq57amkyg3.py
# Topologically Sorted Source Nodes: [linear_5], Original ATen: [aten.view, aten.t, aten.mm]
# Source node to ATen node mapping:
#   linear_5 => mm_5, permute_9, view_14
# Graph fragment:
#   %mul_3 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0" = PlaceHolder[target=mul_3]
#   %arg8_1 : Tensor "bf16[2816, 1024][1024, 1]cuda:0" = PlaceHolder[target=arg8_1]
#   %view_14 : Tensor "bf16[512, 1024][1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mul_3, [512, 1024]), kwargs = {})
#   %permute_9 : Tensor "bf16[1024, 2816][1, 1024]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.permute.default](args = (%arg8_1, [1, 0]), kwargs = {})
#   %mm_5 : Tensor "bf16[512, 2816][2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mm.default](args = (%view_14, %permute_9), kwargs = {})
#   return %mm_5
nv_universal_gemm_fused_mm_t_view_bff399d8 = async_compile.nv_universal_gemm('nv_universal_gemm_fused_mm_t_view_bff399d8', r'''
import cutlass
from torch._inductor.codegen.nv_universal_gemm.nv_universal_gemm_kernel import (
    _make_disk_config_key,
    _nvgemm_run,
    _nvgemm_precompile,
)
from torch._inductor.utils import _ensure_fp4_dtype_registered
_ensure_fp4_dtype_registered()

_KERNEL_NAME = 'cutedsl.Sm90StaticPersistentGemmOperator_tnt_ABFloat16_BBFloat16_outBFloat16_accFloat32_cluster2x1x1_tile64x128x64'
_DISK_CACHE_CONFIG_KEY = _make_disk_config_key('cutedsl.Sm90StaticPersistentGemmOperator_tnt_ABFloat16_BBFloat16_outBFloat16_accFloat32_cluster2x1x1_tile64x128x64', 'GEMM', 'torch.float32', 'None', 'None', 'None', 'None')
_compiled_cache = {}
_disk_fn_cache = {}
_VARIANT_KWARGS = None
_ACC_TYPE = cutlass.Float32
_INPUT_PARAM_NAMES = ['in_ptr0', 'in_ptr1']

def nv_universal_gemm_fused_mm_t_view_bff399d8_main(in_ptr0, in_ptr1, out_ptr0, stream=None):
    _nvgemm_run(
        "GEMM", _KERNEL_NAME,
        (in_ptr0, in_ptr1), out_ptr0, _ACC_TYPE,
        _compiled_cache, _disk_fn_cache, __file__, _DISK_CACHE_CONFIG_KEY,
        stream=stream, workspace=None,
        variant_kwargs=_VARIANT_KWARGS,
        epilogue_args=None,
        epilogue_source="",
        has_epilogue=False,
        aux_tensors=(),
    )

def nv_universal_gemm_fused_mm_t_view_bff399d8_precompile(precompile_shapes, precompile_strides, precompile_dtypes, device_index=0, device_capability=None, **kwargs):
    _nvgemm_precompile(
        precompile_shapes, precompile_strides, precompile_dtypes,
        device_index, device_capability,
        variant_name="GEMM",
        kernel_name=_KERNEL_NAME,
        accumulator_type=_ACC_TYPE,
        compiled_cache=_compiled_cache, disk_fn_cache=_disk_fn_cache,
        module_path=__file__, disk_config_key=_DISK_CACHE_CONFIG_KEY,
        input_param_names=_INPUT_PARAM_NAMES,
        variant_kwargs=_VARIANT_KWARGS,
        max_active_clusters=kwargs.get('max_active_clusters'),
    )
''', precompile_metadata={'precompile_shapes': {'in_ptr0': [512, 1024], 'in_ptr1': [1024, 2816], 'output': [512, 2816]}, 'precompile_strides': {'in_ptr0': [1024, 1], 'in_ptr1': [1, 1024], 'output': [2816, 1]}, 'precompile_dtypes': {'in_ptr0': 'bfloat16', 'in_ptr1': 'bfloat16', 'output': 'bfloat16'}, 'device_index': 0, 'device_capability': (9, 0), 'max_active_clusters': 66})


# kernel path: /tmp/ks/llama-prov/modes/max-autotune_ATEN-TRITON-NVGEMM/.inductor-cache/ng/cngj43tigd3t6d2e5ohzg7u5fn7kb65qhhcwr6dglrb2ykyuitwz.py
# Topologically Sorted Source Nodes: [linear_3, x, pow_2, mean_1, add_2, rsqrt_1, mul_2, mul_3, linear_4, silu, linear_5, mul_4], Original ATen: [aten._unsafe_view, aten.add, aten.pow, aten.mean, aten.rsqrt, aten.mul, aten.view, aten.t, aten.mm, aten.silu]
# Source node to ATen node mapping:
#   add_2 => add_2
#   linear_3 => view_11
#   linear_4 => mm_4, permute_8, view_12, view_13
#   linear_5 => view_15
#   mean_1 => mean_1
#   mul_2 => mul_2
#   mul_3 => mul_3
#   mul_4 => mul_4
#   pow_2 => pow_2
#   rsqrt_1 => rsqrt_1
#   silu => add_3, convert_element_type_10, convert_element_type_11, div, exp, neg
#   x => add_1
# Graph fragment:
#   %mul_3 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0" = PlaceHolder[target=mul_3]
#   %arg7_1 : Tensor "bf16[2816, 1024][1024, 1]cuda:0" = PlaceHolder[target=arg7_1]
#   %mm_4 : Tensor "bf16[512, 2816][2816, 1]cuda:0" = PlaceHolder[target=mm_4]
#   %mm_5 : Tensor "bf16[512, 2816][2816, 1]cuda:0" = PlaceHolder[target=mm_5]
#   %view_11 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_3, [2, 256, 1024]), kwargs = {})
#   %add_1 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg1_1, %view_11), kwargs = {})
#   %pow_2 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.pow.Tensor_Scalar](args = (%add_1, 2), kwargs = {})
#   %mean_1 : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mean.dim](args = (%pow_2, [-1], True), kwargs = {})
#   %add_2 : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mean_1, 1e-06), kwargs = {})
#   %rsqrt_1 : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.rsqrt.default](args = (%add_2,), kwargs = {})
#   %mul_2 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%add_1, %rsqrt_1), kwargs = {})
#   %mul_3 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%arg6_1, %mul_2), kwargs = {})
#   %view_12 : Tensor "bf16[512, 1024][1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mul_3, [512, 1024]), kwargs = {})
#   %permute_8 : Tensor "bf16[1024, 2816][1, 1024]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.permute.default](args = (%arg7_1, [1, 0]), kwargs = {})
#   %mm_4 : Tensor "bf16[512, 2816][2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mm.default](args = (%view_12, %permute_8), kwargs = {})
#   %view_13 : Tensor "bf16[2, 256, 2816][720896, 2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_4, [2, 256, 2816]), kwargs = {})
#   %convert_element_type_10 : Tensor "f32[2, 256, 2816][720896, 2816, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_13, torch.float32), kwargs = {})
#   %neg : Tensor "f32[2, 256, 2816][720896, 2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.neg.default](args = (%convert_element_type_10,), kwargs = {})
#   %exp : Tensor "f32[2, 256, 2816][720896, 2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.exp.default](args = (%neg,), kwargs = {})
#   %add_3 : Tensor "f32[2, 256, 2816][720896, 2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%exp, 1), kwargs = {})
#   %div : Tensor "f32[2, 256, 2816][720896, 2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.div.Tensor](args = (%convert_element_type_10, %add_3), kwargs = {})
#   %convert_element_type_11 : Tensor "bf16[2, 256, 2816][720896, 2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%div, torch.bfloat16), kwargs = {})
#   %view_15 : Tensor "bf16[2, 256, 2816][720896, 2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_5, [2, 256, 2816]), kwargs = {})
#   %mul_4 : Tensor "bf16[2, 256, 2816][720896, 2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_11, %view_15), kwargs = {})
#   return %mm_4,%mul_4
triton_tem_fused__unsafe_view_add_mean_mm_mul_pow_rsqrt_silu_t_view_2 = async_compile.triton('triton_tem_fused__unsafe_view_add_mean_mm_mul_pow_rsqrt_silu_t_view_2', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties

@triton_heuristics.template(

num_stages=4,
num_warps=8,
triton_meta={'signature': {'arg_A': '*bf16', 'arg_B': '*bf16', 'in_ptr2': '*bf16', 'out_ptr1': '*bf16'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]]}]},
inductor_meta={'kernel_name': 'triton_tem_fused__unsafe_view_add_mean_mm_mul_pow_rsqrt_silu_t_view_2', 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'incremental_autotune': False, 'max_autotune': True, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'batch_invariant': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': True, 'dynamic_disable_pipelining': True, 'are_deterministic_algorithms_enabled': False, 'coordinate_descent_tuning': True, 'coordinate_descent_search_radius': 1, 'coordinate_descent_check_all_directions': False, 'grid_type': 'FixedGrid', 'fixed_grid': ['_grid_0', '_grid_1', '_grid_2'], 'extra_launcher_args': ['_grid_0', '_grid_1', '_grid_2'], 'config_args': {'EVEN_K': True, 'USE_FAST_ACCUM': False, 'ACC_TYPE': 'tl.float32', 'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 32, 'GROUP_M': 8, 'ALLOW_TF32': False}},

)
@triton.jit
def triton_tem_fused__unsafe_view_add_mean_mm_mul_pow_rsqrt_silu_t_view_2(arg_A, arg_B, in_ptr2, out_ptr1):
    EVEN_K : tl.constexpr = True
    USE_FAST_ACCUM : tl.constexpr = False
    ACC_TYPE : tl.constexpr = tl.float32
    BLOCK_M : tl.constexpr = 64
    BLOCK_N : tl.constexpr = 128
    BLOCK_K : tl.constexpr = 32
    GROUP_M : tl.constexpr = 8
    ALLOW_TF32 : tl.constexpr = False
    INDEX_DTYPE : tl.constexpr = tl.int32
    A = arg_A
    B = arg_B

    M = 512
    N = 2816
    K = 1024
    if M * N == 0:
        # early exit due to zero-size input(s)
        return
    stride_am = 1024
    stride_ak = 1
    stride_bk = 1
    stride_bn = 1024

    # based on triton.ops.matmul
    pid = tl.program_id(0).to(INDEX_DTYPE)
    grid_m = (M + BLOCK_M - 1) // BLOCK_M
    grid_n = (N + BLOCK_N - 1) // BLOCK_N

    # re-order program ID for better L2 performance
    width = GROUP_M * grid_n
    group_id = pid // width
    group_size = min(grid_m - group_id * GROUP_M, GROUP_M)
    pid_m = group_id * GROUP_M + (pid % group_size)
    pid_n = (pid % width) // (group_size)
    tl.assume(pid_m >= 0)
    tl.assume(pid_n >= 0)

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M).to(INDEX_DTYPE)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N).to(INDEX_DTYPE)
    if ((stride_am == 1 and stride_ak == M) or (stride_am == K and stride_ak == 1)) and (M >= BLOCK_M and K > 1):
        offs_a_m = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    else:
        offs_a_m = rm % M
    if ((stride_bk == 1 and stride_bn == K) or (stride_bk == N and stride_bn == 1)) and (N >= BLOCK_N and K > 1):
        offs_b_n = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    else:
        offs_b_n = rn % N
    offs_k = tl.arange(0, BLOCK_K).to(INDEX_DTYPE)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC_TYPE)

    for k_idx in range(0, tl.cdiv(K, BLOCK_K)):

        a_k_idx_vals = offs_k[None, :] + (k_idx * BLOCK_K)
        b_k_idx_vals = offs_k[:, None] + (k_idx * BLOCK_K)

        idx_m = offs_a_m[:, None]
        idx_n = a_k_idx_vals
        xindex = idx_n + 1024*idx_m
        a = tl.load(A + (xindex))

        idx_m = b_k_idx_vals
        idx_n = offs_b_n[None, :]
        xindex = idx_n + 2816*idx_m
        b = tl.load(B + ((tl.broadcast_to(idx_m + 1024*idx_n, [BLOCK_K, BLOCK_N])).broadcast_to(xindex.shape)))


        acc += tl.dot(a, b, allow_tf32=ALLOW_TF32, out_dtype=ACC_TYPE)


    # rematerialize rm and rn to save registers
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M).to(INDEX_DTYPE)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N).to(INDEX_DTYPE)
    idx_m = rm[:, None]
    idx_n = rn[None, :]
    mask = (idx_m < M) & (idx_n < N)

    # inductor generates a suffix
    xindex = idx_n + 2816*idx_m
    tmp0 = acc.to(tl.bfloat16)
    tmp1 = tmp0.to(tl.float32)
    tmp9 = tl.load(in_ptr2 + (tl.broadcast_to(xindex, [BLOCK_M, BLOCK_N])), mask).to(tl.float32)
    tmp2 = tmp1.to(tl.float32)
    tmp3 = -tmp2
    tmp4 = libdevice.exp(tmp3)
    tmp5 = tl.full([1], 1.0, tl.float32)
    tmp6 = tmp4 + tmp5
    tmp7 = (tmp2 / tmp6)
    tmp8 = tmp7.to(tl.float32)
    tmp10 = tmp8 * tmp9
    tl.store(out_ptr1 + (tl.broadcast_to(xindex, [BLOCK_M, BLOCK_N])), tmp10, mask)
''', device_str='cuda')


# kernel path: /tmp/ks/llama-prov/modes/max-autotune_ATEN-TRITON-NVGEMM/.inductor-cache/dx/cdxyiyoz6utkpiwmid7fbltqwkk32rzp7hoiili7x7w2p5hjy7aq.py
# Topologically Sorted Source Nodes: [linear_3, x, linear_6, x_1, pow_3, mean_2, add_4, rsqrt_2, mul_5, mul_6], Original ATen: [aten._unsafe_view, aten.add, aten.pow, aten.mean, aten.rsqrt, aten.mul]
# Source node to ATen node mapping:
#   add_4 => add_5
#   linear_3 => view_11
#   linear_6 => view_17
#   mean_2 => mean_2
#   mul_5 => mul_5
#   mul_6 => mul_6
#   pow_3 => pow_3
#   rsqrt_2 => rsqrt_2
#   x => add_1
#   x_1 => add_4
# Graph fragment:
#   %arg1_1 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0" = PlaceHolder[target=arg1_1]
#   %mm_3 : Tensor "bf16[512, 1024][1024, 1]cuda:0" = PlaceHolder[target=mm_3]
#   %mm_6 : Tensor "bf16[512, 1024][1024, 1]cuda:0" = PlaceHolder[target=mm_6]
#   %arg10_1 : Tensor "bf16[1024][1]cuda:0" = PlaceHolder[target=arg10_1]
#   %buf17 : Tensor "f32[2, 256, 1][256, 1, 512]cuda:0" = PlaceHolder[target=buf17]
#   %view_11 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_3, [2, 256, 1024]), kwargs = {})
#   %add_1 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg1_1, %view_11), kwargs = {})
#   %view_17 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_6, [2, 256, 1024]), kwargs = {})
#   %add_4 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%add_1, %view_17), kwargs = {})
#   %pow_3 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.pow.Tensor_Scalar](args = (%add_4, 2), kwargs = {})
#   %mean_2 : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mean.dim](args = (%pow_3, [-1], True), kwargs = {})
#   %add_5 : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mean_2, 1e-06), kwargs = {})
#   %rsqrt_2 : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.rsqrt.default](args = (%add_5,), kwargs = {})
#   %mul_5 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%add_4, %rsqrt_2), kwargs = {})
#   %mul_6 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%arg10_1, %mul_5), kwargs = {})
#   return %buf17,%mul_6
triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_3 = async_compile.triton('triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_3', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 512, 'r0_': 1024},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'in_ptr1': '*bf16', 'in_ptr2': '*bf16', 'in_ptr3': '*bf16', 'out_ptr1': '*bf16', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'kernel_name': 'triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_3', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 4, 'num_store': 1, 'num_reduction': 1, 'autotune_hints': set(), 'tiling_scores': {'x': 0, 'r0_': 5244928}, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'incremental_autotune': False, 'max_autotune': True, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'batch_invariant': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': True, 'dynamic_disable_pipelining': True, 'are_deterministic_algorithms_enabled': False, 'coordinate_descent_tuning': True, 'coordinate_descent_search_radius': 1, 'coordinate_descent_check_all_directions': False}
)
@triton.jit
def triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_3(in_ptr0, in_ptr1, in_ptr2, in_ptr3, out_ptr1, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 512
    r0_numel = 1024
    R0_BLOCK: tl.constexpr = 1024
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 1024*x0), xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
    tmp1 = tl.load(in_ptr1 + (r0_1 + 1024*x0), xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
    tmp3 = tl.load(in_ptr2 + (r0_1 + 1024*x0), xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
    tmp11 = tl.load(in_ptr3 + (r0_1), None, eviction_policy='evict_last').to(tl.float32)
    tmp2 = tmp0 + tmp1
    tmp4 = tmp2 + tmp3
    tmp5 = tmp4 * tmp4
    tmp6 = tmp5.to(tl.float32)
    tmp7 = tl.broadcast_to(tmp6, [XBLOCK, R0_BLOCK])
    tmp9 = tl.where(xmask, tmp7, 0)
    tmp10 = tl.sum(tmp9, 1)[:, None].to(tl.float32)
    tmp12 = tl.full([1, 1], 1024.0, tl.float32)
    tmp13 = (tmp10 / tmp12)
    tmp14 = tmp13.to(tl.float32)
    tmp15 = tl.full([1, 1], 1e-06, tl.float32)
    tmp16 = tmp14 + tmp15
    tmp17 = libdevice.rsqrt(tmp16)
    tmp18 = tmp4 * tmp17
    tmp19 = tmp11 * tmp18
    tl.store(out_ptr1 + (r0_1 + 1024*x0), tmp19, xmask)
''', device_str='cuda')


# kernel path: /tmp/ks/llama-prov/modes/max-autotune_ATEN-TRITON-NVGEMM/.inductor-cache/c3/cc346rglaqqzbfx4uodvdq4kak5ixnkjrtjfyv5lxdrl4iszauc6.py
# Topologically Sorted Source Nodes: [linear_3, x, linear_6, x_1, linear_10, x_2, pow_4, mean_3, add_6, rsqrt_3, mul_7, mul_8], Original ATen: [aten._unsafe_view, aten.add, aten.pow, aten.mean, aten.rsqrt, aten.mul]
# Source node to ATen node mapping:
#   add_6 => add_7
#   linear_10 => view_29
#   linear_3 => view_11
#   linear_6 => view_17
#   mean_3 => mean_3
#   mul_7 => mul_7
#   mul_8 => mul_8
#   pow_4 => pow_4
#   rsqrt_3 => rsqrt_3
#   x => add_1
#   x_1 => add_4
#   x_2 => add_6
# Graph fragment:
#   %arg1_1 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0" = PlaceHolder[target=arg1_1]
#   %mm_3 : Tensor "bf16[512, 1024][1024, 1]cuda:0" = PlaceHolder[target=mm_3]
#   %mm_6 : Tensor "bf16[512, 1024][1024, 1]cuda:0" = PlaceHolder[target=mm_6]
#   %mm_10 : Tensor "bf16[512, 1024][1024, 1]cuda:0" = PlaceHolder[target=mm_10]
#   %arg15_1 : Tensor "bf16[1024][1]cuda:0" = PlaceHolder[target=arg15_1]
#   %buf28 : Tensor "f32[2, 256, 1][256, 1, 512]cuda:0" = PlaceHolder[target=buf28]
#   %view_11 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_3, [2, 256, 1024]), kwargs = {})
#   %add_1 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg1_1, %view_11), kwargs = {})
#   %view_17 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_6, [2, 256, 1024]), kwargs = {})
#   %add_4 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%add_1, %view_17), kwargs = {})
#   %view_29 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_10, [2, 256, 1024]), kwargs = {})
#   %add_6 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%add_4, %view_29), kwargs = {})
#   %pow_4 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.pow.Tensor_Scalar](args = (%add_6, 2), kwargs = {})
#   %mean_3 : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mean.dim](args = (%pow_4, [-1], True), kwargs = {})
#   %add_7 : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mean_3, 1e-06), kwargs = {})
#   %rsqrt_3 : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.rsqrt.default](args = (%add_7,), kwargs = {})
#   %mul_7 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%add_6, %rsqrt_3), kwargs = {})
#   %mul_8 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%arg15_1, %mul_7), kwargs = {})
#   return %buf28,%mul_8
triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_4 = async_compile.triton('triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_4', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 512, 'r0_': 1024},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'in_ptr1': '*bf16', 'in_ptr2': '*bf16', 'in_ptr3': '*bf16', 'in_ptr4': '*bf16', 'out_ptr1': '*bf16', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'kernel_name': 'triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_4', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 5, 'num_store': 1, 'num_reduction': 1, 'autotune_hints': set(), 'tiling_scores': {'x': 0, 'r0_': 6293504}, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'incremental_autotune': False, 'max_autotune': True, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'batch_invariant': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': True, 'dynamic_disable_pipelining': True, 'are_deterministic_algorithms_enabled': False, 'coordinate_descent_tuning': True, 'coordinate_descent_search_radius': 1, 'coordinate_descent_check_all_directions': False}
)
@triton.jit
def triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_4(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, out_ptr1, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 512
    r0_numel = 1024
    R0_BLOCK: tl.constexpr = 1024
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 1024*x0), xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
    tmp1 = tl.load(in_ptr1 + (r0_1 + 1024*x0), xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
    tmp3 = tl.load(in_ptr2 + (r0_1 + 1024*x0), xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
    tmp5 = tl.load(in_ptr3 + (r0_1 + 1024*x0), xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
    tmp13 = tl.load(in_ptr4 + (r0_1), None, eviction_policy='evict_last').to(tl.float32)
    tmp2 = tmp0 + tmp1
    tmp4 = tmp2 + tmp3
    tmp6 = tmp4 + tmp5
    tmp7 = tmp6 * tmp6
    tmp8 = tmp7.to(tl.float32)
    tmp9 = tl.broadcast_to(tmp8, [XBLOCK, R0_BLOCK])
    tmp11 = tl.where(xmask, tmp9, 0)
    tmp12 = tl.sum(tmp11, 1)[:, None].to(tl.float32)
    tmp14 = tl.full([1, 1], 1024.0, tl.float32)
    tmp15 = (tmp12 / tmp14)
    tmp16 = tmp15.to(tl.float32)
    tmp17 = tl.full([1, 1], 1e-06, tl.float32)
    tmp18 = tmp16 + tmp17
    tmp19 = libdevice.rsqrt(tmp18)
    tmp20 = tmp6 * tmp19
    tmp21 = tmp13 * tmp20
    tl.store(out_ptr1 + (r0_1 + 1024*x0), tmp21, xmask)
''', device_str='cuda')


# kernel path: /tmp/ks/llama-prov/modes/max-autotune_ATEN-TRITON-NVGEMM/.inductor-cache/q2/cq2yneq7lnyz37rehwvvi4sujwij46r7jxslkvvqr6lxxiiq7ekz.py
# Topologically Sorted Source Nodes: [linear_11, silu_1, linear_12, mul_9], Original ATen: [aten._unsafe_view, aten.silu, aten.view, aten.t, aten.mm, aten.mul]
# Source node to ATen node mapping:
#   linear_11 => view_31
#   linear_12 => mm_12, permute_20, view_32, view_33
#   mul_9 => mul_9
#   silu_1 => add_8, convert_element_type_26, convert_element_type_27, div_1, exp_1, neg_1
# Graph fragment:
#   %mul_8 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0" = PlaceHolder[target=mul_8]
#   %arg17_1 : Tensor "bf16[2816, 1024][1024, 1]cuda:0" = PlaceHolder[target=arg17_1]
#   %mm_11 : Tensor "bf16[512, 2816][2816, 1]cuda:0" = PlaceHolder[target=mm_11]
#   %mm_12 : Tensor "bf16[512, 2816][2816, 1]cuda:0" = PlaceHolder[target=mm_12]
#   %view_31 : Tensor "bf16[2, 256, 2816][720896, 2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_11, [2, 256, 2816]), kwargs = {})
#   %convert_element_type_26 : Tensor "f32[2, 256, 2816][720896, 2816, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_31, torch.float32), kwargs = {})
#   %neg_1 : Tensor "f32[2, 256, 2816][720896, 2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.neg.default](args = (%convert_element_type_26,), kwargs = {})
#   %exp_1 : Tensor "f32[2, 256, 2816][720896, 2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.exp.default](args = (%neg_1,), kwargs = {})
#   %add_8 : Tensor "f32[2, 256, 2816][720896, 2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%exp_1, 1), kwargs = {})
#   %div_1 : Tensor "f32[2, 256, 2816][720896, 2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.div.Tensor](args = (%convert_element_type_26, %add_8), kwargs = {})
#   %convert_element_type_27 : Tensor "bf16[2, 256, 2816][720896, 2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%div_1, torch.bfloat16), kwargs = {})
#   %view_32 : Tensor "bf16[512, 1024][1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mul_8, [512, 1024]), kwargs = {})
#   %permute_20 : Tensor "bf16[1024, 2816][1, 1024]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.permute.default](args = (%arg17_1, [1, 0]), kwargs = {})
#   %mm_12 : Tensor "bf16[512, 2816][2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mm.default](args = (%view_32, %permute_20), kwargs = {})
#   %view_33 : Tensor "bf16[2, 256, 2816][720896, 2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_12, [2, 256, 2816]), kwargs = {})
#   %mul_9 : Tensor "bf16[2, 256, 2816][720896, 2816, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_27, %view_33), kwargs = {})
#   return %mm_12,%mul_9
triton_tem_fused__unsafe_view_mm_mul_silu_t_view_5 = async_compile.triton('triton_tem_fused__unsafe_view_mm_mul_silu_t_view_5', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties

@triton_heuristics.template(

num_stages=4,
num_warps=8,
triton_meta={'signature': {'arg_A': '*bf16', 'arg_B': '*bf16', 'in_ptr2': '*bf16', 'out_ptr1': '*bf16'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]]}]},
inductor_meta={'kernel_name': 'triton_tem_fused__unsafe_view_mm_mul_silu_t_view_5', 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'incremental_autotune': False, 'max_autotune': True, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'batch_invariant': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': True, 'dynamic_disable_pipelining': True, 'are_deterministic_algorithms_enabled': False, 'coordinate_descent_tuning': True, 'coordinate_descent_search_radius': 1, 'coordinate_descent_check_all_directions': False, 'grid_type': 'FixedGrid', 'fixed_grid': ['_grid_0', '_grid_1', '_grid_2'], 'extra_launcher_args': ['_grid_0', '_grid_1', '_grid_2'], 'config_args': {'EVEN_K': True, 'USE_FAST_ACCUM': False, 'ACC_TYPE': 'tl.float32', 'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 32, 'GROUP_M': 8, 'ALLOW_TF32': False}},

)
@triton.jit
def triton_tem_fused__unsafe_view_mm_mul_silu_t_view_5(arg_A, arg_B, in_ptr2, out_ptr1):
    EVEN_K : tl.constexpr = True
    USE_FAST_ACCUM : tl.constexpr = False
    ACC_TYPE : tl.constexpr = tl.float32
    BLOCK_M : tl.constexpr = 64
    BLOCK_N : tl.constexpr = 128
    BLOCK_K : tl.constexpr = 32
    GROUP_M : tl.constexpr = 8
    ALLOW_TF32 : tl.constexpr = False
    INDEX_DTYPE : tl.constexpr = tl.int32
    A = arg_A
    B = arg_B

    M = 512
    N = 2816
    K = 1024
    if M * N == 0:
        # early exit due to zero-size input(s)
        return
    stride_am = 1024
    stride_ak = 1
    stride_bk = 1
    stride_bn = 1024

    # based on triton.ops.matmul
    pid = tl.program_id(0).to(INDEX_DTYPE)
    grid_m = (M + BLOCK_M - 1) // BLOCK_M
    grid_n = (N + BLOCK_N - 1) // BLOCK_N

    # re-order program ID for better L2 performance
    width = GROUP_M * grid_n
    group_id = pid // width
    group_size = min(grid_m - group_id * GROUP_M, GROUP_M)
    pid_m = group_id * GROUP_M + (pid % group_size)
    pid_n = (pid % width) // (group_size)
    tl.assume(pid_m >= 0)
    tl.assume(pid_n >= 0)

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M).to(INDEX_DTYPE)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N).to(INDEX_DTYPE)
    if ((stride_am == 1 and stride_ak == M) or (stride_am == K and stride_ak == 1)) and (M >= BLOCK_M and K > 1):
        offs_a_m = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    else:
        offs_a_m = rm % M
    if ((stride_bk == 1 and stride_bn == K) or (stride_bk == N and stride_bn == 1)) and (N >= BLOCK_N and K > 1):
        offs_b_n = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    else:
        offs_b_n = rn % N
    offs_k = tl.arange(0, BLOCK_K).to(INDEX_DTYPE)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC_TYPE)

    for k_idx in range(0, tl.cdiv(K, BLOCK_K)):

        a_k_idx_vals = offs_k[None, :] + (k_idx * BLOCK_K)
        b_k_idx_vals = offs_k[:, None] + (k_idx * BLOCK_K)

        idx_m = offs_a_m[:, None]
        idx_n = a_k_idx_vals
        xindex = idx_n + 1024*idx_m
        a = tl.load(A + (xindex))

        idx_m = b_k_idx_vals
        idx_n = offs_b_n[None, :]
        xindex = idx_n + 2816*idx_m
        b = tl.load(B + ((tl.broadcast_to(idx_m + 1024*idx_n, [BLOCK_K, BLOCK_N])).broadcast_to(xindex.shape)))


        acc += tl.dot(a, b, allow_tf32=ALLOW_TF32, out_dtype=ACC_TYPE)


    # rematerialize rm and rn to save registers
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M).to(INDEX_DTYPE)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N).to(INDEX_DTYPE)
    idx_m = rm[:, None]
    idx_n = rn[None, :]
    mask = (idx_m < M) & (idx_n < N)

    # inductor generates a suffix
    xindex = idx_n + 2816*idx_m
    tmp0 = acc.to(tl.bfloat16)
    tmp1 = tmp0.to(tl.float32)
    tmp2 = tl.load(in_ptr2 + (tl.broadcast_to(xindex, [BLOCK_M, BLOCK_N])), mask).to(tl.float32)
    tmp3 = tmp2.to(tl.float32)
    tmp4 = -tmp3
    tmp5 = libdevice.exp(tmp4)
    tmp6 = tl.full([1], 1.0, tl.float32)
    tmp7 = tmp5 + tmp6
    tmp8 = (tmp3 / tmp7)
    tmp9 = tmp8.to(tl.float32)
    tmp10 = tmp9 * tmp1
    tl.store(out_ptr1 + (tl.broadcast_to(xindex, [BLOCK_M, BLOCK_N])), tmp10, mask)
''', device_str='cuda')


# kernel path: /tmp/ks/llama-prov/modes/max-autotune_ATEN-TRITON-NVGEMM/.inductor-cache/zs/czsgxvg7oqpznvujghwfese4czimoijpa5f3nwammjgktuo6wj3t.py
# Topologically Sorted Source Nodes: [linear_3, x, linear_6, x_1, linear_10, x_2, linear_13, x_3, pow_5, mean_4, add_8, rsqrt_4, mul_10, mul_11], Original ATen: [aten._unsafe_view, aten.add, aten.pow, aten.mean, aten.rsqrt, aten.mul]
# Source node to ATen node mapping:
#   add_8 => add_10
#   linear_10 => view_29
#   linear_13 => view_35
#   linear_3 => view_11
#   linear_6 => view_17
#   mean_4 => mean_4
#   mul_10 => mul_10
#   mul_11 => mul_11
#   pow_5 => pow_5
#   rsqrt_4 => rsqrt_4
#   x => add_1
#   x_1 => add_4
#   x_2 => add_6
#   x_3 => add_9
# Graph fragment:
#   %arg1_1 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0" = PlaceHolder[target=arg1_1]
#   %mm_3 : Tensor "bf16[512, 1024][1024, 1]cuda:0" = PlaceHolder[target=mm_3]
#   %mm_6 : Tensor "bf16[512, 1024][1024, 1]cuda:0" = PlaceHolder[target=mm_6]
#   %mm_10 : Tensor "bf16[512, 1024][1024, 1]cuda:0" = PlaceHolder[target=mm_10]
#   %mm_13 : Tensor "bf16[512, 1024][1024, 1]cuda:0" = PlaceHolder[target=mm_13]
#   %add_9 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0" = PlaceHolder[target=add_9]
#   %arg19_1 : Tensor "bf16[1024][1]cuda:0" = PlaceHolder[target=arg19_1]
#   %buf35 : Tensor "f32[2, 256, 1][256, 1, 512]cuda:0" = PlaceHolder[target=buf35]
#   %view_11 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_3, [2, 256, 1024]), kwargs = {})
#   %add_1 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg1_1, %view_11), kwargs = {})
#   %view_17 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_6, [2, 256, 1024]), kwargs = {})
#   %add_4 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%add_1, %view_17), kwargs = {})
#   %view_29 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_10, [2, 256, 1024]), kwargs = {})
#   %add_6 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%add_4, %view_29), kwargs = {})
#   %view_35 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_13, [2, 256, 1024]), kwargs = {})
#   %add_9 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.add.Tensor](args = (%add_6, %view_35), kwargs = {})
#   %pow_5 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.pow.Tensor_Scalar](args = (%add_9, 2), kwargs = {})
#   %mean_4 : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mean.dim](args = (%pow_5, [-1], True), kwargs = {})
#   %add_10 : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mean_4, 1e-06), kwargs = {})
#   %rsqrt_4 : Tensor "bf16[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.rsqrt.default](args = (%add_10,), kwargs = {})
#   %mul_10 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%add_9, %rsqrt_4), kwargs = {})
#   %mul_11 : Tensor "bf16[2, 256, 1024][262144, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%arg19_1, %mul_10), kwargs = {})
#   return %add_9,%buf35,%mul_11
triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_6 = async_compile.triton('triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_6', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 512, 'r0_': 1024},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*bf16', 'in_ptr0': '*bf16', 'in_ptr1': '*bf16', 'in_ptr2': '*bf16', 'in_ptr3': '*bf16', 'in_ptr4': '*bf16', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'kernel_name': 'triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_6', 'mutated_arg_names': ['in_out_ptr0'], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 6, 'num_store': 1, 'num_reduction': 1, 'autotune_hints': set(), 'tiling_scores': {'x': 0, 'r0_': 7342080}, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'incremental_autotune': False, 'max_autotune': True, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'batch_invariant': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': True, 'dynamic_disable_pipelining': True, 'are_deterministic_algorithms_enabled': False, 'coordinate_descent_tuning': True, 'coordinate_descent_search_radius': 1, 'coordinate_descent_check_all_directions': False}
)
@triton.jit
def triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_6(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 512
    r0_numel = 1024
    R0_BLOCK: tl.constexpr = 1024
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 1024*x0), xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
    tmp1 = tl.load(in_out_ptr0 + (r0_1 + 1024*x0), xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
    tmp3 = tl.load(in_ptr1 + (r0_1 + 1024*x0), xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
    tmp5 = tl.load(in_ptr2 + (r0_1 + 1024*x0), xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
    tmp7 = tl.load(in_ptr3 + (r0_1 + 1024*x0), xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
    tmp15 = tl.load(in_ptr4 + (r0_1), None, eviction_policy='evict_last').to(tl.float32)
    tmp2 = tmp0 + tmp1
    tmp4 = tmp2 + tmp3
    tmp6 = tmp4 + tmp5
    tmp8 = tmp6 + tmp7
    tmp9 = tmp8 * tmp8
    tmp10 = tmp9.to(tl.float32)
    tmp11 = tl.broadcast_to(tmp10, [XBLOCK, R0_BLOCK])
    tmp13 = tl.where(xmask, tmp11, 0)
    tmp14 = tl.sum(tmp13, 1)[:, None].to(tl.float32)
    tmp16 = tl.full([1, 1], 1024.0, tl.float32)
    tmp17 = (tmp14 / tmp16)
    tmp18 = tmp17.to(tl.float32)
    tmp19 = tl.full([1, 1], 1e-06, tl.float32)
    tmp20 = tmp18 + tmp19
    tmp21 = libdevice.rsqrt(tmp20)
    tmp22 = tmp8 * tmp21
    tmp23 = tmp15 * tmp22
    tl.store(in_out_ptr0 + (r0_1 + 1024*x0), tmp23, xmask)
''', device_str='cuda')


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
        arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, arg6_1, arg7_1, arg8_1, arg9_1, arg10_1, arg11_1, arg12_1, arg13_1, arg14_1, arg15_1, arg16_1, arg17_1, arg18_1, arg19_1 = args
        args.clear()
        assert_size_stride_grouped((arg1_1, arg0_1), ((2, 256, 1024), (1024, )), ((262144, 1024, 1), (1, )), 'input')
        with torch.cuda._DeviceGuard(0):
            torch.cuda.set_device(0)
            arg1_1 = copy_if_misaligned(arg1_1)
            buf1 = empty_strided_cuda((2, 256, 1024), (262144, 1024, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [pow_1, mean, add, rsqrt, mul, mul_1], Original ATen: [aten.pow, aten.mean, aten.add, aten.rsqrt, aten.mul]
            # [Provenance debug handles] triton_per_fused_add_mean_mul_pow_rsqrt_0:1
            raw_stream0 = get_raw_stream(0)
            triton_per_fused_add_mean_mul_pow_rsqrt_0.run(arg1_1, arg0_1, buf1, 512, 1024, stream=raw_stream0)
            del arg0_1
            assert_size_stride(arg2_1, (1024, 1024), (1024, 1), 'input')
            buf2 = empty_strided_cuda((512, 1024), (1024, 1), torch.bfloat16)
            # [Provenance debug handles] nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869:2
            raw_stream0 = get_raw_stream(0)
            nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869.run(reinterpret_tensor(buf1, (512, 1024), (1024, 1), 0), reinterpret_tensor(arg2_1, (1024, 1024), (1, 1024), 0), buf2, stream=raw_stream0)
            del arg2_1
            assert_size_stride(arg3_1, (1024, 1024), (1024, 1), 'input')
            buf3 = empty_strided_cuda((512, 1024), (1024, 1), torch.bfloat16)
            # [Provenance debug handles] nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869:3
            raw_stream0 = get_raw_stream(0)
            nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869.run(reinterpret_tensor(buf1, (512, 1024), (1024, 1), 0), reinterpret_tensor(arg3_1, (1024, 1024), (1, 1024), 0), buf3, stream=raw_stream0)
            del arg3_1
            assert_size_stride(arg4_1, (1024, 1024), (1024, 1), 'input')
            buf4 = empty_strided_cuda((512, 1024), (1024, 1), torch.bfloat16)
            # [Provenance debug handles] nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869:4
            raw_stream0 = get_raw_stream(0)
            nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869.run(reinterpret_tensor(buf1, (512, 1024), (1024, 1), 0), reinterpret_tensor(arg4_1, (1024, 1024), (1, 1024), 0), buf4, stream=raw_stream0)
            del arg4_1
            del buf1
            # Topologically Sorted Source Nodes: [linear, view, q, linear_1, view_1, k, linear_2, view_2, v, att], Original ATen: [aten._unsafe_view, aten.view, aten.transpose, aten._scaled_dot_product_cudnn_attention]
            # [Provenance debug handles] torch.ops.aten._scaled_dot_product_cudnn_attention.default:5
            buf5 = torch.ops.aten._scaled_dot_product_cudnn_attention.default(reinterpret_tensor(buf2, (2, 8, 256, 128), (262144, 128, 1024, 1), 0), reinterpret_tensor(buf3, (2, 8, 256, 128), (262144, 128, 1024, 1), 0), reinterpret_tensor(buf4, (2, 8, 256, 128), (262144, 128, 1024, 1), 0), None, False, 0.0, True)
            buf6 = buf5[0]
            assert_tensor_metadata(buf6, (2, 8, 256, 128), (262144, 128, 1024, 1), torch.bfloat16, 'torch.ops.aten._scaled_dot_product_cudnn_attention.default')
            assert_alignment(buf6, 16, 'torch.ops.aten._scaled_dot_product_cudnn_attention.default')
            del buf5
            assert_size_stride(arg5_1, (1024, 1024), (1024, 1), 'input')
            buf10 = buf4; del buf4  # reuse
            # [Provenance debug handles] nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869:6
            raw_stream0 = get_raw_stream(0)
            nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869.run(reinterpret_tensor(buf6, (512, 1024), (1024, 1), 0), reinterpret_tensor(arg5_1, (1024, 1024), (1, 1024), 0), buf10, stream=raw_stream0)
            del arg5_1
            assert_size_stride(arg6_1, (1024, ), (1, ), 'input')
            buf12 = reinterpret_tensor(buf6, (2, 256, 1024), (262144, 1024, 1), 0); del buf6  # reuse
            # Topologically Sorted Source Nodes: [linear_3, x, pow_2, mean_1, add_2, rsqrt_1, mul_2, mul_3], Original ATen: [aten._unsafe_view, aten.add, aten.pow, aten.mean, aten.rsqrt, aten.mul]
            # [Provenance debug handles] triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_1:7
            raw_stream0 = get_raw_stream(0)
            triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_1.run(arg1_1, buf10, arg6_1, buf12, 512, 1024, stream=raw_stream0)
            del arg6_1
            assert_size_stride(arg8_1, (2816, 1024), (1024, 1), 'input')
            buf14 = empty_strided_cuda((512, 2816), (2816, 1), torch.bfloat16)
            # [Provenance debug handles] nv_universal_gemm_fused_mm_t_view_bff399d8:8
            raw_stream0 = get_raw_stream(0)
            nv_universal_gemm_fused_mm_t_view_bff399d8.run(reinterpret_tensor(buf12, (512, 1024), (1024, 1), 0), reinterpret_tensor(arg8_1, (1024, 2816), (1, 1024), 0), buf14, stream=raw_stream0)
            del arg8_1
            assert_size_stride(arg7_1, (2816, 1024), (1024, 1), 'input')
            buf15 = empty_strided_cuda((2, 256, 2816), (720896, 2816, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [linear_3, x, pow_2, mean_1, add_2, rsqrt_1, mul_2, mul_3, linear_4, silu, linear_5, mul_4], Original ATen: [aten._unsafe_view, aten.add, aten.pow, aten.mean, aten.rsqrt, aten.mul, aten.view, aten.t, aten.mm, aten.silu]
            # [Provenance debug handles] triton_tem_fused__unsafe_view_add_mean_mm_mul_pow_rsqrt_silu_t_view_2:9
            raw_stream0 = get_raw_stream(0)
            triton_tem_fused__unsafe_view_add_mean_mm_mul_pow_rsqrt_silu_t_view_2.run(buf12, arg7_1, buf14, buf15, 176, 1, 1, stream=raw_stream0)
            del arg7_1
            assert_size_stride(arg9_1, (1024, 2816), (2816, 1), 'input')
            buf16 = reinterpret_tensor(buf12, (512, 1024), (1024, 1), 0); del buf12  # reuse
            # [Provenance debug handles] nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869:10
            raw_stream0 = get_raw_stream(0)
            nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869.run(reinterpret_tensor(buf15, (512, 2816), (2816, 1), 0), reinterpret_tensor(arg9_1, (2816, 1024), (1, 2816), 0), buf16, stream=raw_stream0)
            del arg9_1
            assert_size_stride(arg10_1, (1024, ), (1, ), 'input')
            buf18 = reinterpret_tensor(buf3, (2, 256, 1024), (262144, 1024, 1), 0); del buf3  # reuse
            # Topologically Sorted Source Nodes: [linear_3, x, linear_6, x_1, pow_3, mean_2, add_4, rsqrt_2, mul_5, mul_6], Original ATen: [aten._unsafe_view, aten.add, aten.pow, aten.mean, aten.rsqrt, aten.mul]
            # [Provenance debug handles] triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_3:11
            raw_stream0 = get_raw_stream(0)
            triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_3.run(arg1_1, buf10, buf16, arg10_1, buf18, 512, 1024, stream=raw_stream0)
            del arg10_1
            assert_size_stride(arg11_1, (1024, 1024), (1024, 1), 'input')
            buf19 = buf2; del buf2  # reuse
            # [Provenance debug handles] nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869:12
            raw_stream0 = get_raw_stream(0)
            nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869.run(reinterpret_tensor(buf18, (512, 1024), (1024, 1), 0), reinterpret_tensor(arg11_1, (1024, 1024), (1, 1024), 0), buf19, stream=raw_stream0)
            del arg11_1
            assert_size_stride(arg12_1, (1024, 1024), (1024, 1), 'input')
            buf20 = empty_strided_cuda((512, 1024), (1024, 1), torch.bfloat16)
            # [Provenance debug handles] nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869:13
            raw_stream0 = get_raw_stream(0)
            nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869.run(reinterpret_tensor(buf18, (512, 1024), (1024, 1), 0), reinterpret_tensor(arg12_1, (1024, 1024), (1, 1024), 0), buf20, stream=raw_stream0)
            del arg12_1
            assert_size_stride(arg13_1, (1024, 1024), (1024, 1), 'input')
            buf21 = empty_strided_cuda((512, 1024), (1024, 1), torch.bfloat16)
            # [Provenance debug handles] nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869:14
            raw_stream0 = get_raw_stream(0)
            nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869.run(reinterpret_tensor(buf18, (512, 1024), (1024, 1), 0), reinterpret_tensor(arg13_1, (1024, 1024), (1, 1024), 0), buf21, stream=raw_stream0)
            del arg13_1
            del buf18
            # Topologically Sorted Source Nodes: [linear_7, view_3, q_1, linear_8, view_4, k_1, linear_9, view_5, v_1, att_1], Original ATen: [aten._unsafe_view, aten.view, aten.transpose, aten._scaled_dot_product_cudnn_attention]
            # [Provenance debug handles] torch.ops.aten._scaled_dot_product_cudnn_attention.default:15
            buf22 = torch.ops.aten._scaled_dot_product_cudnn_attention.default(reinterpret_tensor(buf19, (2, 8, 256, 128), (262144, 128, 1024, 1), 0), reinterpret_tensor(buf20, (2, 8, 256, 128), (262144, 128, 1024, 1), 0), reinterpret_tensor(buf21, (2, 8, 256, 128), (262144, 128, 1024, 1), 0), None, False, 0.0, True)
            del buf19
            del buf20
            buf23 = buf22[0]
            assert_tensor_metadata(buf23, (2, 8, 256, 128), (262144, 128, 1024, 1), torch.bfloat16, 'torch.ops.aten._scaled_dot_product_cudnn_attention.default')
            assert_alignment(buf23, 16, 'torch.ops.aten._scaled_dot_product_cudnn_attention.default')
            del buf22
            assert_size_stride(arg14_1, (1024, 1024), (1024, 1), 'input')
            buf27 = buf21; del buf21  # reuse
            # [Provenance debug handles] nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869:16
            raw_stream0 = get_raw_stream(0)
            nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869.run(reinterpret_tensor(buf23, (512, 1024), (1024, 1), 0), reinterpret_tensor(arg14_1, (1024, 1024), (1, 1024), 0), buf27, stream=raw_stream0)
            del arg14_1
            assert_size_stride(arg15_1, (1024, ), (1, ), 'input')
            buf29 = reinterpret_tensor(buf23, (2, 256, 1024), (262144, 1024, 1), 0); del buf23  # reuse
            # Topologically Sorted Source Nodes: [linear_3, x, linear_6, x_1, linear_10, x_2, pow_4, mean_3, add_6, rsqrt_3, mul_7, mul_8], Original ATen: [aten._unsafe_view, aten.add, aten.pow, aten.mean, aten.rsqrt, aten.mul]
            # [Provenance debug handles] triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_4:17
            raw_stream0 = get_raw_stream(0)
            triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_4.run(arg1_1, buf10, buf16, buf27, arg15_1, buf29, 512, 1024, stream=raw_stream0)
            del arg15_1
            assert_size_stride(arg16_1, (2816, 1024), (1024, 1), 'input')
            buf30 = reinterpret_tensor(buf15, (512, 2816), (2816, 1), 0); del buf15  # reuse
            # [Provenance debug handles] nv_universal_gemm_fused_mm_t_view_bff399d8:18
            raw_stream0 = get_raw_stream(0)
            nv_universal_gemm_fused_mm_t_view_bff399d8.run(reinterpret_tensor(buf29, (512, 1024), (1024, 1), 0), reinterpret_tensor(arg16_1, (1024, 2816), (1, 1024), 0), buf30, stream=raw_stream0)
            del arg16_1
            assert_size_stride(arg17_1, (2816, 1024), (1024, 1), 'input')
            buf32 = reinterpret_tensor(buf14, (2, 256, 2816), (720896, 2816, 1), 0); del buf14  # reuse
            # Topologically Sorted Source Nodes: [linear_11, silu_1, linear_12, mul_9], Original ATen: [aten._unsafe_view, aten.silu, aten.view, aten.t, aten.mm, aten.mul]
            # [Provenance debug handles] triton_tem_fused__unsafe_view_mm_mul_silu_t_view_5:19
            raw_stream0 = get_raw_stream(0)
            triton_tem_fused__unsafe_view_mm_mul_silu_t_view_5.run(buf29, arg17_1, buf30, buf32, 176, 1, 1, stream=raw_stream0)
            del arg17_1
            del buf30
            assert_size_stride(arg18_1, (1024, 2816), (2816, 1), 'input')
            buf33 = reinterpret_tensor(buf29, (512, 1024), (1024, 1), 0); del buf29  # reuse
            # [Provenance debug handles] nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869:20
            raw_stream0 = get_raw_stream(0)
            nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869.run(reinterpret_tensor(buf32, (512, 2816), (2816, 1), 0), reinterpret_tensor(arg18_1, (2816, 1024), (1, 2816), 0), buf33, stream=raw_stream0)
            del arg18_1
            del buf32
            assert_size_stride(arg19_1, (1024, ), (1, ), 'input')
            buf34 = reinterpret_tensor(buf10, (2, 256, 1024), (262144, 1024, 1), 0); del buf10  # reuse
            buf36 = buf34; del buf34  # reuse
            # Topologically Sorted Source Nodes: [linear_3, x, linear_6, x_1, linear_10, x_2, linear_13, x_3, pow_5, mean_4, add_8, rsqrt_4, mul_10, mul_11], Original ATen: [aten._unsafe_view, aten.add, aten.pow, aten.mean, aten.rsqrt, aten.mul]
            # [Provenance debug handles] triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_6:21
            raw_stream0 = get_raw_stream(0)
            triton_per_fused__unsafe_view_add_mean_mul_pow_rsqrt_6.run(buf36, arg1_1, buf16, buf27, buf33, arg19_1, 512, 1024, stream=raw_stream0)
            del arg19_1
            del arg1_1
            del buf16
            del buf27
            del buf33
        return (buf36, )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    arg0_1 = rand_strided((1024, ), (1, ), device='cuda:0', dtype=torch.bfloat16)
    arg1_1 = rand_strided((2, 256, 1024), (262144, 1024, 1), device='cuda:0', dtype=torch.bfloat16)
    arg2_1 = rand_strided((1024, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    arg3_1 = rand_strided((1024, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    arg4_1 = rand_strided((1024, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    arg5_1 = rand_strided((1024, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    arg6_1 = rand_strided((1024, ), (1, ), device='cuda:0', dtype=torch.bfloat16)
    arg7_1 = rand_strided((2816, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    arg8_1 = rand_strided((2816, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    arg9_1 = rand_strided((1024, 2816), (2816, 1), device='cuda:0', dtype=torch.bfloat16)
    arg10_1 = rand_strided((1024, ), (1, ), device='cuda:0', dtype=torch.bfloat16)
    arg11_1 = rand_strided((1024, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    arg12_1 = rand_strided((1024, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    arg13_1 = rand_strided((1024, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    arg14_1 = rand_strided((1024, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    arg15_1 = rand_strided((1024, ), (1, ), device='cuda:0', dtype=torch.bfloat16)
    arg16_1 = rand_strided((2816, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    arg17_1 = rand_strided((2816, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    arg18_1 = rand_strided((1024, 2816), (2816, 1), device='cuda:0', dtype=torch.bfloat16)
    arg19_1 = rand_strided((1024, ), (1, ), device='cuda:0', dtype=torch.bfloat16)
    return [arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, arg6_1, arg7_1, arg8_1, arg9_1, arg10_1, arg11_1, arg12_1, arg13_1, arg14_1, arg15_1, arg16_1, arg17_1, arg18_1, arg19_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat, device='cuda')


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
