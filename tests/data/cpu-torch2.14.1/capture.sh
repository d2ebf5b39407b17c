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

record() {  # record MODEL MODES [PROFILE OPTIONS...]
    local m="$1" modes="$2"
    shift 2
    local file="samples/$m.py"
    [ -f "$file" ] || file="tests/models/$m.py"  # the KernelBench-style problems (kb_*) live with the tests
    if [ -z "${COPY_ONLY:-}" ]; then  # COPY_ONLY=1: copy an earlier raw run again, without re-recording it
        rm -rf "${RAW:?}/$m"
        python -m kernelscope profile "$file" --modes "$modes" --repeats 5 --out "$RAW/$m" "$@" || true
    fi
    rm -rf "${HERE:?}/$m"
    mkdir -p "$HERE/$m"
    cp "$RAW/$m/result.json" "$HERE/$m/"
    (cd "$RAW/$m" && find modes -name capture.json -o -path '*/code/*.py' -o -path '*/code/*.provenance.json' -o -name log.txt | grep -v /warm/ | grep -v /process-) |
        while read -r f; do
            mkdir -p "$HERE/$m/$(dirname "$f")"
            cp "$RAW/$m/$f" "$HERE/$m/$f"
        done
    (cd "$RAW/$m" && find tb -name '*.pt.trace.json.gz') | while read -r f; do
        mkdir -p "$HERE/$m/$(dirname "$f")"
        cp "$RAW/$m/$f" "$HERE/$m/$f"
    done
    # Later processes (modes/*/process-N) timed the same code: only the first process's files are kept. Logs
    # over 64 kB are stored gzipped (log.txt.gz; analysis/mode.py read_log reads either).
    find "$HERE/$m" -name log.txt -size +64k -exec gzip -9 -f {} \;
}

# max-autotune:CPP pins the C++ GEMM template (with ATEN in the list MKL and the template can trade places from
# run to run on a loaded 2-core machine); max-autotune is what a user gets.
declare -A MODES=(
    [llama_block]=eager,default,max-autotune,max-autotune:CPP
    [bert_layer]=eager,default,max-autotune
    [conv_bn_relu]=eager,default,max-autotune
    [pool_attention]=eager,default,max-autotune,max-autotune:CPP
    [kb_gemm_groupnorm_hardtanh]=eager,default,max-autotune
    [kb_gemm_bn_scale_softmax]=eager,default,max-autotune
    [kb_gemm_max_sub_gelu]=eager,default,max-autotune
)
# The KernelBench-style problems at CPU size (M = 32 tokens, as the samples): where a reduction ends the epilogue.
# Each is kept as one <model>.tar.gz (tests/zoo_fixtures.py extract_run reads it): their output code repeats the
# other fixtures' C++ GEMM template line for line.
KB_SIZE=(--set batch_size=32 --set in_features=64 --set out_features=256 --processes 1)
ALL="llama_block bert_layer conv_bn_relu pool_attention"
ALL="$ALL kb_gemm_groupnorm_hardtanh kb_gemm_bn_scale_softmax kb_gemm_max_sub_gelu"
for m in "${@:-$ALL}"; do
    for one in $m; do
        case "$one" in
            kb_*)
                record "$one" "${MODES[$one]}" "${KB_SIZE[@]}"
                tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='2026-12-04 00:00Z' -C "$HERE" -cf - \
                    "$one" | gzip -9n > "$HERE/$one.tar.gz"
                rm -rf "${HERE:?}/$one"
                ;;
            *) record "$one" "${MODES[$one]}" ;;
        esac
    done
done
du -ah "$HERE" | sort -h | tail -20
