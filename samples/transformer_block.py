"""A pre-norm transformer block (KernelBench convention): attention (SDPA) + MLP, with residuals.

Shows attention kernels next to the QKV/output/MLP GEMMs and their epilogues.
"""

import torch

batch_size = 4
seq_len = 256 if torch.cuda.is_available() else 32
d_model = 512 if torch.cuda.is_available() else 64
n_heads = 8


class Model(torch.nn.Module):
    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.norm1 = torch.nn.LayerNorm(d_model)
        self.qkv = torch.nn.Linear(d_model, 3 * d_model)
        self.proj = torch.nn.Linear(d_model, d_model)
        self.norm2 = torch.nn.LayerNorm(d_model)
        self.fc1 = torch.nn.Linear(d_model, 4 * d_model)
        self.fc2 = torch.nn.Linear(4 * d_model, d_model)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        att = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm2(x))))


def get_init_inputs():
    return [d_model, n_heads]


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]
