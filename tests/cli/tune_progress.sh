#!/usr/bin/env bash
# mario tune off a terminal: a progress line on stderr every --progress-every seconds, counting
# up to the total its result reports; a bad interval is one line naming the option, exit 2.
# usage: tune_progress.sh MARIO ROOT
source "$(dirname "$0")/harness.bash"

chimera="$root/resources/examples/gpt3-13b-chimera.config.json"
for bad in 0 -1 -0.5 nan inf abc 5s 1e999 86401 ""; do
    expect_one_line "--progress-every \"$bad\"" 2 \
        "^mario: --progress-every: expected a number in (0, 86400\] (got \"$bad\")$" \
        "$mario" tune "$chimera" --progress-every "$bad"
done
expect_one_line "--progress-every without a value" 2 "^mario: option --progress-every needs a value$" \
    "$mario" tune "$chimera" --progress-every

# GPT-3 13B on 64 GPUs with TP, one thread: about 1,500 candidates, tenths of a second even on a
# fast machine, so a line every 2 ms gives many. stderr is a file here, never a terminal.
"$mario" tune "$chimera" --devices 64 --tp --threads 1 --top 1 --progress-every 0.002 \
    >"$work/text.out" 2>"$work/text.err"
check "tune with progress lines succeeds" test $? = 0
"$mario" tune "$chimera" --devices 64 --tp --threads 1 --top 1 --progress-every 0.002 --json \
    >"$work/json.out" 2>"$work/json.err"
check "tune --json with progress lines succeeds" test $? = 0

# The totals the result reports: "N candidates: …; the best K simulated again with every pass".
summary=$(head -n 1 "$work/text.out")
candidates=$(sed -n 's/^\([0-9]*\) candidates: .*/\1/p' <<<"$summary")
refined=$(sed -n 's/.*; the best \([0-9]*\) simulated again with every pass;.*/\1/p' <<<"$summary")
check "the result counts candidates ($summary)" test -n "$candidates"
check "the result counts refined candidates ($summary)" test -n "$refined"
json_number() { sed -n "s/^  \"$1\": \([0-9.e+-]*\),\{0,1\}$/\1/p" "$work/json.out"; }
check "--json counts the text's candidates" test "$(json_number candidates)" = "$candidates"
check "--json counts the text's refined" test "$(json_number refined)" = "$refined"

# Each line is either "tune: E/T candidates after S s, best X samples/s" or, refining the best few,
# "tune: T candidates, refining the best: E/R after S s, best X samples/s". The counts rise line by
# line (refining after screening), the seconds never fall, the totals are the result's, and the
# last line is where the search ended: every refined candidate (or every candidate).
# check_lines FILE prints nothing and succeeds when all of that holds, else says the first miss.
check_lines() {
    awk -v total="$candidates" -v refined="$refined" '
        function bad(why) { print FILENAME ": line " NR ": " why ": " $0; failed = 1; exit 1 }
        {
            if (match($0, /^tune: [0-9]+\/[0-9]+ candidates after [0-9.]+ s, best [0-9]+\.[0-9][0-9] samples\/s$/)) {
                split($2, c, "/"); phase = 1; done = c[1]; of = c[2]; seconds = $5
                if (of != total) bad("total " of " is not the result total " total)
            } else if (match($0, /^tune: [0-9]+ candidates, refining the best: [0-9]+\/[0-9]+ after [0-9.]+ s, best [0-9]+\.[0-9][0-9] samples\/s$/)) {
                split($7, c, "/"); phase = 2; done = c[1]; of = c[2]; seconds = $9
                if ($2 != total) bad("candidates " $2 " are not the result total " total)
                if (of != refined) bad("refining " of " is not the result refined count " refined)
            } else bad("not a progress line")
            if (done < 1 || done > of) bad("count " done " outside 1.." of)
            if (NR > 1 && phase < lastPhase) bad("screening after refining")
            if (NR > 1 && phase == lastPhase && done <= lastDone) bad("count " done " does not rise from " lastDone)
            if (NR > 1 && seconds + 0 < lastSeconds + 0) bad("seconds " seconds " fall from " lastSeconds)
            lastPhase = phase; lastDone = done; lastSeconds = seconds; lastOf = of; lines = NR
        }
        END {
            if (failed) exit 1
            if (lines < 2) { print FILENAME ": " lines + 0 " progress lines, expected at least 2"; exit 1 }
            if (lastDone != lastOf || (refined > 0 && lastPhase != 2))
                { print FILENAME ": the last line stops at " lastDone "/" lastOf; exit 1 }
        }' "$1"
}
check "text run: progress lines rise to the result's totals" check_lines "$work/text.err"
check "--json run: progress lines rise to the result's totals" check_lines "$work/json.err"
check "--json's stdout is the JSON alone" test "$(head -c 1 "$work/json.out")" = "{"

finish tune_progress
