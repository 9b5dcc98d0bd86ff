#!/usr/bin/env bash
# Peak memory of `mario validate` on plans padded with empty objects under a key the plan
# reader ignores (issue 30: 33 bytes of memory per byte of file), next to the plan at the
# instruction limit, the largest file the other limits allow. Each row: the file, its size,
# the peak resident set size (/usr/bin/time -v), the wall time and the first line the program
# printed (a refusal names the parsed size it would have taken: core/io/JsonScan.h).
# Usage: tests/bench/json_memory.sh [MARIO] [SIZES_MIB]
#   defaults: build/app/mario "16 64 250"; set MAX_PLAN=0 to skip the 2^24-instruction plan
#   (190 MB on disk, about 30 s).
set -euo pipefail
mario=${1:-build/app/mario}
sizes=${2:-16 64 250}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (Debian: apt-get install time)" >&2; exit 2; }

# A plan of one stage and one device, padded to `mib` MiB with `{}` under "padding".
padded() {
    python3 - "$1" "$2" <<'PY'
import sys
mib, path = int(sys.argv[1]), sys.argv[2]
head = '{"format": "mario-plan", "version": 1, "padding": ['
tail = ('], "stages": [{"index": 0, "device": 0, "forward_ms": 1, "backward_ms": 2}],'
        ' "devices": [{"index": 0, "program": ["0F0", "0B0"]}]}')
objects = (mib * 2**20 - len(head) - len(tail) + 1) // 3
with open(path, "w") as f:
    f.write(head)
    f.write(",".join(["{}"] * objects))
    f.write(tail)
PY
}

# One stage on one device, 2^23 micro-batches: 2^24 instructions, the plan reader's limit.
maxplan() {
    python3 - "$1" <<'PY'
import sys
n = 1 << 23
with open(sys.argv[1], "w") as f:
    f.write('{"format": "mario-plan", "version": 1, "stages": [{"index": 0, "device": 0, "forward_ms": 1,'
            ' "backward_ms": 2, "activation_bytes": 1}], "devices": [{"index": 0, "program": [')
    f.write(",".join('"0F%d","0B%d"' % (m, m) for m in range(n)))
    f.write(']}]}')
PY
}

measure() {
    local name=$1 file=$2
    local size_mib
    size_mib=$(python3 -c "import os,sys; print('%.0f' % (os.path.getsize(sys.argv[1]) / 2**20))" "$file")
    /usr/bin/time -v "$mario" validate "$file" >"$work/out" 2>"$work/err" || true
    local rss wall first
    rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$work/err")
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/err")
    first=$({ grep -v '^\s' "$work/err" || true; } | head -1 | sed "s|$work/||" | cut -c1-110)
    [ -n "$first" ] || first=$(head -1 "$work/out" | sed "s|$work/||" | cut -c1-110)
    printf '| %s | %s MiB | %s MB | %s | %s |\n' "$name" "$size_mib" "$rss" "$wall" "$first"
}

printf '| file | size | peak RSS | wall | what mario said |\n|---|---|---|---|---|\n'
for mib in $sizes; do
    padded "$mib" "$work/pad$mib.mario.json"
    measure "padded with {}" "$work/pad$mib.mario.json"
    rm -f "$work/pad$mib.mario.json"
done
if [ "${MAX_PLAN:-1}" != 0 ]; then
    maxplan "$work/max.mario.json"
    measure "2^24 instructions" "$work/max.mario.json"
fi
