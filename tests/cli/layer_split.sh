#!/usr/bin/env bash
# parallel.layer_split through the real `mario` binary: the plan file carries each stage's layers
# (an explicit split as written, the balanced one placing every layer, the searched one as
# chosen with --passes), simulate and sweep read the key (`--vary
# parallel.layer_split=even,balanced,search`), and bad values end in one line, exit 2.
# Usage: layer_split.sh MARIO_BINARY REPO_ROOT
source "$(dirname "$0")/harness.bash"

config() {  # config NAME SPLIT-JSON: GPT-3 1.6B (32 layers) in 1F1B on 4 A100s
    local split=""
    [ -n "$2" ] && split=", \"layer_split\": $2"
    cat >"$work/$1.config.json" <<JSON
{"format": "mario-config", "version": 1, "model": "gpt3-1.6b", "hardware": "a100-40g", "devices": 4,
 "parallel": {"scheme": "1f1b", "pp": 4, "micro_batch_size": 1, "global_batch_size": 8$split}}
JSON
    echo "$work/$1.config.json"
}

layers_of() {  # layers_of PLAN: "begin-end ..." of every stage, in stage order
    python3 -c 'import json,sys; print(" ".join("%d-%d" % tuple(s["layers"]) for s in json.load(open(sys.argv[1]))["stages"]))' "$1"
}
step_of() {  # step_of CONFIG: the simulated step in ms, with no passes
    "$mario" simulate "$1" --json | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["makespan"], 6))'
}

even=$(config even "")
explicit=$(config explicit "[6, 9, 9, 8]")
balanced=$(config balanced '"balanced"')
check "plan of the even split" "$mario" plan "$even" -o "$work/even.mario.json"
check "even split 8 8 8 8" test "$(layers_of "$work/even.mario.json")" = "0-8 8-16 16-24 24-32"
check "plan of an explicit split" "$mario" plan "$explicit" -o "$work/explicit.mario.json"
check "explicit split as written" test "$(layers_of "$work/explicit.mario.json")" = "0-6 6-15 15-24 24-32"
"$mario" simulate "$explicit" --json >"$work/explicit.json"
check "simulate --json names each stage's layers as written" test "$(layers_of "$work/explicit.json")" = "0-6 6-15 15-24 24-32"
check "plan of the balanced split" "$mario" plan "$balanced" -o "$work/balanced.mario.json"
counts=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["stages"]; print(",".join(str(x["layers"][1]-x["layers"][0]) for x in s))' "$work/balanced.mario.json")
check "balanced places all 32 layers, not evenly" python3 -c "import sys; c=[$counts]; sys.exit(not (sum(c) == 32 and c != [8, 8, 8, 8] and min(c) >= 1))"
# The balanced split written out explicitly is the same plan: one path from counts to stages.
same=$(config same "[$counts]")
check "balanced equals its counts written out" test "$(step_of "$balanced")" = "$(step_of "$same")"
check "validate the balanced plan" "$mario" validate "$work/balanced.mario.json"

# search with --passes all,hide: the split it reports is the plan's, the plan file read back
# simulates to the same step, and that step is no slower than even's or balanced's with all,hide.
search=$(config search '"search"')
step_with() {  # step_with FILE PASSES
    "$mario" simulate "$1" --passes "$2" --json | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["makespan"], 6))'
}
"$mario" simulate "$search" --passes all,hide --json >"$work/search.json"
check "simulate with search" test $? = 0
chosen=$(python3 -c 'import json,sys; print(",".join(map(str, json.load(open(sys.argv[1]))["layer_split_search"]["counts"])))' "$work/search.json")
check "plan of the searched split" "$mario" plan "$search" --passes all,hide -o "$work/search.mario.json"
planned=$(python3 -c 'import json,sys; print(",".join(str(x["layers"][1]-x["layers"][0]) for x in json.load(open(sys.argv[1]))["stages"]))' "$work/search.mario.json")
check "the plan holds the counts simulate reported" test "$planned" = "$chosen"
searched_step=$(step_with "$search" all,hide)
# mario plan writes the schedule after its passes: read back, it is the step without more passes.
check "the plan file re-simulates to the searched step" test "$(step_with "$work/search.mario.json" none)" = "$searched_step"
check "search no slower than even or balanced" python3 -c "import sys; s=$searched_step; sys.exit(not (s <= $(step_with "$even" all,hide) and s <= $(step_with "$balanced" all,hide)))"

"$mario" sweep "$even" --vary parallel.layer_split=even,balanced,search --json >"$work/sweep.json" 2>"$work/err"
check "sweep over layer_split" test $? = 0
sweep_steps=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(str(round(p["makespan"], 6)) for p in d["points"]))' "$work/sweep.json" 2>/dev/null)
check "sweep's points are the three configs' steps" test "$sweep_steps" = "$(step_of "$even") $(step_of "$balanced") $(step_with "$search" none)"

expect_one_line "unknown word" 2 'parallel.layer_split: expected "even", "balanced", "search" or an array' \
    "$mario" simulate "$(config word '"middle"')"
expect_one_line "counts not adding up" 2 "parallel.layer_split: the counts add up to 31 layers, but model.layers is 32" \
    "$mario" simulate "$(config sum "[8, 8, 8, 7]")"
expect_one_line "sweep word" 2 'parallel.layer_split: "middle" is not one of even|balanced|search' \
    "$mario" sweep "$even" --vary parallel.layer_split=even,middle
finish layer_split
