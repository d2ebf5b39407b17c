"""A Triton template that absorbs a prologue op, for real: the same fp32 model as prologue_fused.py, with
Inductor's epilogue/prologue fusion benchmarking turned off (a documented Inductor setting users do set), so the
scheduler fuses instead of benchmarking the fused variant. Expect the scale (x * 0.5) inside the template's operand
load (prologue) and the ReLU in its epilogue."""

import torch
import torch._inductor.config as inductor_config

inductor_config.benchmark_epilogue_fusion = False

m = 2048 if torch.cuda.is_available() else 64
k = 2048 if torch.cuda.is_available() else 64


class Model(torch.nn.Module):
    def __init__(self, k: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(k, k) * 0.02)

    def forward(self, x):
        return torch.relu((x * 0.5) @ self.weight.t())


def get_init_inputs():
    return [k]


def get_inputs():
    return [torch.randn(m, k)]
