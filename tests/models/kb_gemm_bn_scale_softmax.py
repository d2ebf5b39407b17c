"""KernelBench level 2 style: Linear -> BatchNorm1d -> scale -> softmax. kernelscope profiles in eval mode (its
model loader calls ``model.eval()``), so BatchNorm uses its running statistics: a per-channel affine op of the
GEMM's epilogue, like the scale; the softmax's max and sum end the epilogue."""

import torch

batch_size = 128
in_features = 1024
out_features = 8192


class Model(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = torch.nn.Linear(in_features, out_features)
        self.bn = torch.nn.BatchNorm1d(out_features)
        self.scale = torch.nn.Parameter(torch.full((1,), 1.5))

    def forward(self, x):
        return torch.softmax(self.scale * self.bn(self.gemm(x)), dim=1)


def get_init_inputs():
    return [in_features, out_features]


def get_inputs():
    return [torch.randn(batch_size, in_features)]
