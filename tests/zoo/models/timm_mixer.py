"""timm MLP-Mixer built with random weights (no download).

A patch-embedding conv, then blocks of token-mixing and channel-mixing MLPs (Linear + GELU + Linear) with
LayerNorms and residuals; token mixing runs its Linears on the transposed (channels, tokens) view.

    size = "tiny"  (CPU CI: 2 blocks, 64 wide, 32 px)   --set size=real  (mixer_b16_224)
"""

import timm
import torch
from timm.models.mlp_mixer import MlpMixer

size = "tiny"
batch_size = 2


def get_model():
    torch.manual_seed(0)
    if size == "tiny":
        return MlpMixer(num_classes=10, img_size=32, patch_size=8, num_blocks=2, embed_dim=64).eval()
    return timm.create_model("mixer_b16_224", pretrained=False).eval()


def get_inputs():
    g = torch.Generator().manual_seed(1)
    px = 32 if size == "tiny" else 224
    return [torch.randn(batch_size, 3, px, px, generator=g)]
