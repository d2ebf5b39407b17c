"""GEMMs hidden in a custom op: ``kernelscope_models::two_mm`` (torch.library) runs two ``aten::mm`` in its
implementation, as transformers' ``grouped_mm_fallback`` runs one per expert. Compiled, Inductor calls the op as an
extern call it cannot look into (``torch.ops.kernelscope_models.two_mm.default``): no call site of the output code
is a GEMM there, and only what the op dispatches shows the two GEMMs. Around it, two Linears (GEMM call sites of
their own) and a ReLU on the op's result."""

import torch


def _two_mm(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    return torch.mm(torch.mm(x, w1), w2)


def _two_mm_fake(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    return x.new_empty(x.shape[0], w2.shape[1])


if not hasattr(torch.ops.kernelscope_models, "two_mm"):  # (a second load of this file in one process)
    torch.library.custom_op("kernelscope_models::two_mm", _two_mm, mutates_args=())
    torch.library.register_fake("kernelscope_models::two_mm", _two_mm_fake)


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.fc_in = torch.nn.Linear(64, 64)
        self.w1 = torch.nn.Parameter(torch.randn(64, 128) / 8)
        self.w2 = torch.nn.Parameter(torch.randn(128, 64) / 11)
        self.fc_out = torch.nn.Linear(64, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.ops.kernelscope_models.two_mm(self.fc_in(x), self.w1, self.w2)
        return self.fc_out(torch.relu(h))


def get_model() -> torch.nn.Module:
    return Model().eval()


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(16, 64, generator=torch.Generator().manual_seed(1))]
