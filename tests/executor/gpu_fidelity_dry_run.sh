#!/usr/bin/env bash
# tests/bench/gpu_fidelity.sh --dry-run names everything a GPU session would run: the build, a
# partitioned profile per partition count, and for every row (1F1B, ZB-H1 and Chimera, without and with
# Mario's passes, on 2 and 4 partitions) its plan, simulation and partitioned run with its instruction
# events, then the row and the instruction table made from those events.
# The expected rows are listed here by hand, not read from the script.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
out="$(TMPDIR="$scratch" BUILD=/nonexistent/build-node bash "$root/tests/bench/gpu_fidelity.sh" --dry-run)"
fail=0
expect() {
  if ! grep -qF -- "$1" <<<"$out"; then echo "missing from the dry run: $1" >&2; fail=1; fi
}
expect "packaging/gpu-node.sh"
for pp in 2 4; do
  expect "mario-executor profile --model layers=8\,hidden=4096\,heads=32\,seq=2048\,vocab=32000 --device cuda:0 --dtype bfloat16 --partition-sms $pp"
  for scheme in 1f1b zb-h1 chimera; do
    for passes in none all; do
      expect "# row: $scheme ${pp}x8 $passes "
      expect "mario plan $scratch/gpu-fidelity/$scheme-$pp-$passes.config.json --passes $passes"
      expect "mario simulate $scratch/gpu-fidelity/$scheme-$pp-$passes.mario.json --json"
      expect "mario-executor run $scratch/gpu-fidelity/$scheme-$pp-$passes.mario.json --backend cuda --partition-sms --dtype bfloat16"
      expect "--iterations 12 --events > $scratch/gpu-fidelity/$scheme-$pp-$passes.run.json"
      expect "instruction_fidelity.py $scratch/gpu-fidelity/$scheme-$pp-$passes.mario.json $scratch/gpu-fidelity/$scheme-$pp-$passes.run.json"
    done
  done
done
# Nothing but commands, notes and the table: a dry run never runs the tools.
rows=$(grep -c '^# row: ' <<<"$out")
[[ "$rows" == 12 ]] || { echo "expected 12 rows, the dry run has $rows" >&2; fail=1; }
[[ ! -e "$scratch/gpu-fidelity" ]] || { echo "the dry run created its scratch folder" >&2; fail=1; }
exit "$fail"
