"""torchvision MobileNetV3-Small, built with random weights: depthwise convolutions and squeeze-excite.

Inverted residual blocks: a 1x1 expansion conv, a depthwise 3x3 / 5x5 conv (``groups`` = channels), a
squeeze-excite block (global average pool, two 1x1 convs with ReLU and hard-sigmoid, a scale of the feature map)
and a 1x1 projection conv, BatchNorm after each conv, Hardswish / ReLU activations; a 1x1 conv, pooling and a
Linear classifier. ``--set arch=efficientnet_b0`` builds EfficientNet-B0 (MBConv blocks with SiLU) instead.

    size = "tiny"  (CPU CI: width 0.5, 64 px)   --set size=real  (full width, 224 px)
"""

import torch
import torchvision

size = "tiny"
arch = "mobilenet_v3_small"
batch_size = 2


def get_model():
    torch.manual_seed(0)
    if arch == "mobilenet_v3_small":
        width = 0.5 if size == "tiny" else 1.0
        return torchvision.models.mobilenet_v3_small(weights=None, width_mult=width, num_classes=10).eval()
    return getattr(torchvision.models, arch)(weights=None).eval()


def get_inputs():
    g = torch.Generator().manual_seed(1)
    px = 64 if size == "tiny" else 224
    return [torch.randn(batch_size, 3, px, px, generator=g)]
