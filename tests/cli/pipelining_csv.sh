#!/usr/bin/env bash
# PyTorch pipelining CSVs through the real `mario` binary: files as PyTorch writes them import
# without a config and simulate; exports refuse what PyTorch cannot run, in one line and exit 2.
# Usage: pipelining_csv.sh MARIO_BINARY REPO_ROOT
source "$(dirname "$0")/harness.bash"

run() {  # run CMD... → sets rc; stdout in $work/out, stderr in $work/err
    "$@" >"$work/out" 2>"$work/err"; rc=$?
}
json_number() {  # json_number KEY: first "KEY": value in $work/out
    grep -o "\"$1\": *[-0-9.e+]*" "$work/out" | head -1 | sed 's/.*: *//'
}
num_eq() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 == b + 0) }'; }
one_line_error() { [ "$rc" = "$1" ] && [ "$(wc -l <"$work/err")" = 1 ] && grep -q -- "$2" "$work/err"; }
says() { grep -q -- "$1" "$work/out"; }

# PyTorch's ScheduleZBVZeroBubble, 2 ranks, 4 micro-batches, as _dump_csv writes it (CRLF,
# the idle slot that starts rank 1 as an empty cell).
printf '%s\r\n' \
    '0F0,0F1,0F2,3F0,3I0,3W0,3F1,3I1,3W1,0F3,0I0,0W0,3F2,3I2,3W2,0I1,0W1,3F3,3I3,3W3,0I2,0W2,0I3,0W3' \
    ',1F0,2F0,1F1,2F1,2I0,2W0,1F2,1I0,1W0,2F2,2I1,2W1,1F3,1I1,1W1,2F3,2I2,2W2,1I2,2I3,1I3,1W2,2W3,1W3' \
    >"$work/zbv.csv"
run "$mario" import "$work/zbv.csv" -o "$work/zbv.mario.json"
check "ZBV imports without --config" test "$rc" = 0
check "import says what it wrote" says "wrote $work/zbv.mario.json (2 devices, 4 stages, 4 micro-batches)"
check "import notes the unit costs" says "^note: unit costs: forward 1 ms, backward 2 ms"
placement() {  # placement PLAN: "stage:device ..." from the plan's stages
    tr -d ' \n' <"$1" | grep -o '"device":[0-9]*,"forward_ms":[0-9.]*,"index":[0-9]*' |
        sed 's/"device":\([0-9]*\),.*"index":\([0-9]*\)/\2:\1/' | tr '\n' ' '
}
check "the V placement: rank 0 holds stages 0 and 3, rank 1 stages 1 and 2" \
    test "$(placement "$work/zbv.mario.json")" = "0:0 1:1 2:1 3:0 "
run "$mario" validate "$work/zbv.mario.json"
check "imported ZBV is valid" test "$rc" = 0
run "$mario" simulate "$work/zbv.mario.json" --json
check "imported ZBV simulates" test "$rc" = 0
imported=$(json_number makespan)
# Mario's own ZBV (it follows PyTorch's algorithm) on the same unit costs: the same makespan.
sed 's/"devices": 4/"devices": 2/; s/"scheme": "1f1b", "pp": 4/"scheme": "zbv", "pp": 2/' "$example" >"$work/zbv.config.json"
run "$mario" simulate "$work/zbv.config.json" --passes none --json
check "imported ZBV = Mario's ZBV ($imported)" num_eq "$(json_number makespan)" "$imported"
run "$mario" import "$work/zbv.csv" --config "$work/zbv.config.json" -o "$work/zbv-config.mario.json"
check "ZBV imports on a ZBV config" test "$rc" = 0
run "$mario" import "$work/zbv.csv" --config "$example" -o "$work/wrong.mario.json"
check "a config of other size → 2" one_line_error 2 "zbv.csv: 2 ranks (lines), but .*figure2.config.json has 4 devices"
sed 's/"scheme": "zbv"/"scheme": "interleaved", "chunks": 2/' "$work/zbv.config.json" >"$work/w.config.json"
run "$mario" import "$work/zbv.csv" --config "$work/w.config.json" -o "$work/wrong.mario.json"
check "a config placing stages elsewhere → 2" one_line_error 2 "stage 2: the CSV puts it on rank 1 (line 2), .*w.config.json on device 0"

