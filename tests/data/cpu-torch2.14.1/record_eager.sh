#!/usr/bin/env bash
# Re-record only the eager mode of CPU fixtures (capture.sh records every mode): the eager run replaces
# modes/eager/, tb/eager/ and result.json's eager entry; the compiled modes stay as recorded.
# `record_eager.sh llama_block bert_layer` (default: every model folder here).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
RAW="${RAW:-/tmp/fx-eager}"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
cd "$ROOT"
for m in ${@:-llama_block bert_layer conv_bn_relu pool_attention}; do
    rm -rf "${RAW:?}/$m"
    python -m kernelscope profile "samples/$m.py" --modes eager --repeats 5 --out "$RAW/$m"
    rm -rf "$HERE/$m/modes/eager" "$HERE/$m/tb/eager"
    mkdir -p "$HERE/$m/modes/eager" "$HERE/$m/tb/eager"
    cp "$RAW/$m/modes/eager/capture.json" "$RAW/$m/modes/eager/log.txt" "$HERE/$m/modes/eager/"
    cp "$RAW/$m"/tb/eager/*.pt.trace.json.gz "$HERE/$m/tb/eager/"
    python - "$HERE/$m/result.json" "$RAW/$m/result.json" <<'PY'
import json, sys
dst, src = sys.argv[1], sys.argv[2]
d, s = json.load(open(dst)), json.load(open(src))
new = next(x for x in s["modes"] if x["name"] == "eager")
d["modes"] = [new if x["name"] == "eager" else x for x in d["modes"]]
json.dump(d, open(dst, "w"), indent=1)
PY
done
