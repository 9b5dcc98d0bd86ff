#!/usr/bin/env bash
# Every scheme on a real model: step time, bubble, gap to the lower bound and the highest and
# lowest device peak, plain, with checkpointing alone, with the paper's passes and with hide.
# Usage: tests/bench/schemes_table.sh [MARIO] [MODEL] [PP] [MICROBATCHES]
#   defaults: build/app/mario llama2-13b 8 64 (analytical costs, A100-80G, micro-batch size 1)
set -euo pipefail
mario=${1:-build/app/mario}
model=${2:-llama2-13b}
pp=${3:-8}
microbatches=${4:-64}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

summarise='
import json, sys
r = json.load(sys.stdin)
peaks = [d["peak_memory_bytes"] / 1e9 for d in r["devices"]]
cells = [sys.argv[1], sys.argv[2], "%.0f" % r["makespan"], "%.1f%%" % (100 * r["bubble_ratio"]),
         "%+.1f%%" % (100 * r["over_lower_bound"]), "%.1f" % max(peaks), "%.1f" % min(peaks)]
print("| " + " | ".join(cells) + " |")
'
printf '%s on %s devices, %s micro-batches (A100-80G, analytical costs)\n\n' "$model" "$pp" "$microbatches"
printf '| scheme | passes | step ms | bubble | over bound | peak GB max | peak GB min |\n|---|---|---|---|---|---|---|\n'
for scheme in 1f1b interleaved bfs zb-h1 zb-h2 interleaved-zb zbv dualpipev dualpipe chimera; do
    chunks=1
    case $scheme in interleaved | bfs | interleaved-zb) chunks=2 ;; esac
    config="$work/$scheme.json"
    cat >"$config" <<JSON
{"format":"mario-config","version":1,"name":"$model $scheme","model":"$model","hardware":"a100-80g",
 "devices":$pp,"parallel":{"scheme":"$scheme","pp":$pp,"dp":1,"tp":1,"chunks":$chunks,
 "micro_batch_size":1,"global_batch_size":$microbatches}}
JSON
    for passes in none checkpoint all all,bound-w all,bound-w,hide; do
        if ! json=$("$mario" simulate "$config" --passes "$passes" --json 2>&1); then
            printf '| %s | %s | %s |\n' "$scheme" "$passes" "$(echo "$json" | head -1)"
            continue
        fi
        python3 -c "$summarise" "$scheme" "$passes" <<<"$json"
    done
done
