"""Hugging Face ViT (ViTModel) built from its config with random weights.

The patch embedding is a Conv2d with kernel = stride = patch size (a GEMM in disguise), then pre-norm encoder
layers (q/k/v Linears with bias into SDPA, output dense + residual, LayerNorm, MLP with GELU), and a pooler.

    size = "tiny"  (CPU CI: 32 px, 2 layers, 64 wide)   --set size=real  (vit-base/16 at 224 px)
"""

import torch
from transformers import ViTConfig, ViTModel

size = "tiny"
batch_size = 2

_PRESETS = {
    "tiny": dict(image_size=32, patch_size=8, num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
                 intermediate_size=256),
    "real": dict(image_size=224, patch_size=16, num_hidden_layers=12, hidden_size=768, num_attention_heads=12,
                 intermediate_size=3072),
}


def get_model():
    torch.manual_seed(0)
    cfg = ViTConfig(**_PRESETS[size], attn_implementation="sdpa")
    return ViTModel(cfg).eval()


def get_inputs():
    g = torch.Generator().manual_seed(1)
    px = _PRESETS[size]["image_size"]
    return {"pixel_values": torch.randn(batch_size, 3, px, px, generator=g)}
