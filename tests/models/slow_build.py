"""A tiny model whose construction is slow (get_model() sleeps) and counted: every get_model() call and every
float64 forward (the numerics reference) appends a line to the file named by ``log`` (``--set log=PATH``), so a
test counts how often a run built the model and computed the reference (tests/test_model_cache.py)."""

import time

import torch

log = ""
sleep_s = 3.0


def _count(what):
    if log:
        with open(log, "a") as f:
            f.write(what + "\n")


class SlowBuilt(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)
        self.register_buffer("scale", torch.rand(16), persistent=False)  # not in state_dict()
        self.offset = torch.randn(16)  # a plain tensor attribute: not a buffer either

    def forward(self, x):
        if x.dtype == torch.float64:
            _count("reference")
        return torch.nn.functional.gelu(self.fc(x)) * self.scale + self.offset


def get_model():
    _count("build")
    time.sleep(sleep_s)
    return SlowBuilt()


def get_inputs():
    return [torch.randn(8, 16)]  # drawn after the weights: the same only from the same generator state
