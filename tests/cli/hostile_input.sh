#!/usr/bin/env bash
# Hostile numbers and sizes through the real `mario` binary: each used to abort (SIGABRT,
# SIGFPE, std::length_error) or exhaust memory; each now ends in one line and exit 2.
# Usage: hostile_input.sh MARIO_BINARY REPO_ROOT
source "$(dirname "$0")/harness.bash"

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

# Issue 39. Costs the hardware cannot run: a plan whose step would use more than its peak (MFU
# was printed as 3,632,569%), and a config whose efficiencies of 1 with attention's causal half
# give an MFU of 101%; both refused, naming the stage and the keys.
llama="$root/resources/examples/llama2-13b-1f1b.config.json"
"$mario" plan "$llama" -o "$work/llama.mario.json" >/dev/null
sed 's/"peak_tflops": [0-9.e+]*/"peak_tflops": 0.001/' "$work/llama.mario.json" >"$work/fast.mario.json"
for command in simulate validate; do
    expect_one_line "$command of a plan faster than its peak" 2 \
        "stages\[[0-9]*\].forward_flops: .* TFLOP/s per GPU) give the step an MFU of .* of peak_tflops 0.001: its costs claim more" \
        "$mario" "$command" "$work/fast.mario.json"
done
cat >"$work/fast.config.json" <<'JSON'
{"format": "mario-config", "version": 1, "devices": 8, "microbatches": 32,
 "model": {"layers": 40, "hidden": 5120, "heads": 40, "ffn_hidden": 13824, "vocab": 32000,
           "sequence_length": 131072, "gated_mlp": true},
 "hardware": {"peak_tflops": 312, "memory_gb": 80, "hbm_gb_per_s": 1e9, "intra_node_gb_per_s": 300,
              "inter_node_gb_per_s": 25, "gemm_efficiency": 1, "flash_forward_efficiency": 1,
              "flash_backward_efficiency": 1, "hbm_efficiency": 1, "kernel_overhead_us": 0},
 "parallel": {"scheme": "1f1b", "pp": 8, "dp": 1, "tp": 1, "micro_batch_size": 1, "global_batch_size": 8}}
JSON
for command in simulate "plan -o $work/fast2.mario.json"; do
    # shellcheck disable=SC2086 # the plan command's -o travels as words
    expect_one_line "$command of a config faster than its peak" 2 \
        "stage [0-9]*'s forward_flops (from model and hardware): .* of hardware.peak_tflops 312: its costs claim more than the hardware computes (hardware.gemm_efficiency 1, " \
        "$mario" $command "$work/fast.config.json"
done
# Megatron-LM refuses KV heads that tensor parallelism would split: LLaMA-3 70B's 8 over tp 16.
sed 's/"model": "llama2-13b"/"model": "llama3-70b"/; s/"devices": 8,/"devices": 32,/; s/"tp": 1/"tp": 16/; s/"pp": 8/"pp": 2/' \
    "$llama" >"$work/kv.config.json"
expect_one_line "KV heads split by tp" 2 "model.kv_heads: 8 KV heads are not divisible by parallel.tp = 16" \
    "$mario" simulate "$work/kv.config.json"
# An overflow is named by the key the user wrote, not the generated plan's stages[0].forward_ms.
expect_one_line "overflow named by its config key" 2 "^mario: .*huge.config.json: unit_costs.forward: 1.7e+308 makes" \
    "$mario" simulate "$huge"
# Four Bs of 1e308 on Figure 2's first device pass the largest double; so do the four
# micro-batches' activations it holds after its warm-up. The check names the key, nothing rewrites it.
overflow_tail=" makes the step's times or memory overflow (not a finite number)$"
huge_backward=$(with huge_backward 's/"backward": 2,/"backward": 1e308,/')
huge_activations=$(with huge_activations 's/"activation_bytes": 1000,/"activation_bytes": 1e308,/')
for flag in "" --json; do
    # shellcheck disable=SC2086 # no flag is no word
    expect_one_line "backward overflow named unit_costs.backward $flag" 2 \
        "^mario: .*huge_backward.config.json: unit_costs.backward: 1e+308$overflow_tail" \
        "$mario" simulate "$huge_backward" $flag
    # shellcheck disable=SC2086 # no flag is no word
    expect_one_line "activations overflow named unit_costs.activation_bytes $flag" 2 \
        "^mario: .*huge_activations.config.json: unit_costs.activation_bytes: 1e+308$overflow_tail" \
        "$mario" simulate "$huge_activations" $flag
done
# An analytical config at 1e-302 TFLOP/s: the last stage (the output head) has the longest backward.
cat >"$work/slow.config.json" <<'JSON'
{"format": "mario-config", "version": 1, "devices": 8, "microbatches": 32,
 "model": {"layers": 40, "hidden": 5120, "heads": 40, "ffn_hidden": 13824, "vocab": 32000,
           "sequence_length": 4096, "gated_mlp": true},
 "hardware": {"peak_tflops": 1e-302, "memory_gb": 80, "hbm_gb_per_s": 2039, "intra_node_gb_per_s": 300,
              "inter_node_gb_per_s": 25},
 "parallel": {"scheme": "1f1b", "pp": 8, "dp": 1, "tp": 1, "micro_batch_size": 1, "global_batch_size": 32}}
