"""A DDP-wrapped MLP (a torchrun test model): data parallel, forward only.

DistributedDataParallel broadcasts rank 0's parameters when it wraps the model (a collective at build time);
each rank feeds its own batch (inputs seeded by rank). A forward under no_grad runs no collective after the
first call, so the profiled steps show each rank's compute only. Without a process group the model is not
wrapped.
"""

import torch
import torch.distributed as dist

batch_size = 8
features = 64


def get_model():
    model = torch.nn.Sequential(torch.nn.Linear(features, 2 * features), torch.nn.ReLU(),
                                torch.nn.Linear(2 * features, features))
    if dist.is_available() and dist.is_initialized():
        return torch.nn.parallel.DistributedDataParallel(model)
    return model


def get_inputs():
    rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else 0
    g = torch.Generator().manual_seed(1000 + rank)
    return [torch.randn(batch_size, features, generator=g)]
