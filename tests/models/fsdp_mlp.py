"""An FSDP2-sharded MLP (a torchrun test model): ``fully_shard`` on each Linear and on the root, on the process
group kernelscope initialised before ``get_model()``.

Each call is one training step (forward, loss, backward; no optimizer step, so every call computes the same):
FSDP2 all-gathers each layer's parameter shards before its forward and again before its backward (it reshards
after the forward), and reduce-scatters the gradients after the backward. With ``--set train=False`` a call is
the forward only (the all-gathers only). Each rank feeds its own batch (data parallel; inputs seeded by rank).
Without a process group the model is not sharded.

    kernelscope profile tests/models/fsdp_mlp.py --nproc 2 --modes eager --device cpu
"""

import torch
import torch.distributed as dist

batch_size = 8
features = 64
hidden = 128
train = True


def _distributed() -> bool:
    return dist.is_available() and dist.is_initialized()


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(features, hidden)
        self.fc2 = torch.nn.Linear(hidden, features)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)))


class Step(torch.nn.Module):
    """One call: a training step of the wrapped model (its loss), or its forward with ``train = False``."""

    def __init__(self, model: torch.nn.Module, train: bool):
        super().__init__()
        self.model, self.train_step = model, train

    def forward(self, x):
        if not self.train_step:
            return self.model(x)
        for p in self.model.parameters():
            p.grad = None
        # kernelscope calls the model under no_grad; a training step turns autograd back on for itself.
        with torch.enable_grad():
            loss = self.model(x).square().mean()
            loss.backward()
        return loss.detach()


def get_model():
    model = MLP()
    if _distributed():
        from torch.distributed.fsdp import fully_shard

        fully_shard(model.fc1)
        fully_shard(model.fc2)
        fully_shard(model)
    return Step(model, train)


def get_inputs():
    rank = dist.get_rank() if _distributed() else 0
    g = torch.Generator().manual_seed(1000 + rank)
    return [torch.randn(batch_size, features, generator=g)]
