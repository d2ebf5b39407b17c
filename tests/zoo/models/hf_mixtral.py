"""Hugging Face Mixtral (MixtralForCausalLM), a mixture-of-experts LM built from its config with random weights.

Each decoder layer's MLP is a sparse mixture of experts: a router Linear (``block_sparse_moe.gate``) scores the
experts, the top 2 of them run each token, their outputs weighted by the router's softmax. The experts' weights
are 3-d parameters (``experts.gate_up_proj``, ``experts.down_proj``), run by transformers' grouped GEMM:
``torch._grouped_mm`` (eager, and bf16 compiled), or its custom op ``transformers::grouped_mm_fallback`` (one
``mm`` per expert) where the grouped kernel cannot run. ``torch._grouped_mm`` has no float64 kernel, so the
numerics reference runs in float32. Attention as in Llama (GQA, rotary, SDPA), RMSNorm, LM head.

    size = "tiny"  (CPU CI: 2 layers, 64 wide, 4 experts, top 2)
    --set size=real  (4 layers, 2048 wide, 32 heads / 8 KV heads, 8 experts, top 2)
    --set layers=1   (the preset with that many decoder layers: the zoo suite's run)
"""

import torch
from transformers import MixtralConfig, MixtralForCausalLM

size = "tiny"
layers = 0  # 0: the preset's
batch_size = 1
seq_len = 16

_PRESETS = {
    "tiny": dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                 intermediate_size=128, num_local_experts=4, num_experts_per_tok=2, vocab_size=512,
                 max_position_embeddings=256),
    "real": dict(num_hidden_layers=4, hidden_size=2048, num_attention_heads=32, num_key_value_heads=8,
                 intermediate_size=5632, num_local_experts=8, num_experts_per_tok=2, vocab_size=32000,
                 max_position_embeddings=4096),
}


def get_model():
    torch.manual_seed(0)
    preset = {**_PRESETS[size], **({"num_hidden_layers": layers} if layers else {})}
    cfg = MixtralConfig(**preset, attn_implementation="sdpa", tie_word_embeddings=False)
    return MixtralForCausalLM(cfg).eval()


def get_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, _PRESETS[size]["vocab_size"], (batch_size, seq_len), generator=g)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