JSON
expect_one_line "analytical overflow names the rate" 2 \
    "^mario: .*slow.config.json: stage 7's backward_ms (from model and hardware, at hardware.peak_tflops 1e-302 and hardware.hbm_gb_per_s 2039): [0-9.e+]*$overflow_tail" \
    "$mario" simulate "$work/slow.config.json"
# A measured profile whose checkpoint outgrows a stage's activations: a 4-block first stage keeps
# 4 x 1185792 + the embedding's 65536 = 4808704 bytes.
sed 's/"checkpoint_bytes": [0-9.e+]*/"checkpoint_bytes": 5000000.0/' "$root/profiles/cpu-small.profile.json" \
    >"$work/big.profile.json"
sed 's/"profile": "cpu-small"/"profile": "big"/' "$root/resources/examples/cpu-small-measured.config.json" \
    >"$work/bigprofile.config.json"
for command in simulate "plan -o $work/bigprofile.mario.json"; do
    # shellcheck disable=SC2086 # the plan command's -o travels as words
    expect_one_line "$command with a profile's checkpoint above a stage's activations" 2 \
        'profile "big": stage 0 (layers \[0, 4)): checkpoint_bytes 5e+06 is larger than activation_bytes 4808704' \
        "$mario" $command "$work/bigprofile.config.json"
done
# Contention rounds are budgeted by the work they do: 8 instructions on 2 devices that never
# settle (a contention of 1e15, where a stretch's rounding is above the 1e-4 it may move) get
# 4e6 / (8 + 2 + 64) rounds whatever their stage count; padded with 1,022 unused stages they
# took 4e6 / 8 rounds of 1,024 stages each (113 s).
{
    printf '{"format": "mario-plan", "version": 1, "stages": ['
    for s in $(seq 0 1023); do
        [ "$s" = 0 ] || printf ','
        # Unequal stages, as in tests/core/shared_hardware_test.cpp: equal ones settle at once.
        forward=1 backward=2
        [ "$s" = 0 ] && backward=3.5
        [ "$s" = 1 ] && forward=2
        printf '{"index": %d, "device": %d, "forward_ms": %s, "backward_ms": %s, "contention": 1e15}' \
            "$s" $((s % 2)) "$forward" "$backward"
    done
    printf '], "pipelines": ['
    for s in $(seq 0 1023); do [ "$s" = 0 ] || printf ','; printf '[%d]' "$s"; done
    printf '], "devices": [{"index": 0, "program": ["0F0", "0B0", "0F1", "0B1"]},'
    printf ' {"index": 1, "program": ["1F2", "1B2", "1F3", "1B3"]}]}\n'
} >"$work/padded.mario.json"
"$mario" simulate "$work/padded.mario.json" --json >"$work/padded.json" 2>"$work/err"
rounds=$(grep -o '"contention_rounds": [0-9]*' "$work/padded.json" | grep -o '[0-9]*$')
budget=$(awk 'BEGIN { print int(4e6 / (8 + 2 + 64)) }')
if [ "$rounds" = "$budget" ] && grep -q '"contention_settled": false' "$work/padded.json"; then
    passed=$((passed + 1))
else
    echo "FAIL: padded plan's contention rounds: $rounds, expected the budget's $budget"
    failures=$((failures + 1))
fi
# A search of hours is refused with its size: 65,536 devices on a global batch of 2^24 samples.
sed 's/"global_batch_size": [0-9]*/"global_batch_size": 16777216/; s/"micro_batch_size": 1,/"micro_batch_size": 1024,/; s/"dp": 1/"dp": 2048/; s/"devices": 8/"devices": 16384/' \
    "$llama" >"$work/hugebatch.config.json"
expect_one_line "tune search beyond the limit" 2 "3246 candidates hold 1.25e+08 (stage, micro-batch) pairs in all; the limit is 5e+07: narrow it" \
    "$mario" tune "$work/hugebatch.config.json" --devices 65536 --tp
# A directory given as a plan or config: the reader said "internal error: basic_filebuf::underflow"
# (import, tune) or "cannot be read (basic_filebuf::underflow …)"; as an output, "cannot write
# … (Success)". Both come from core/io/TextFile.cpp, the one reader and writer.
mkdir -p "$work/adir"
for command in simulate validate tune; do
    expect_one_line "$command of a directory" 2 "adir: is a directory, not a file" "$mario" "$command" "$work/adir"
done
expect_one_line "import of a directory" 2 "adir: is a directory, not a file" "$mario" import "$work/adir" -o "$work/x.mario.json"
expect_one_line "plan -o a directory" 2 "cannot write the plan to \".*adir\": it is a directory" \
    "$mario" plan "$example" -o "$work/adir"

finish hostile_input
