"""Hugging Face GPT-2 (GPT2LMHeadModel) built from its config with random weights: no download.

GPT-2's projections are ``Conv1D`` modules (``addmm`` with the weight stored (in, out)), its MLP uses
``gelu_new`` (tanh form), and the LM head is tied to the token embedding. Integer ``input_ids`` and an
``attention_mask`` go in as keyword inputs; the output is a ``CausalLMOutputWithCrossAttentions``.

    size = "tiny"  (CPU CI: 2 layers, 64 wide)   --set size=real  (gpt2-small: 12 layers, 768 wide)
"""

import torch
from transformers import GPT2Config, GPT2LMHeadModel

size = "tiny"
batch_size = 2
seq_len = 16

_PRESETS = {
    "tiny": dict(n_layer=2, n_embd=64, n_head=4, vocab_size=512, n_positions=128, bos_token_id=0, eos_token_id=0),
    "real": dict(n_layer=12, n_embd=768, n_head=12, vocab_size=50257, n_positions=1024),
}


def get_model():
    torch.manual_seed(0)
    cfg = GPT2Config(**_PRESETS[size], attn_implementation="sdpa")
    return GPT2LMHeadModel(cfg).eval()


def get_inputs():
    g = torch.Generator().manual_seed(1)
    vocab = _PRESETS[size]["vocab_size"]
    ids = torch.randint(0, vocab, (batch_size, seq_len), generator=g)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
