"""A three-layer MLP with different activations after each GEMM: GELU (tanh), SiLU, ReLU, and a residual add.

Each Linear is a GEMM with a bias epilogue; which activations end up fused depends on the backend.
"""

import torch

batch_size = 64
hidden = 1024 if torch.cuda.is_available() else 128


class MLP(torch.nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.fc1 = torch.nn.Linear(hidden, 4 * hidden)
        self.fc2 = torch.nn.Linear(4 * hidden, hidden)
        self.fc3 = torch.nn.Linear(hidden, hidden)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.fc1(x), approximate="tanh")
        h = torch.nn.functional.silu(self.fc2(h))
        return torch.relu(self.fc3(h)) + x


def get_model():
    return MLP(hidden)


def get_inputs():
    return [torch.randn(batch_size, hidden)]
