"""A model whose iterations differ: every other call takes another branch (GELU, then ReLU), as data-dependent
control flow does. Used to prove that verdicts say when iterations disagree (tests/data/cpu-torch2.14.1/alternating)."""

import torch

batch_size = 8
features = 64


class Model(torch.nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.fc = torch.nn.Linear(features, features)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        y = self.fc(x)
        return torch.nn.functional.gelu(y) if self.calls % 2 else torch.relu(y)


def get_init_inputs():
    return [features]


def get_inputs():
    return [torch.randn(batch_size, features)]
