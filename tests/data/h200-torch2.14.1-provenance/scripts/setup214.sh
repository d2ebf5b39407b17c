# The last chunk: finish the unpack, add the symbol stubs, make /tmp/py214 (torch 2.14.1 + cutlass DSL), check it.
T=/tmp/t214/t214
bash .carry/common/recv.sh
for k in $(seq 150); do [ -f /tmp/t214.done ] && break; sleep 1; done
cat /tmp/t214.done /tmp/t214.bg.log 2>/dev/null
grep -q "rc=0" /tmp/t214.done 2>/dev/null || { echo "unpack not done"; exit 3; }
tar -xJf .carry/common/stubs.tar.xz -C $T
PY=$(python3 -c 'import sys;print(sys.executable)')
SP=$(python3 -c 'import site,os;print([p for p in site.getsitepackages() if os.path.isdir(p+"/nvidia")][0])')
ln -sfn $SP/nvidia $T/nvidia
python3 tests/data/h200-torch2.14.1-kernelscope-run/scripts/checksyms.py /tmp/t214missing.txt | grep -v "^lib "
PRE=""; for s in $(cat /tmp/t214missing.txt); do PRE="$PRE $T/_stubs/$s.so"; done; PRE="${PRE# }"
echo "preload: $(wc -l < /tmp/t214missing.txt) stubs"
cat > /tmp/py214 <<W
#!/bin/sh
export PYTHONPATH=$T:$T/nvidia_cutlass_dsl/dsl_packages\${PYTHONPATH:+:\$PYTHONPATH}
export LD_PRELOAD="$PRE\${LD_PRELOAD:+ \$LD_PRELOAD}"
export CUTE_DSL_ARCH=sm_90a
exec $PY "\$@"
W
chmod +x /tmp/py214
/tmp/py214 -c "
import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(), 'triton', triton.__version__)
from torch._inductor.utils import ensure_nv_universal_gemm_available as e; print('ensure_nv_universal_gemm_available', e())
x = torch.randn(512, 512, device='cuda', dtype=torch.bfloat16); print('mm ok', float((x @ x).float().abs().sum()))
" 2>&1 | tail -6
/tmp/py214 -c "import torch; assert torch.__version__.startswith('2.14')" || exit 4
