#!/usr/bin/env bash
# The `mario` CLI end to end: results, exit codes (0 ok, 2 bad input, 3 deadlock) and
# one-line error messages. Usage: cli_end_to_end.sh MARIO_BINARY REPO_ROOT
source "$(dirname "$0")/harness.bash"

run() {  # run CMD... → sets out, err, rc
    "$@" >"$work/out" 2>"$work/err"; rc=$?
    out=$(cat "$work/out"); err=$(cat "$work/err")
}
json_number() {  # json_number KEY: first "KEY": value in $out
    grep -o "\"$1\": *[-0-9.e+]*" <<<"$out" | head -1 | sed 's/.*: *//'
}
num_eq() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 == b + 0) }'; }
one_line_error() { [ "$rc" = "$1" ] && [ "$(wc -l <"$work/err")" = 1 ] && grep -q -- "$2" "$work/err"; }

run "$mario" --help
check "help exits 0 and lists commands" test "$rc" = 0 -a -n "$(grep -o 'mario simulate FILE' <<<"$out")"
for command in simulate plan validate export import tune; do
    run "$mario" "$command" --help
    check "$command --help exits 0 with its usage" test "$rc" = 0 -a -n "$(grep -o "^  mario $command " <<<"$out")"
done
run "$mario" help tune
check "help tune is tune's usage" grep -q "^  mario tune CONFIG" "$work/out"
run "$mario" --version
check "version" grep -q "^mario [0-9]" "$work/out"

