"""A ResNet basic block in eval mode (KernelBench convention), NCHW: conv3x3 - BN - ReLU - conv3x3 - BN, plus the
identity residual, then ReLU. Module names as in torchvision's ``BasicBlock`` (conv1, bn1, relu, conv2, bn2).

Shows convolutions as GEMM-class ops, eval BatchNorm (folded into the conv weights by Inductor's freezing on the
CPU) and a residual add + ReLU after the second conv.
"""

import torch

batch_size = 8 if torch.cuda.is_available() else 2
channels = 64 if torch.cuda.is_available() else 16
height = width = 56 if torch.cuda.is_available() else 16


class Model(torch.nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(channels)
        self.relu = torch.nn.ReLU(inplace=True)
        self.conv2 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(channels)
        # Non-trivial running statistics and affine parameters, as in a trained network (fixed seed).
        for bn in (self.bn1, self.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 1.5)
            torch.nn.init.uniform_(bn.weight, 0.5, 1.5)
            torch.nn.init.uniform_(bn.bias, -0.5, 0.5)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


def get_init_inputs():
    return [channels]


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]
