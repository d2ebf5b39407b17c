"""One rank raises in its forward while the other waits in an all_reduce: a failed rank fails the mode."""

import torch
import torch.distributed as dist


class M(torch.nn.Module):
    def forward(self, x):
        if dist.get_rank() == 1:
            raise RuntimeError("rank one refuses")
        dist.all_reduce(x)
        return x * 2


def get_model():
    return M()


def get_inputs():
    return [torch.randn(4, 4)]
