"""torchvision Swin Transformer, built with random weights: windowed attention.

A patch embedding conv, then stages of Swin blocks: the feature map is cut into windows (views, permutes and
copies), attention runs inside each window (qkv Linear, a relative-position bias added to the scores, proj
Linear), every second block on windows shifted by half a window (``torch.roll`` and an attention mask), and
the windows are put back before the residual add; patch merging (a Linear over 2x2 neighbours) between stages;
the classification head.

    size = "tiny"  (CPU CI: 32 px, 2 stages of 2 blocks, 32 wide, 4x4 windows)   --set size=real  (swin_t, 224 px)
"""

import torch
from torchvision.models.swin_transformer import SwinTransformer, swin_t

size = "tiny"
batch_size = 2


def get_model():
    torch.manual_seed(0)
    if size == "tiny":
        return SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4],
                               window_size=[4, 4], stochastic_depth_prob=0.0, num_classes=10).eval()
    return swin_t(weights=None).eval()


def get_inputs():
    g = torch.Generator().manual_seed(1)
    px = 32 if size == "tiny" else 224
    return [torch.randn(batch_size, 3, px, px, generator=g)]