# PyTorch's lowered DualPipeV (compute_comms): overlapped pairs, FSDP, communication, REDUCE_GRAD.
printf '%s\r\n' \
    '0UNSHARD,3UNSHARD,0F0,0SEND_F0,0F1,0SEND_F1,3RECV_F0,0F2,0SEND_F2,3F0,3RECV_F1,3I0,3SEND_B0,3W0,3F1,3RECV_F2,0RECV_B0,(0F3;3B1)OVERLAP_F_B,0SEND_F3,3SEND_B1,(3F2;0B0)OVERLAP_F_B,3RECV_F3,0RECV_B1,3B2,3SEND_B2,(3F3;0B1)OVERLAP_F_B,0RECV_B2,3B3,3SEND_B3,3REDUCE_GRAD,0RECV_B3,3RESHARD,0I2,0W2,0I3,0W3,0REDUCE_GRAD,0RESHARD' \
    '1UNSHARD,2UNSHARD,1RECV_F0,1F0,1RECV_F1,2F0,2SEND_F0,1RECV_F2,1F1,2F1,2SEND_F1,2RECV_B0,1F2,2B0,(2F2;1B0)OVERLAP_F_B,2SEND_F2,1SEND_B0,1RECV_F3,2RECV_B1,(1F3;2B1)OVERLAP_F_B,(2F3;1B1)OVERLAP_F_B,2SEND_F3,1SEND_B1,2RECV_B2,2B2,1B2,1SEND_B2,2RECV_B3,2I3,1I3,1SEND_B3,2W3,2REDUCE_GRAD,2RESHARD,1W3,1REDUCE_GRAD,1RESHARD' \
    >"$work/dualpipev.csv"
run "$mario" import "$work/dualpipev.csv" -o "$work/dualpipev.mario.json"
check "lowered DualPipeV imports" test "$rc" = 0
check "the plan keeps the 6 overlapped pairs" test "$(grep -o 'OVERLAP_F_B' "$work/dualpipev.mario.json" | wc -l)" = 6
check "note: FSDP dropped" says "^note: 8 UNSHARD/RESHARD actions dropped"
check "note: communication dropped" says "^note: 32 communication cells"
check "note: REDUCE_GRAD dropped" says "^note: 4 REDUCE_GRAD cells dropped"
run "$mario" simulate "$work/dualpipev.mario.json" --json
check "imported DualPipeV simulates" test "$rc" = 0 -a -n "$(json_number makespan)"

# A malformed order: one line naming the line, the column and the action.
printf '0F0,0F1,0F2,0F3,0B0,0B1,0B2,0B3\n1F0,1B0,1F1,1B1,1F2,1B2,None,,1B3\n' >"$work/nofwd.csv"
run "$mario" import "$work/nofwd.csv" -o "$work/nofwd.mario.json"
check "backward without forward → 2" one_line_error 2 "nofwd.csv: line 2: stage 1 micro-batch 3 has a backward (column 9, 1B3) but no forward"
printf '0F0,0B0\n1F0,1B0,0F1\n' >"$work/tworanks.csv"
run "$mario" import "$work/tworanks.csv" -o "$work/tworanks.mario.json"
check "a stage on two ranks → 2" one_line_error 2 "line 2, column 3: 0F1 puts stage 0 on rank 1, but line 1, column 1 (0F0) put it on rank 0"
run "$mario" import "$work/zbv.csv"
check "import without -o → 2" one_line_error 2 "import needs -o PLAN"

# Export: what PyTorch cannot run is refused in one line.
run "$mario" export "$example" --csv "$work/fig2.csv"
check "recomputation → 2 with the way out" one_line_error 2 \
    "figure2.config.json: the plan recomputes 12 forwards (R); PyTorch's pipelining has no recompute action: add --drop-recompute to write the order without them"
check "nothing written on refusal" test ! -e "$work/fig2.csv"
# Without R, Figure 2's preposed forwards would keep whole activations: prepose is left out
# (1F1B then holds at most 4 micro-batches on device 0) and the output says so.
run "$mario" export "$example" --csv "$work/fig2.csv" --drop-recompute
check "--drop-recompute counts what it dropped and leaves prepose out" \
    says "wrote $work/fig2.csv (12 recomputations (R) dropped; prepose left out"
