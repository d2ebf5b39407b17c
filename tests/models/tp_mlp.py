"""A tensor-parallel MLP written with torch.distributed directly (a torchrun test model).

fc1 is column-parallel (each rank holds hidden/world of its output features and bias), fc2 row-parallel (each
rank holds the matching hidden/world of its input features); the partial outputs meet in one all_reduce, then
fc2's bias is added once. Every rank builds the same full weights (fixed seed) and keeps its shard, so the output
equals the unsharded MLP's on every rank. Without a process group it is the plain MLP (world size 1).

    kernelscope profile tests/models/tp_mlp.py --nproc 2 --modes eager --device cpu
"""

import torch
import torch.distributed as dist

batch_size = 8
features = 64
hidden = 128


def _world() -> tuple[int, int]:
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


class TensorParallelMLP(torch.nn.Module):
    def __init__(self, features: int, hidden: int):
        super().__init__()
        rank, world = _world()
        if hidden % world:
            raise ValueError(f"hidden={hidden} does not split over {world} ranks")
        full1, full2 = torch.nn.Linear(features, hidden), torch.nn.Linear(hidden, features)
        shard = hidden // world
        cols = slice(rank * shard, (rank + 1) * shard)
        self.fc1 = torch.nn.Linear(features, shard)  # column-parallel
        self.fc2 = torch.nn.Linear(shard, features, bias=False)  # row-parallel: bias after the reduction
        with torch.no_grad():
            self.fc1.weight.copy_(full1.weight[cols])
            self.fc1.bias.copy_(full1.bias[cols])
            self.fc2.weight.copy_(full2.weight[:, cols])
        self.fc2_bias = torch.nn.Parameter(full2.bias.detach().clone())
        self.world = world

    def forward(self, x):
        y = self.fc2(torch.nn.functional.gelu(self.fc1(x)))
        if self.world > 1:
            dist.all_reduce(y)
        return y + self.fc2_bias


def get_model():
    return TensorParallelMLP(features, hidden)


def get_inputs():
    return [torch.randn(batch_size, features)]
