"""timm ConvNeXt built with random weights (no download).

Each block: 7x7 depthwise conv, LayerNorm (channels last), Linear 4x expansion + GELU, Linear back, layer scale
(``gamma``) and residual; downsampling convs between stages; global average pool, LayerNorm and the head Linear.

    size = "tiny"  (CPU CI: one block a stage, 16-128 channels, 32 px)   --set size=real  (convnext_tiny, 224 px)
"""

import timm
import torch
from timm.models.convnext import ConvNeXt

size = "tiny"
batch_size = 2


def get_model():
    torch.manual_seed(0)
    if size == "tiny":
        return ConvNeXt(depths=(1, 1, 1, 1), dims=(16, 32, 64, 128), num_classes=10).eval()
    return timm.create_model("convnext_tiny", pretrained=False).eval()


def get_inputs():
    g = torch.Generator().manual_seed(1)
    px = 32 if size == "tiny" else 224
    return [torch.randn(batch_size, 3, px, px, generator=g)]
