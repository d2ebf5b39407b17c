"""Hugging Face T5 encoder (T5EncoderModel) built from its config with random weights.

T5's layers have no biases: q/k/v/o Linears with a relative-position bias added to the attention scores, T5's
RMS-style LayerNorm, and a ReLU feed-forward ``wo(relu(wi(x)))``.

    size = "tiny"  (CPU CI: 2 layers, 64 wide)   --set size=real  (t5-base encoder: 12 layers, 768 wide)
"""

import torch
from transformers import T5Config, T5EncoderModel

size = "tiny"
batch_size = 2
seq_len = 16

_PRESETS = {
    "tiny": dict(num_layers=2, d_model=64, d_kv=16, num_heads=4, d_ff=128, vocab_size=512),
    "real": dict(num_layers=12, d_model=768, d_kv=64, num_heads=12, d_ff=3072, vocab_size=32128),
}


def get_model():
    torch.manual_seed(0)
    return T5EncoderModel(T5Config(**_PRESETS[size])).eval()


def get_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, _PRESETS[size]["vocab_size"], (batch_size, seq_len), generator=g)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