check "no R left" test -z "$(grep -o '[0-9]R[0-9]' "$work/fig2.csv")"
check "the export says it wrote them" says "wrote $work/fig2.torchtitan.args (torchtitan: 1F1B, 1 stage per rank, 4 micro-batches)"
run "$mario" export "$example" --passes none --csv "$work/plain.csv"
check "and the order is 1F1B's own" cmp -s "$work/fig2.csv" "$work/plain.csv"
check "torchtitan settings beside the CSV" \
    grep -qx -- "--parallelism.pipeline_parallel_schedule=1F1B" "$work/fig2.torchtitan.args"
# A plan file saved after prepose cannot be undone: refused with the peak it would imply.
"$mario" plan "$example" -o "$work/fig2.mario.json" >/dev/null
run "$mario" export "$work/fig2.mario.json" --csv "$work/saved.csv" --drop-recompute
check "a saved preposed order → 2 with its peak" one_line_error 2 \
    "fig2.mario.json: the order was saved after prepose, which runs forwards early because they are checkpointed: without its 12 recomputations, device 0's micro-batches would hold up to"
run "$mario" export "$work/fig2.mario.json" --csv "$work/saved.csv"
check "and without the flag the refusal says the flag would not do" one_line_error 2 "--drop-recompute would not do"
# import --config: the CSV's micro-batches must be the config's, as PyTorch requires.
printf '%s\n' '0F0,0F1,0B0,0B1' '1F0,1F1,1B0,1B1' >"$work/two.csv"
printf '{"format":"mario-config","version":1,"devices":2,"parallel":{"scheme":"1f1b","pp":2,"dp":1,"tp":1,"micro_batch_size":1},"unit_costs":{"forward":1,"backward":2,"recompute":1,"activation_bytes":1000,"checkpoint_bytes":10,"static_bytes":0},"microbatches":4}' >"$work/four.config.json"
run "$mario" import "$work/two.csv" --config "$work/four.config.json" -o "$work/two.mario.json"
check "import --config with other micro-batches → 2" one_line_error 2 "the CSV runs 2 micro-batches, $work/four.config.json 4"
run "$mario" export "$root/resources/examples/gpt3-13b-chimera.config.json" --passes none --csv "$work/chimera.csv"
check "Chimera → 2" one_line_error 2 "the plan has 2 stage chains; PyTorch's pipelining runs one chain (stages 0..S-1)"
run "$mario" export "$example" --passes none --csv "$work/comms.csv" --format compute_comms
check "compute_comms export" test "$rc" = 0
check "compute_comms has SEND/RECV and REDUCE_GRAD, no OPT" \
    test -n "$(grep -o '0SEND_F0' "$work/comms.csv")" -a -n "$(grep -o '1RECV_F0' "$work/comms.csv")" \
    -a "$(grep -o '[0-9]REDUCE_GRAD' "$work/comms.csv" | wc -l)" = 4 -a "$(grep -o 'WAIT_REDUCE_GRAD' "$work/comms.csv" | wc -l)" = 4 \
    -a -z "$(grep -o 'OPT' "$work/comms.csv")"
run "$mario" import "$work/comms.csv" --config "$example" -o "$work/comms.mario.json"
check "compute_comms imports on its config" test "$rc" = 0
run "$mario" simulate "$work/comms.mario.json" --json
check "and simulates to Figure 2's 21" num_eq "$(json_number makespan)" 21
run "$mario" export "$example" --csv "$work/x.csv" --format compute_graph
check "unknown format → 2" one_line_error 2 'unknown CSV format "compute_graph"'
run "$mario" export "$example" --chrome-trace "$work/t.json" --drop-recompute
check "--drop-recompute without --csv → 2" one_line_error 2 "go with --csv"
run "$mario" --help
check "help names the formats and --drop-recompute" test -n "$(grep -o 'compute_comms' "$work/out")" -a -n "$(grep -o 'drop-recompute' "$work/out")"

finish pipelining_csv
