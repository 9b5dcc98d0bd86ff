#!/usr/bin/env bash
# Hostile numbers and sizes through the real `mario` binary: each used to abort (SIGABRT,
# SIGFPE, std::length_error) or exhaust memory; each now ends in one line and exit 2.
# Usage: hostile_input.sh MARIO_BINARY REPO_ROOT
source "$(dirname "$0")/harness.bash"

expect_one_line() {  # expect_one_line NAME CODE PATTERN CMD...
    local name="$1" code="$2" pattern="$3"; shift 3
    "$@" >"$work/out" 2>"$work/err"; local rc=$?
    if [ "$rc" = "$code" ] && [ "$(wc -l <"$work/err")" = 1 ] && grep -q -- "$pattern" "$work/err"; then
        passed=$((passed + 1))
    else
        echo "FAIL: $name (exit $rc): $(head -c 300 "$work/err")"
        failures=$((failures + 1))
    fi
}
with() {  # with NAME SED-EXPRESSION: a copy of Figure 2's config with one edit
    sed "$2" "$example" >"$work/$1.config.json"
    echo "$work/$1.config.json"
}

echo '{"format": "mario-plan", "version": 1e999}' >"$work/version.mario.json"
for command in simulate validate; do
    expect_one_line "$command 1e999" 2 "version.mario.json:1:41: malformed JSON: number overflow parsing '1e999'" \
        "$mario" "$command" "$work/version.mario.json"
done
huge=$(with huge 's/"forward": 1,/"forward": 1.7e308,/; s/"backward": 2,/"backward": 1.7e308,/')
expect_one_line "text simulate of an overflowing cost" 2 "not a finite number" "$mario" simulate "$huge"
expect_one_line "json simulate of an overflowing cost" 2 "not a finite number" "$mario" simulate "$huge" --json
overflow=$(with overflow 's/"dp": 1,/"dp": 16384,/; s/"micro_batch_size": 1,/"micro_batch_size": 65536,/; s/"devices": 4,//; s/"microbatches": 4,//')
expect_one_line "dp × micro_batch_size" 2 "dp \* micro_batch_size = 1073741824" "$mario" simulate "$overflow"
many=$(with many 's/"microbatches": 4,/"microbatches": 100000000,/')
expect_one_line "10^8 micro-batches" 2 "microbatches: expected an integer in \[1, 16384\]" "$mario" simulate "$many"
expect_one_line "--width 1e9" 2 "\-\-width: expected an integer in \[10, 10000\]" "$mario" simulate "$example" --width 1e9
chimera="$root/resources/examples/gpt3-13b-chimera.config.json"
expect_one_line "--devices 2^31-1" 2 "\-\-devices: expected an integer in \[2, 65536\]" "$mario" tune "$chimera" --devices 2147483647
expect_one_line "--threads 100000" 2 "\-\-threads: expected an integer in \[1, 1024\]" "$mario" tune "$chimera" --threads 100000
expect_one_line "--memory 1e999" 2 "\-\-memory" "$mario" tune "$chimera" --memory 1e999
# Issue 30: what `mario plan` wrote from these, `mario validate` refused; now the config is refused.
big_checkpoint=$(with big_checkpoint 's/"checkpoint_bytes": 10,/"checkpoint_bytes": 2000,/')
expect_one_line "checkpoint_bytes above activation_bytes" 2 \
    "unit_costs.checkpoint_bytes: 2000 is larger than activation_bytes 1000" \
    "$mario" plan "$big_checkpoint" -o "$work/big_checkpoint.mario.json"
infinite_limit=$(with infinite_limit 's/"devices": 4,/"devices": 4, "memory_limit_gb": 1e308,/')
expect_one_line "memory_limit_gb 1e308 (infinite bytes)" 2 "memory_limit_gb: expected a positive number of GB up to 1e+09" \
    "$mario" plan "$infinite_limit" -o "$work/infinite_limit.mario.json"
# Chimera's generator picked no task once every start time was infinite (SIGSEGV, found by
# tests/core/round_trip_test.cpp).
chimera_huge=$(with chimera_huge 's/"scheme": "1f1b"/"scheme": "chimera"/; s/"forward": 1,/"forward": 1.7976931348623157e308,/; s/"backward": 2,/"backward": 1e300,/')
expect_one_line "chimera with a forward of the largest double" 2 "not a finite number" "$mario" simulate "$chimera_huge"
"$mario" plan "$example" -o "$work/plan.mario.json" >/dev/null
grep -v '"format"' "$work/plan.mario.json" >"$work/noformat.mario.json"
expect_one_line "plan without format" 2 "format: required" "$mario" simulate "$work/noformat.mario.json"
head -c 300 "$work/plan.mario.json" >"$work/truncated.mario.json"
expect_one_line "truncated plan (a crash mid-save)" 2 "malformed JSON: " "$mario" validate "$work/truncated.mario.json"
# Issue 30: a CSV cell with a bare carriage return, or binary bytes, was echoed raw (the message
# was no longer one line).
printf '0F0,0B0\n0F\r1,1B0\n' >"$work/cr.csv"
expect_one_line "CSV cell with a bare CR" 2 'line 2, column 1: instruction "0F\\r1" lacks' \
    "$mario" import "$work/cr.csv" -o "$work/cr.mario.json"
printf '0F0,\001\377Q\033[31m\n' >"$work/binary.csv"
expect_one_line "CSV cell with binary bytes" 2 'instruction "\\x01\\xFFQ\\x1B\[31m" does not start' \
    "$mario" import "$work/binary.csv" -o "$work/binary.mario.json"

finish hostile_input
