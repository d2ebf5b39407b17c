"""torchvision ResNet built with random weights (no download), in eval mode.

conv-BN-ReLU stems and blocks with identity / downsample residuals, a global average pool and the fc head.
ResNet-18 on the CPU; ``--set arch=resnet50`` (bottlenecks: 1x1, 3x3, 1x1 convs) at 224 px on the GPU.

    size = "tiny" (64 px)   --set size=real  (224 px)
"""

import torch
import torchvision

size = "tiny"
arch = "resnet18"
batch_size = 2


def get_model():
    torch.manual_seed(0)
    return getattr(torchvision.models, arch)(weights=None).eval()


def get_inputs():
    g = torch.Generator().manual_seed(1)
    px = 64 if size == "tiny" else 224
    return [torch.randn(batch_size, 3, px, px, generator=g)]
