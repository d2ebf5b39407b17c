"""Hugging Face BART (BartForConditionalGeneration), an encoder-decoder built from its config with random weights.

Encoder and decoder layers with biased q/k/v/out projections (self-attention; the decoder's cross-attention reads
the encoder's output), GELU feed-forward, post-LayerNorm, learned positions. The LM head has no weight of its own:
it is tied to the shared token embedding (``tie_word_embeddings``), so the same weight is ``model.shared``,
``model.encoder.embed_tokens``, ``model.decoder.embed_tokens`` and ``lm_head``; its GEMM is ``lm_head``'s. One
forward of ``seq_len`` source and target tokens.

    size = "tiny"  (CPU CI: 2 + 2 layers, 64 wide)   --set size=real  (bart-base: 6 + 6 layers, 768 wide)
    --set layers=1  (the preset with that many encoder and decoder layers: the zoo suite's run)
"""

import torch
from transformers import BartConfig, BartForConditionalGeneration

size = "tiny"
layers = 0  # 0: the preset's
batch_size = 2
seq_len = 16

_PRESETS = {
    "tiny": dict(encoder_layers=2, decoder_layers=2, d_model=64, encoder_attention_heads=4,
                 decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, vocab_size=512,
                 max_position_embeddings=64),
    "real": dict(encoder_layers=6, decoder_layers=6, d_model=768, encoder_attention_heads=12,
                 decoder_attention_heads=12, encoder_ffn_dim=3072, decoder_ffn_dim=3072, vocab_size=50265,
                 max_position_embeddings=1024),
}


def get_model():
    torch.manual_seed(0)
    preset = {**_PRESETS[size], **({"encoder_layers": layers, "decoder_layers": layers} if layers else {})}
    cfg = BartConfig(**preset, tie_word_embeddings=True, attn_implementation="sdpa")
    return BartForConditionalGeneration(cfg).eval()


def get_inputs():
    g = torch.Generator().manual_seed(1)
    vocab = _PRESETS[size]["vocab_size"]
    ids = torch.randint(3, vocab, (batch_size, seq_len), generator=g)
    decoder_ids = torch.randint(3, vocab, (batch_size, seq_len), generator=g)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "decoder_input_ids": decoder_ids}
