"""One BERT encoder layer (KernelBench convention), module names as in Hugging Face's ``BertLayer``:
``attention.self.query/key/value`` (Linear with bias), SDPA, ``attention.output.dense`` + dropout (eval: identity)
+ residual + ``LayerNorm``, ``intermediate.dense`` + GELU, ``output.dense`` + dropout + residual + ``LayerNorm``.

Shows bias epilogues, GELU after a GEMM, and residual adds that end at a LayerNorm (the epilogue boundary).
"""

import torch

batch_size = 2
seq_len = 128 if torch.cuda.is_available() else 16
hidden_size = 768 if torch.cuda.is_available() else 64
intermediate_size = 3072 if torch.cuda.is_available() else 256
num_heads = 12 if torch.cuda.is_available() else 4


class SelfAttention(torch.nn.Module):
    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.heads = heads
        self.query = torch.nn.Linear(hidden, hidden)
        self.key = torch.nn.Linear(hidden, hidden)
        self.value = torch.nn.Linear(hidden, hidden)

    def forward(self, x):
        b, s, d = x.shape
        q = self.query(x).view(b, s, self.heads, d // self.heads).transpose(1, 2)
        k = self.key(x).view(b, s, self.heads, d // self.heads).transpose(1, 2)
        v = self.value(x).view(b, s, self.heads, d // self.heads).transpose(1, 2)
        att = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return att.transpose(1, 2).reshape(b, s, d)


class DenseResidualNorm(torch.nn.Module):
    """BertSelfOutput / BertOutput: LayerNorm(dropout(dense(h)) + residual)."""

    def __init__(self, d_in: int, hidden: int):
        super().__init__()
        self.dense = torch.nn.Linear(d_in, hidden)
        self.LayerNorm = torch.nn.LayerNorm(hidden, eps=1e-12)
        self.dropout = torch.nn.Dropout(0.1)

    def forward(self, h, residual):
        return self.LayerNorm(self.dropout(self.dense(h)) + residual)


class Attention(torch.nn.Module):
    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.self = SelfAttention(hidden, heads)
        self.output = DenseResidualNorm(hidden, hidden)

    def forward(self, x):
        return self.output(self.self(x), x)


class Intermediate(torch.nn.Module):
    def __init__(self, hidden: int, intermediate: int):
        super().__init__()
        self.dense = torch.nn.Linear(hidden, intermediate)

    def forward(self, x):
        return torch.nn.functional.gelu(self.dense(x))


class Model(torch.nn.Module):
    def __init__(self, hidden: int, intermediate: int, heads: int):
        super().__init__()
        self.attention = Attention(hidden, heads)
        self.intermediate = Intermediate(hidden, intermediate)
        self.output = DenseResidualNorm(intermediate, hidden)

    def forward(self, x):
        a = self.attention(x)
        return self.output(self.intermediate(a), a)


def get_init_inputs():
    return [hidden_size, intermediate_size, num_heads]


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden_size)]
