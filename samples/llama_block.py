"""Two Llama-style decoder layers (KernelBench convention): RMSNorm, q/k/v/o projections without bias, causal SDPA,
SwiGLU MLP (``down_proj(silu(gate_proj(x)) * up_proj(x))``), residuals; the layers sit in an ``nn.ModuleList``
``layers`` so module paths read ``layers.1.mlp.gate_proj`` as in Hugging Face's Llama (no rotary embedding).

Shows identical layers (the same kernels launched at several call sites) and one epilogue kernel that reads two
GEMM outputs (SwiGLU's ``silu(gate) * up``).
"""

import torch

batch_size = 2
seq_len = 256 if torch.cuda.is_available() else 16
hidden_size = 1024 if torch.cuda.is_available() else 64
intermediate_size = 2816 if torch.cuda.is_available() else 128
num_heads = 8 if torch.cuda.is_available() else 4
num_layers = 2


class RMSNorm(torch.nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class Attention(torch.nn.Module):
    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.heads = heads
        self.q_proj = torch.nn.Linear(hidden, hidden, bias=False)
        self.k_proj = torch.nn.Linear(hidden, hidden, bias=False)
        self.v_proj = torch.nn.Linear(hidden, hidden, bias=False)
        self.o_proj = torch.nn.Linear(hidden, hidden, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q = self.q_proj(x).view(b, s, self.heads, d // self.heads).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.heads, d // self.heads).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.heads, d // self.heads).transpose(1, 2)
        att = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(att.transpose(1, 2).reshape(b, s, d))


class MLP(torch.nn.Module):
    def __init__(self, hidden: int, intermediate: int):
        super().__init__()
        self.gate_proj = torch.nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = torch.nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = torch.nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x):
        return self.down_proj(torch.nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(torch.nn.Module):
    def __init__(self, hidden: int, intermediate: int, heads: int):
        super().__init__()
        self.input_layernorm = RMSNorm(hidden)
        self.self_attn = Attention(hidden, heads)
        self.post_attention_layernorm = RMSNorm(hidden)
        self.mlp = MLP(hidden, intermediate)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class Model(torch.nn.Module):
    def __init__(self, hidden: int, intermediate: int, heads: int, layers: int):
        super().__init__()
        self.layers = torch.nn.ModuleList(DecoderLayer(hidden, intermediate, heads) for _ in range(layers))
        self.norm = RMSNorm(hidden)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


def get_init_inputs():
    return [hidden_size, intermediate_size, num_heads, num_layers]


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden_size)]
