# After setup214.sh: llama under torch 2.14.1 with Inductor provenance, packed small into $OUT.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=8
mkdir -p /tmp/ks
timeout ${1:-330} python3 -m kernelscope profile samples/llama_block.py --python /tmp/py214 \
  --modes default,max-autotune:ATEN+TRITON+NVGEMM --dtype bfloat16 --timeout 240 --repeats 10 --steps 2 \
  --processes 1 --out /tmp/ks/llama-prov > /tmp/ks/llama-prov.console.txt 2>&1
echo "rc=$?"; tail -40 /tmp/ks/llama-prov.console.txt
cd /tmp/ks && cp llama-prov.console.txt llama-prov/console.txt; tar -czf $OUT/llama-prov.tar.gz --exclude='*.html' --exclude='*/worker/*' llama-prov; ls -la $OUT
