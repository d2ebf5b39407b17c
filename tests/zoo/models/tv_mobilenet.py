"""torchvision MobileNetV3-Small, built with random weights: depthwise convolutions and squeeze-excite.

Inverted residual blocks: a 1x1 expansion conv, a depthwise 3x3 / 5x5 conv (``groups`` = channels), a
squeeze-excite block (global average pool, two 1x1 convs with ReLU and hard-sigmoid, a scale of the feature map)
and a 1x1 projection conv, BatchNorm after each conv, Hardswish / ReLU activations; a 1x1 conv, pooling and a
Linear classifier. ``--set arch=efficientnet_b0`` builds EfficientNet-B0 (MBConv blocks with SiLU) instead.

    size = "tiny"  (CPU CI: the first 5 of MobileNetV3-Small's 11 blocks at width 0.25, 32 px: a squeeze-excite
                    block without expansion, two ReLU blocks with 3x3 depthwise convs, one of them residual, two
                    Hardswish blocks with 5x5 depthwise convs and squeeze-excite, one of them residual)
    --set size=real  (the whole model, full width, 224 px)
"""

import torch
import torchvision
from torchvision.models.mobilenetv3 import MobileNetV3, _mobilenet_v3_conf

size = "tiny"
arch = "mobilenet_v3_small"
batch_size = 2


def get_model():
    torch.manual_seed(0)
    if arch == "mobilenet_v3_small" and size == "tiny":
        blocks, last_channel = _mobilenet_v3_conf(arch, width_mult=0.25)
        return MobileNetV3(blocks[:5], last_channel, num_classes=10).eval()
    if arch == "mobilenet_v3_small":
        return torchvision.models.mobilenet_v3_small(weights=None, num_classes=10).eval()
    return getattr(torchvision.models, arch)(weights=None).eval()


def get_inputs():
    g = torch.Generator().manual_seed(1)
    px = 32 if size == "tiny" else 224
    return [torch.randn(batch_size, 3, px, px, generator=g)]
