"""Hugging Face BERT (BertModel) built from its config with random weights, with a padded attention mask.

Each encoder layer: query/key/value Linears (bias) into SDPA, ``attention.output.dense`` + residual + LayerNorm,
``intermediate.dense`` + GELU (exact), ``output.dense`` + residual + LayerNorm; the pooler is Linear + tanh.
The last quarter of the second sequence is padding (mask 0), as a batch of sentences of unequal length has.

    size = "tiny"  (CPU CI: 2 layers, 64 wide)   --set size=real  (bert-base: 12 layers, 768 wide)
"""

import torch
from transformers import BertConfig, BertModel

size = "tiny"
batch_size = 2
seq_len = 16

_PRESETS = {
    "tiny": dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=256,
                 vocab_size=512, max_position_embeddings=128),
    "real": dict(num_hidden_layers=12, hidden_size=768, num_attention_heads=12, intermediate_size=3072,
                 vocab_size=30522, max_position_embeddings=512),
}


def get_model():
    torch.manual_seed(0)
    cfg = BertConfig(**_PRESETS[size], attn_implementation="sdpa")
    return BertModel(cfg).eval()


def get_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, _PRESETS[size]["vocab_size"], (batch_size, seq_len), generator=g)
    mask = torch.ones_like(ids)
    mask[-1, seq_len - seq_len // 4:] = 0
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": torch.zeros_like(ids)}
