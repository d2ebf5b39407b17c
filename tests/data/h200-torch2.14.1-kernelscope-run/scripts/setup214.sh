# C4 on the device: unpack the carried torch 2.14.1 + cutlass stage, make /tmp/py214, check it, install kernelscope's parent side.
T=/tmp/t214; C=/tmp/t214chunks; mkdir -p $C $T
t=$(date +%s)
bash .carry214/recv.sh
for k in $(seq 90); do [ -f /tmp/t214.done ] && break; sleep 1; done
cat /tmp/t214.done /tmp/t214.bg.log 2>/dev/null
if ! grep -q "rc=0" /tmp/t214.done 2>/dev/null; then
  echo "background unpack not done: full unpack"; [ -f /tmp/t214.pid ] && kill -- -$(cat /tmp/t214.pid) 2>/dev/null
  cat $C/part.* | xz -d -T0 | tar -x -C $T || exit 3
fi
echo "unpacked in $(( $(date +%s) - t )) s"; du -sh $T
PY=$(python3 -c 'import sys;print(sys.executable)')
SP=$(python3 -c 'import site,os;print([p for p in site.getsitepackages() if os.path.isdir(p+"/nvidia")][0])')
ln -sfn $SP/nvidia $T/nvidia
cp .carry214/symbols.json .carry214/checksyms.py /tmp/ && python3 /tmp/checksyms.py /tmp/t214missing.txt | grep -v "^lib "
PRE=""; for s in $(cat /tmp/t214missing.txt); do PRE="$PRE $T/_stubs/$s.so"; done; PRE="${PRE# }"
echo "preload: $(wc -l < /tmp/t214missing.txt) stubs: $(cat /tmp/t214missing.txt | tr '\n' ' ')"
cat > /tmp/py214 <<W
#!/bin/sh
export PYTHONPATH=$T:$T/nvidia_cutlass_dsl/dsl_packages\${PYTHONPATH:+:\$PYTHONPATH}
export LD_PRELOAD="$PRE\${LD_PRELOAD:+ \$LD_PRELOAD}"
export CUTE_DSL_ARCH=sm_90a
exec $PY "\$@"
W
chmod +x /tmp/py214; cat /tmp/py214 | cut -c1-300
/tmp/py214 -c "
import torch, triton; print('torch', torch.__version__, torch.__file__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(), 'cudnn', torch.backends.cudnn.version(), 'triton', triton.__version__)
from torch._inductor.utils import ensure_nv_universal_gemm_available as e; print('ensure_nv_universal_gemm_available', e())
import cutlass, cutlass.operators as o; print('cutlass.operators', getattr(o, '__version__', '?'), o.__file__)
x = torch.randn(512, 512, device='cuda', dtype=torch.bfloat16); print('mm ok', float((x @ x).float().abs().sum()))
" 2>&1 | tail -15
/tmp/py214 -c "import torch; assert torch.__version__.startswith('2.14')" || exit 4
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 5
mkdir -p /tmp/kssrc && tar -xJf .carry214/ks.tar.xz -C /tmp/kssrc || exit 6
export PYTHONPATH=/tmp/site:/tmp/kssrc PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=4
