#!/usr/bin/env bash
# Re-record the CPU fixtures in this folder with kernelscope itself (see README.md). Run from anywhere; takes
# about 15-25 minutes on a 2-core VM. RAW (default /tmp/fx) keeps the full runs; only what the analysis needs is
# copied here.
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
    (cd "$RAW/$m" && find modes -name capture.json -o -path '*/code/*.py' -o -name log.txt | grep -v /warm/) |
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

record llama_block eager,default,max-autotune
record bert_layer eager,default,max-autotune
record conv_bn_relu eager,default,max-autotune
du -ah "$HERE" | sort -h | tail -20
