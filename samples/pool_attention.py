"""Convolutions into pooling, then attention (KernelBench convention), NCHW: ``conv1`` (bias) - ReLU -
max_pool2d(2); ``conv2`` (bias) - avg_pool2d(2); the 4x4 map flattened to 16 tokens; ``proj`` (Linear + bias) -
GELU; ``attn.q/k/v`` (Linear + bias) into SDPA and into the same attention written out, ``bmm(softmax(bmm(q, k^T) *
scale), v)``, the two summed.

Shows where an epilogue ends: pooling reads a window of several conv outputs (it is no epilogue op, so conv1's
chain is bias + relu and conv2's bias only); the softmax after ``q @ k^T`` reduces (the scale before it is that
batched GEMM's epilogue), and so does SDPA; q/k/v end at SDPA and the batched matmuls.
"""

import torch

batch_size = 2
in_channels = 3
channels = 64 if torch.cuda.is_available() else 16
size = 32 if torch.cuda.is_available() else 16  # input height = width
hidden_size = 256 if torch.cuda.is_available() else 32
num_heads = 4 if torch.cuda.is_available() else 2


class Attention(torch.nn.Module):
    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.heads = heads
        self.q = torch.nn.Linear(hidden, hidden)
        self.k = torch.nn.Linear(hidden, hidden)
        self.v = torch.nn.Linear(hidden, hidden)

    def forward(self, x):
        b, s, d = x.shape
        h, dh = self.heads, d // self.heads
        q = self.q(x).view(b, s, h, dh).transpose(1, 2)
        k = self.k(x).view(b, s, h, dh).transpose(1, 2)
        v = self.v(x).view(b, s, h, dh).transpose(1, 2)
        fused = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        # the same attention written out with bmm (Inductor rewrites a 4-D matmul-softmax-matmul into SDPA)
        q, k, v = (t.reshape(b * h, s, dh) for t in (q, k, v))
        scores = torch.bmm(q, k.transpose(1, 2)) * dh**-0.5
        explicit = torch.bmm(torch.softmax(scores, dim=-1), v).view(b, h, s, dh)
        return (fused + explicit).transpose(1, 2).reshape(b, s, d)


class Model(torch.nn.Module):
    def __init__(self, in_ch: int, ch: int, hidden: int, heads: int):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(in_ch, ch // 2, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(ch // 2, ch, 3, padding=1)
        self.proj = torch.nn.Linear(ch, hidden)
        self.attn = Attention(hidden, heads)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = torch.nn.functional.avg_pool2d(self.conv2(x), 2)
        tokens = x.flatten(2).transpose(1, 2)  # (batch, pixels, channels)
        return self.attn(torch.nn.functional.gelu(self.proj(tokens)))


def get_init_inputs():
    return [in_channels, channels, hidden_size, num_heads]


def get_inputs():
    return [torch.randn(batch_size, in_channels, size, size)]
