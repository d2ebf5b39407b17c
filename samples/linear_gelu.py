"""The motivating case: Linear(4096, 4096) + GELU in fp16, batch 16 on CUDA.

Does the bias add and the GELU run inside the GEMM kernel (epilogue fusion), or as separate kernels?
On the CPU the sizes shrink so a profile finishes in about a minute on 2 cores.

    kernelscope profile samples/linear_gelu.py                 # CUDA when available
    kernelscope profile samples/linear_gelu.py --device cpu
"""

import torch

_cuda = torch.cuda.is_available()
batch_size = 16
features = 4096 if _cuda else 256


class LinearGelu(torch.nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.linear = torch.nn.Linear(features, features)
        self.act = torch.nn.GELU()

    def forward(self, x):
        return self.act(self.linear(x))


# fp16 on the GPU (the case users upgrade for); --dtype overrides.
dtype = torch.float16 if _cuda else torch.float32


def get_model():
    return LinearGelu(features).to(dtype)


def get_inputs():
    return [torch.randn(batch_size, features, dtype=dtype)]
