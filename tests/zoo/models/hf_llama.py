"""Hugging Face Llama (LlamaForCausalLM) with grouped-query attention, built from its config with random weights.

RMSNorm, rotary embeddings (``inv_freq @ position_ids``: a K = 1 GEMM), q/k/v/o without bias (k/v narrower: GQA),
SwiGLU MLP ``down_proj(silu(gate_proj(x)) * up_proj(x))``, LM head. One prefill of ``seq_len`` tokens.

    size = "tiny"  (CPU CI: 2 layers, 64 wide)
    --set size=real  (4 layers, 2048 wide, 32 heads / 8 KV heads)
    --set size=1b    (~1.1B parameters: 16 layers, 2048 wide, intermediate 8192; benchmarks/profile_vs_hand.py's model)
    --set layers=8   (the preset with that many decoder layers: 1b at 8 layers fits the hand script and a
                      profile in one 10-minute GPU run)
"""

import torch
from transformers import LlamaConfig, LlamaForCausalLM

size = "tiny"
layers = 0  # 0: the preset's
batch_size = 1
seq_len = 16

_PRESETS = {
    "tiny": dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                 intermediate_size=128, vocab_size=512, max_position_embeddings=256),
    "real": dict(num_hidden_layers=4, hidden_size=2048, num_attention_heads=32, num_key_value_heads=8,
                 intermediate_size=8192, vocab_size=32000, max_position_embeddings=4096),
    "1b": dict(num_hidden_layers=16, hidden_size=2048, num_attention_heads=32, num_key_value_heads=8,
               intermediate_size=8192, vocab_size=32000, max_position_embeddings=4096),
}


def get_model():
    torch.manual_seed(0)
    preset = {**_PRESETS[size], **({"num_hidden_layers": layers} if layers else {})}
    cfg = LlamaConfig(**preset, attn_implementation="sdpa", tie_word_embeddings=False)
    return LlamaForCausalLM(cfg).eval()


def get_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, _PRESETS[size]["vocab_size"], (batch_size, seq_len), generator=g)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