# Figure 2 through the CLI: 21 / 28 / 25 / 23 / 22.
for pair in none:21 checkpoint:28 checkpoint,overlap:25 checkpoint,overlap,redundancy:23 all:22; do
    passes=${pair%%:*}; expected=${pair##*:}
    run "$mario" simulate "$example" --json --passes "$passes"
    check "figure 2 $passes → $expected (got $(json_number makespan))" num_eq "$(json_number makespan)" "$expected"
done
run "$mario" simulate "$example" --json
check "file's own passes apply by default" num_eq "$(json_number makespan)" 22
for key in bubble_ratio lower_bound throughput simulate_us passes_us peak_memory_bytes busy idle index; do
    check "json has $key" grep -q "\"$key\"" "$work/out"
done

# --time-ms: simulate_us is the best over a window of that length; the window is honoured (the
# process runs at least that long, whatever the machine) and the result is unchanged.
start_ns=$(date +%s%N)
run "$mario" simulate "$example" --json --time-ms 60
elapsed_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
check "--time-ms keeps the result" num_eq "$(json_number makespan)" 22
check "--time-ms 60 times for at least 60 ms (took $elapsed_ms)" test "$elapsed_ms" -ge 60
check "--time-ms gives a simulate_us" awk -v us="$(json_number simulate_us)" 'BEGIN { exit !(us > 0) }'
for bad in 0 -1 nan 5s; do
    expect_one_line "--time-ms $bad → 2" 2 "time-ms" "$mario" simulate "$example" --time-ms "$bad"
done

# Not applicable is null, never a perfect score: nothing recomputed, no FLOPs in unit costs.
run "$mario" simulate "$example" --json --passes none
check "json recompute_hidden is null without recomputation" grep -q '"recompute_hidden": null' "$work/out"
check "json mfu is null for unit costs" grep -q '"mfu": null' "$work/out"
# MFU = model FLOPs / (step × GPUs × peak), GPT-3 13B on 32 A100s at 312 TFLOP/s.
run "$mario" simulate "$root/resources/examples/gpt3-13b-chimera.config.json" --json
mfu_expected=$(awk -v f="$(json_number model_flops_per_step)" -v t="$(json_number makespan)" \
    'BEGIN { printf "%.12g", f / (t / 1000 * 32 * 312e12) }')
check "json mfu is model FLOPs over step x GPUs x peak ($(json_number mfu) vs $mfu_expected)" \
    awk -v a="$(json_number mfu)" -v b="$mfu_expected" 'BEGIN { exit !(a > 0 && (a - b) ^ 2 < 1e-18) }'
check "json parameters of GPT-3 13B" awk -v p="$(json_number parameters)" 'BEGIN { exit !(p > 12.8e9 && p < 13.2e9) }'

# Figure 2 with hide: the no-checkpointing step (21, the paper's figure) is the best any
# placement of the Rs can do, and hide reaches it.
run "$mario" simulate "$example" --passes all,hide
check "hide bound is Figure 2's step without checkpointing, reached" \
    grep -q "^hide bound   21 units: .*reached, so this placement is optimal" "$work/out"
run "$mario" simulate "$example" --passes all,hide --json
check "json hide_bound reached" grep -q '"reached": *true' "$work/out"
check "json reorder_bound is null without reorder" grep -q '"reorder_bound": null' "$work/out"
# And with reorder: 1F1B's closed form (m + p - 1)(F + B) = 21 is what no order beats
# (exact_schedule_test), and the schedule reaches it.
run "$mario" simulate "$example" --passes all,hide,reorder
check "order bound is Figure 2's step without checkpointing, reached" \
    grep -q "^order bound  21 units: .*reached, so this schedule is optimal" "$work/out"
# Hide's bound holds the order fixed: beside reorder its line says for which order it holds.
check "hide bound names the order it holds for when reorder runs" \
    grep -q "^hide bound   21 units: .*in the order hide was given.*optimal for that order" "$work/out"
run "$mario" simulate "$example" --passes all,hide,reorder --json
check "json reorder_bound 21, reached" \
    test "$(tr -d ' \n' <"$work/out" | grep -o '"reorder_bound":{[^}]*}' | grep -c '"makespan":21.0*[,}].*"reached":true')" = 1

run "$mario" simulate "$example"
check "text output has a Gantt row per device" test "$(grep -c '^device [0-3] *|' "$work/out")" = 4
check "text output has the summary" grep -q "step time *22 units" "$work/out"
check "text output lists the pass steps" grep -q "round 1 prepose: moved 2 — 1F3@d1 2F2@d2" "$work/out"
# Unit costs are time units, not milliseconds, for the config and for a plan made from it
# (the plan carries "unit_costs"); a costed config still reads ms.
check "a unit-cost config's text says no ms" test -z "$(grep -E '[0-9] ms|busy ms' "$work/out")"
run "$mario" plan "$example" -o "$work/figure2.plan.json"
run "$mario" simulate "$work/figure2.plan.json"
check "a unit-cost plan's step is in units" grep -q "^step time    22 units  (lower bound 16 units" "$work/out"
check "a unit-cost plan's text says no ms" test -z "$(grep -E '[0-9] ms|busy ms' "$work/out")"
check "a unit-cost plan's devices are in units" grep -q "busy units" "$work/out"
run "$mario" simulate "$root/resources/examples/gpt3-13b-chimera.config.json" --passes none
check "a costed config's step is in ms" grep -q "^step time    [0-9.]* ms  (lower bound" "$work/out"

# Memory against the config's limit: GPT-3 13B on 32 A100-40G runs out of memory without
# checkpointing and fits with the Mario passes.
gpt3="$root/resources/examples/gpt3-13b-chimera.config.json"
run "$mario" simulate "$gpt3" --passes none
check "base schedule is flagged as out of memory" grep -q "32 of 32 devices exceed the 40.00 GB limit" "$work/out"
run "$mario" simulate "$gpt3" --json
check "with all passes it fits" grep -q '"fits_memory": true' "$work/out"
check "the limit is the basis" grep -q '"memory_basis": "limit"' "$work/out"

# Without a limit the card judges: LLaMA-2 13B 1F1B on 8 A100-40G, no passes. The expected
# verdict comes from the per-device peaks in --json and the preset's memory_gb.
sed 's/"memory_limit_gb": 80,//; s/"passes": "all"/"passes": []/; s/a100-80g/a100-40g/' \
    "$root/resources/examples/llama2-13b-1f1b.config.json" >"$work/nolimit.json"
card_gb=$(grep -o '"memory_gb": *[0-9.]*' "$root/profiles/hardware/a100-40g.json" | sed 's/.*: *//')
run "$mario" simulate "$work/nolimit.json" --json
read -r over worst worst_gb < <(grep -o '"peak_memory_bytes": *[0-9.e+]*' "$work/out" | sed 's/.*: *//' |
    awk -v card="$card_gb" '{ if ($1 > card * 1e9) n++; if (NR == 1 || $1 > best) { best = $1; d = NR - 1 } }
                           END { printf "%d %d %.2f\n", n, d, best / 1e9 }')
check "the card is the basis" grep -q '"memory_basis": "card"' "$work/out"
check "over the card does not fit" grep -q '"fits_memory": false' "$work/out"
check "json has the card" num_eq "$(json_number device_memory_bytes)" "$(awk -v g="$card_gb" 'BEGIN { print g * 1e9 }')"
check "the example's peaks exceed the card" test "$over" -gt 0
run "$mario" simulate "$work/nolimit.json"
card_text=$(printf '%.2f GB' "$card_gb")
check "no limit, $over of 8 over one card's $card_text" grep -q "^memory       no limit set, and $over of 8 devices exceed one card's $card_text (worst: device $worst, $worst_gb GB) — this schedule would run out of memory; set memory_limit_gb" "$work/out"
check "$over device rows over the card" test "$(grep -c '  over the card$' "$work/out")" = "$over"
# On 80 GB cards with the paper's passes the same model fits, and the line says so.
sed 's/"memory_limit_gb": 80,//' "$root/resources/examples/llama2-13b-1f1b.config.json" >"$work/nolimit80.json"
card80=$(printf '%.2f GB' "$(grep -o '"memory_gb": *[0-9.]*' "$root/profiles/hardware/a100-80g.json" | sed 's/.*: *//')")
run "$mario" simulate "$work/nolimit80.json"
check "no limit, every device fits one card's $card80" grep -q "^memory       no limit set; every device fits one card's $card80 (highest peak" "$work/out"
check "no device row over" test "$(grep -c '  over the' "$work/out")" = 0
# Unit costs have no card: nothing to judge the peaks against, so no verdict (issue 39: it was
# "fits_memory": true), and the memory line says there is no limit.
run "$mario" simulate "$example" --json
check "unit costs have no basis" grep -q '"memory_basis": "none"' "$work/out"
check "no verdict without a limit" grep -q '"fits_memory": null' "$work/out"
run "$mario" simulate "$example"
check "memory line says no limit" grep -q "^memory       no limit (highest peak " "$work/out"

# Plan, validate, export, import.
run "$mario" plan "$example" -o "$work/fig2.mario.json"
check "plan writes a file" test "$rc" = 0 -a -s "$work/fig2.mario.json"
run "$mario" validate "$work/fig2.mario.json"
check "validate accepts it" test "$rc" = 0
run "$mario" simulate "$work/fig2.mario.json" --json
check "plan file keeps its passes (22)" num_eq "$(json_number makespan)" 22
run "$mario" export "$work/fig2.mario.json" --chrome-trace "$work/trace.json"
check "chrome trace written" grep -q '"traceEvents"' "$work/trace.json"
# The plan recomputes (its passes checkpoint), which PyTorch cannot express (more in
# pipelining_csv.sh); the base schedule exports and comes back as Figure 2's 21.
run "$mario" export "$work/fig2.mario.json" --csv "$work/fig2.csv"
check "csv of a recomputing plan → 2" one_line_error 2 "recomputes .* forwards (R)"
run "$mario" export "$example" --passes none --csv "$work/fig2.csv"
check "csv has one line per device" test "$rc" = 0 -a "$(wc -l <"$work/fig2.csv")" = 4
run "$mario" import "$work/fig2.csv" --config "$example" -o "$work/imported.mario.json"
check "csv imports" test "$rc" = 0
run "$mario" simulate "$work/imported.mario.json" --json
check "imported plan simulates to 21" num_eq "$(json_number makespan)" 21

# Bad input: exit 2 and one line naming the problem.
printf '{\n  "format": "mario-plan",\n  "version": 1,,\n}\n' >"$work/malformed.json"
run "$mario" simulate "$work/malformed.json"
check "malformed JSON → 2, line:column" one_line_error 2 "malformed.json:3:16: malformed JSON"
sed 's/"1F1"/"1Q3"/' "$work/fig2.mario.json" >"$work/unknown.mario.json"
run "$mario" validate "$work/unknown.mario.json"
check "unknown instruction → 2 with its JSON path" one_line_error 2 'devices\[1\].program\[[0-9]*\]: unknown instruction "1Q3"'
grep -v '"1RECV_F2"' "$work/fig2.mario.json" >"$work/norecv.mario.json"
run "$mario" validate "$work/norecv.mario.json"
check "missing RECV → 2" one_line_error 2 "missing 1RECV_F2"
run "$mario" simulate "$example" --passes checkpoint,fast
check "unknown pass → 2" one_line_error 2 'unknown pass "fast"'
run "$mario" simulate "$work/does-not-exist.json"
check "missing file → 2" one_line_error 2 "cannot open"
run "$mario" frobnicate
check "unknown command → 2" one_line_error 2 "unknown command"
run "$mario" plan "$example"
check "plan without -o → 2" one_line_error 2 "needs -o"

# The tuner: a winner with its plan and launch bundle; bad arguments; nothing that fits.
run "$mario" tune "$root/resources/examples/llama2-13b-1f1b.config.json" --devices 16 --memory 80G --threads 2 --top 3 -o "$work/best.mario.json" --export "$work/bundle"
check "tune ranks candidates" grep -q "^   1  " "$work/out"
check "tune writes the winner's plan" test -s "$work/best.mario.json"
check "tune exports a launch bundle" test -x "$work/bundle/launch_torchrun.sh" -a -x "$work/bundle/launch_slurm.sh" -a -s "$work/bundle/megatron_args.txt"
run "$mario" validate "$work/best.mario.json"
check "the winner's plan is valid" test "$rc" = 0
run "$mario" tune "$root/resources/examples/llama2-13b-1f1b.config.json" --devices 16 --json --top 2
check "tune --json has a best candidate" grep -q '"best"' "$work/out"
run "$mario" tune "$root/resources/examples/llama2-13b-1f1b.config.json" --memory lots
check "bad --memory → 2" one_line_error 2 "expected a size like 40G"
run "$mario" tune "$root/resources/examples/figure2.config.json"
check "tuning unit costs → 2" one_line_error 2 "unit costs"
run "$mario" tune "$root/resources/examples/llama2-13b-1f1b.config.json" --devices 4 --memory 5G
check "nothing fits → 4 with the closest miss" one_line_error 4 "nothing fits"

# A hand-made deadlock: device 0 waits for the gradient before sending the activation.
cat >"$work/deadlock.mario.json" <<'JSON'
{"format": "mario-plan", "version": 1,
 "stages": [{"index": 0, "device": 0, "forward_ms": 1, "backward_ms": 2},
            {"index": 1, "device": 1, "forward_ms": 1, "backward_ms": 2}],
 "devices": [{"index": 0, "program": ["0F0", "0RECV_B0", "0SEND_F0", "0B0"]},
             {"index": 1, "program": ["1RECV_F0", "1F0", "1B0", "1SEND_B0"]}]}
JSON
run "$mario" simulate "$work/deadlock.mario.json"
check "deadlock → 3 naming blocked devices" one_line_error 3 "device 0 blocked at 0RECV_B0 .* waiting for 1SEND_B0 from device 1.*device 1 blocked at 1RECV_F0"

# The tuner counts each candidate once: GPT-3 13B's search, its text line against its JSON.
# Simulated once, pruned and refused add up to the candidates; the best few refined are
# simulations, not more candidates (it said "410 candidates: 110 simulated, 308 pruned").
run "$mario" tune "$gpt3" --json --top 1
candidates=$(json_number candidates); simulations=$(json_number simulated)
pruned=$(json_number pruned); refined=$(json_number refined)
run "$mario" tune "$gpt3" --top 1
line=$(head -1 "$work/out")
check "tune's text counts the JSON's candidates ($line)" grep -q "^$candidates candidates: " <<<"$line"
once=$(sed -n 's/^[0-9]* candidates: \([0-9]*\) simulated, \([0-9]*\) pruned.*/\1 \2/p' <<<"$line")
check "tune's simulated once and pruned are the JSON's ($once)" test "$once" = "$((simulations - refined)) $pruned"
check "tune's simulated and pruned are no more than the candidates" test $((simulations - refined + pruned)) -le "$candidates"
check "tune names the refined apart" grep -q "; the best $refined simulated again with every pass; $simulations simulations in" <<<"$line"
check "tune refined a few" test "$refined" -gt 0

# The tuner, narrowed: only the named schemes, depths and micro-batch sizes, and the best of each.
run "$mario" tune "$gpt3" --devices 64 --schemes 1f1b,chimera --pp 16-32 --micro-batch-sizes 1 --json
check "tune filters keep to the named schemes" test -z "$(grep -o '"scheme": "[^"]*"' "$work/out" | grep -v '"1f1b"\|"chimera"')"
check "tune filters keep to pp 16-32" test -z "$(grep -o '"pp": [0-9]*' "$work/out" | grep -v '"pp": 16\|"pp": 32')"
check "tune lists the best of each scheme" test "$(grep -c '"label"' <<<"$(sed -n '/best_per_scheme/,/\]/p' "$work/out")")" = 2
run "$mario" tune "$gpt3" --schemes nope
check "tune --schemes nope → 2 naming it" one_line_error 2 'unknown scheme "nope"'

# --passes: the checkpointed ("+mario") candidates run only the passes named, the winner's plan
# is made with exactly them, and its step is the one ranked; none searches without checkpointing.
run "$mario" tune "$gpt3" --schemes 1f1b,interleaved --passes checkpoint,overlap,redundancy --threads 2 --json \
    --top 3 -o "$work/tuned.mario.json"
ranked=$(json_number step_ms)
check "tune --passes: the best checkpoints" grep -q '"label": "[^"]*+mario"' "$work/out"
check "tune --passes: the winner's plan ran the passes named" test \
    "$(sed -n '/"passes_applied"/,/\]/p' "$work/tuned.mario.json" | grep -o '"[a-z-]*"' | tr -d '"' | tr '\n' ,)" \
    = "checkpoint,overlap,redundancy,"
run "$mario" simulate "$work/tuned.mario.json" --json
check "tune --passes: the winner's plan steps as ranked ($ranked ms)" num_eq "$(json_number makespan)" "$ranked"
run "$mario" tune "$root/resources/examples/llama2-13b-1f1b.config.json" --passes none --threads 2 --json --top 5
check "tune --passes none: no checkpointed candidate" test -z "$(grep -o '"checkpoint": true' "$work/out")" \
    -a -n "$(grep -o '"checkpoint": false' "$work/out")"
run "$mario" tune "$gpt3" --passes overlap,hide
check "tune --passes without checkpoint → 2 saying so" one_line_error 2 '--passes: .*needs checkpoint'
run "$mario" tune "$gpt3" --passes bogus
check "tune --passes bogus → 2 naming it" one_line_error 2 '--passes: unknown pass "bogus"'

finish cli_end_to_end
