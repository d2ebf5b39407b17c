#!/usr/bin/env bash
# Re-record the CPU fixtures in this folder with kernelscope itself (see README.md). Run from anywhere; takes
# about 5 minutes on a 2-core VM. `capture.sh llama_block` re-records one model. RAW (default /tmp/fx) keeps the full runs; only what the analysis needs is
# copied here. Compiled modes keep Inductor's provenance beside their code (code/graph_N.provenance.json).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
RAW="${RAW:-/tmp/fx}"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
cd "$ROOT"

record() {  # record MODEL MODES
    local m="$1" modes="$2"
    rm -rf "${RAW:?}/$m"
    python -m kernelscope profile "samples/$m.py" --modes "$modes" --repeats 5 --out "$RAW/$m" || true
    rm -rf "${HERE:?}/$m"
    mkdir -p "$HERE/$m"
    cp "$RAW/$m/result.json" "$HERE/$m/"
    (cd "$RAW/$m" && find modes -name capture.json -o -path '*/code/*.py' -o -path '*/code/*.provenance.json' -o -name log.txt | grep -v /warm/) |
        while read -r f; do
            mkdir -p "$HERE/$m/$(dirname "$f")"
            cp "$RAW/$m/$f" "$HERE/$m/$f"
        done
    (cd "$RAW/$m" && find tb -name '*.pt.trace.json.gz') | while read -r f; do
        mkdir -p "$HERE/$m/$(dirname "$f")"
        cp "$RAW/$m/$f" "$HERE/$m/$f"
    done
    # Logs over 200 kB are stored gzipped (log.txt.gz).
    find "$HERE/$m" -name log.txt -size +200k -exec gzip -9 -f {} \;
}

# max-autotune:CPP pins the C++ GEMM template (with ATEN in the list MKL and the template can trade places from
# run to run on a loaded 2-core machine); max-autotune is what a user gets.
declare -A MODES=(
    [llama_block]=eager,default,max-autotune,max-autotune:CPP
    [bert_layer]=eager,default,max-autotune
    [conv_bn_relu]=eager,default,max-autotune
)
for m in "${@:-llama_block bert_layer conv_bn_relu}"; do
    for one in $m; do record "$one" "${MODES[$one]}"; done
done
du -ah "$HERE" | sort -h | tail -20
