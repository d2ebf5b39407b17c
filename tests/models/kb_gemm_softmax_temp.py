"""Linear -> softmax(x / T): the division by the temperature is pointwise and comes before the softmax's max and
sum; Inductor computes it inside the softmax's reduction kernel."""

import torch

batch_size = 128
in_features = 1024
out_features = 8192
temperature = 0.7


class Model(torch.nn.Module):
    def __init__(self, in_features, out_features, temperature):
        super().__init__()
        self.gemm = torch.nn.Linear(in_features, out_features)
        self.temperature = temperature

    def forward(self, x):
        return torch.softmax(self.gemm(x) / self.temperature, dim=-1)


def get_init_inputs():
    return [in_features, out_features, temperature]


def get_inputs():
    return [torch.randn(batch_size, in_features)]
