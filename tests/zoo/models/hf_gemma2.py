"""Hugging Face Gemma-2 (Gemma2ForCausalLM) built from its config with random weights: explicit attention with
soft-capping.

Attention in eager PyTorch (``attn_implementation="eager"``): ``q @ k^T`` and ``probs @ v`` are bmm's/matmuls of
the model's own code, the scores soft-capped (``tanh(s / cap) * cap``) and masked (every second layer a sliding
window) before the softmax. GQA with q/k/v/o without bias, rotary embeddings (``inv_freq @ position_ids``), RMSNorm
before and after attention and MLP, a GELU-gated MLP, and the LM head tied to the token embedding, its logits
soft-capped too.

    size = "tiny"  (CPU CI: 2 layers, 64 wide)   --set size=real  (gemma-2-2b-like: 4 layers, 2304 wide)
    --set layers=1  (the preset with that many decoder layers: the zoo suite's run)
"""

import torch
from transformers import Gemma2Config, Gemma2ForCausalLM

size = "tiny"
layers = 0  # 0: the preset's
batch_size = 1
seq_len = 16

_PRESETS = {
    "tiny": dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                 intermediate_size=128, vocab_size=512, max_position_embeddings=256, sliding_window=8,
                 query_pre_attn_scalar=16),
    "real": dict(num_hidden_layers=4, hidden_size=2304, num_attention_heads=8, num_key_value_heads=4,
                 head_dim=256, intermediate_size=9216, vocab_size=256000, max_position_embeddings=8192,
                 sliding_window=4096, query_pre_attn_scalar=256),
}


def get_model():
    torch.manual_seed(0)
    preset = {**_PRESETS[size], **({"num_hidden_layers": layers} if layers else {})}
    cfg = Gemma2Config(**preset, attn_logit_softcapping=50.0, final_logit_softcapping=30.0,
                       tie_word_embeddings=True, attn_implementation="eager")
    return Gemma2ForCausalLM(cfg).eval()


def get_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, _PRESETS[size]["vocab_size"], (batch_size, seq_len), generator=g)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
