"""torchvision VisionTransformer, built with random weights: attention through ``nn.MultiheadAttention``.

Patch embedding (a Conv2d with kernel = stride = patch size), a class token, pre-norm encoder blocks whose
attention is ``nn.MultiheadAttention`` (its in/out projections are parameters of the attention module, used
through ``F.multi_head_attention_forward``: no Linear submodule of their own), an MLP block (Linear, GELU,
Linear) and the classification head.

    size = "tiny"  (CPU CI: 32 px, patch 8, 2 layers, 64 wide)   --set size=real  (vit_b_16 at 224 px)
"""

import torch
from torchvision.models.vision_transformer import VisionTransformer

size = "tiny"
batch_size = 2

_PRESETS = {
    "tiny": dict(image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64, mlp_dim=128,
                 num_classes=10),
    "real": dict(image_size=224, patch_size=16, num_layers=12, num_heads=12, hidden_dim=768, mlp_dim=3072,
                 num_classes=1000),
}


def get_model():
    torch.manual_seed(0)
    return VisionTransformer(**_PRESETS[size]).eval()


def get_inputs():
    g = torch.Generator().manual_seed(1)
    px = _PRESETS[size]["image_size"]
    return [torch.randn(batch_size, 3, px, px, generator=g)]
