import torch, torch.nn as nn
class MLP(nn.Module):
    def __init__(s):
        super().__init__(); s.gate_proj=nn.Linear(32,64,bias=False); s.up_proj=nn.Linear(32,64,bias=False); s.down_proj=nn.Linear(64,32,bias=False)
    def forward(s,x): return s.down_proj(torch.nn.functional.silu(s.gate_proj(x))*s.up_proj(x))
class M(nn.Module):
    def __init__(s): super().__init__(); s.layers=nn.ModuleList([MLP() for _ in range(2)])
    def forward(s,x):
        for l in s.layers: x = x + l(x)
        return x
m=M(); x=torch.randn(8,32)
from torch._inductor.utils import run_and_get_code
with torch.no_grad():
    _, codes = run_and_get_code(torch.compile(m), x)
open('/tmp/g_code.py','w').write(codes[0])
