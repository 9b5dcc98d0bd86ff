#!/usr/bin/env bash
# `mario sweep` and `mario capacity` through the real binary: every row of `sweep --json` equals
# `mario simulate --json` of the same config edited by hand; capacity's answers equal a scan of
# every grid value with `mario simulate`; bad input is one line with exit 2 (4 when nothing fits);
# --csv and --plot write their files.
# Usage: sweep_cli.sh MARIO_BINARY REPO_ROOT
source "$(dirname "$0")/harness.bash"

# GPT-3 1.6B on four A100-40G in a pipeline, a 20 GB limit: some points fit, some do not.
cat >"$work/base.config.json" <<'JSON'
{"format": "mario-config", "version": 1, "name": "sweep cli", "model": "gpt3-1.6b", "hardware": "a100-40g",
 "memory_limit_gb": 20, "passes": "none",
 "parallel": {"scheme": "1f1b", "pp": 4, "micro_batch_size": 1, "global_batch_size": 16}}
JSON
base="$work/base.config.json"

# Sweep rows against simulate: the hand edit sets the knob, the scheme (and chunks) and passes.
"$mario" sweep "$base" --vary micro_batch_size=1,2,3,4 --schemes 1f1b,interleaved:2,gpipe --passes 'none;all' \
    --json >"$work/sweep.json"
check "sweep --json exits 0" test $? = 0
cat >"$work/compare.py" <<'PY'
import json, subprocess, sys
mario, base_path, sweep_path, work = sys.argv[1:5]
base = json.load(open(base_path))
rows = json.load(open(sweep_path))["points"]
bad = compared = refused = 0
for i, row in enumerate(rows):
    cfg = json.loads(json.dumps(base))
    cfg["parallel"]["micro_batch_size"] = int(row["values"]["parallel.micro_batch_size"])
    cfg["parallel"]["scheme"] = row["scheme"]
    if row["scheme"] == "interleaved":
        cfg["parallel"]["chunks"] = 2
    cfg["passes"] = row["passes"] if row["refusal"] is None else ("none" if i % 2 == 0 else "all")
    path = f"{work}/point{i}.config.json"
    json.dump(cfg, open(path, "w"))
    done = subprocess.run([mario, "simulate", path, "--json"], capture_output=True, text=True)
    if row["refusal"] is not None:
        refused += 1
        # The file is refused too, with the same reason after its path.
        if done.returncode != 2 or done.stderr.strip() != f"mario: {path}: {row['refusal']}":
            print(f"point {i}: sweep refused ({row['refusal']}) but simulate said {done.returncode}: {done.stderr.strip()}")
            bad += 1
        continue
    sim = json.loads(done.stdout)
    compared += 1
    for key in ("makespan", "samples_per_s", "tokens_per_s", "mfu", "bubble_ratio", "fits_memory"):
        if sim[key] != row[key]:
            print(f"point {i}: {key} sweep {row[key]} simulate {sim[key]}")
            bad += 1
    peaks = [d["peak_memory_bytes"] for d in sim["devices"]]
    if peaks != [d["peak_memory_bytes"] for d in row["devices"]] or max(peaks) != row["peak_memory_bytes"]:
        print(f"point {i}: peaks differ")
        bad += 1
print(f"{compared} points compared, {refused} refusals compared, {bad} differences")
sys.exit(1 if bad or compared < 12 or refused < 6 else 0)
PY
check "every sweep row equals mario simulate of the hand-edited config" \
    python3 "$work/compare.py" "$mario" "$base" "$work/sweep.json" "$work"

# Capacity against a scan of every grid value with mario simulate.
"$mario" capacity "$base" --grow model.sequence_length=512:8192:512 --schemes 1f1b,gpipe --passes 'none;all' \
    --json >"$work/capacity.json"
check "capacity --json exits 0" test $? = 0
cat >"$work/scan.py" <<'PY'
import json, subprocess, sys
mario, base_path, capacity_path, work = sys.argv[1:5]
base = json.load(open(base_path))
answers = json.load(open(capacity_path))["answers"]
bad = 0
for k, answer in enumerate(answers):
    last_fit, first_over = None, None
    for seq in range(512, 8193, 512):
        cfg = json.loads(json.dumps(base))
        cfg["model"] = json.load(open(f"{sys.argv[5]}/profiles/models/gpt3-1.6b.json"))
        for key in ("format", "version", "notes"):
            cfg["model"].pop(key, None)
        cfg["model"]["sequence_length"] = seq
        cfg["parallel"]["scheme"] = answer["scheme"]
        cfg["passes"] = answer["passes"]
        path = f"{work}/scan{k}_{seq}.config.json"
        json.dump(cfg, open(path, "w"))
        sim = json.loads(subprocess.run([mario, "simulate", path, "--json"], capture_output=True, text=True).stdout)
        if sim["fits_memory"]:
            last_fit = seq
        else:
            first_over = seq
            break
    over = answer["first_over"]["values"]["model.sequence_length"] if answer["first_over"] else None
    if answer["largest"] != last_fit or over != first_over or answer["violations"]:
        print(f"{answer['scheme_choice']} {answer['passes']}: capacity {answer['largest']} (next {over}), "
              f"scan {last_fit} (next {first_over}), violations {answer['violations']}")
        bad += 1
print(f"{len(answers)} answers scanned, {bad} differences")
sys.exit(1 if bad or len(answers) != 4 else 0)
PY
check "capacity equals a scan with mario simulate" \
    python3 "$work/scan.py" "$mario" "$base" "$work/capacity.json" "$work" "$root"

# The files: CSV rows (a header and one line per point), an SVG chart with one line per series.
"$mario" sweep "$base" --vary micro_batch_size=1,2,4 --passes 'none;all' --csv "$work/rows.csv" \
    --plot "$work/chart.svg" --metric peak >"$work/table.txt"
check "sweep --csv writes a header and 6 rows" test "$(wc -l <"$work/rows.csv")" = 7
check "the CSV names the knob by its config key" grep -q '^parallel.micro_batch_size,scheme,passes,makespan' "$work/rows.csv"
check "sweep --plot writes an SVG" grep -q '^<svg xmlns="http://www.w3.org/2000/svg"' "$work/chart.svg"
check "the chart draws the memory limit" grep -q 'memory limit 20.00 GB' "$work/chart.svg"
check "the table is printed with the other outputs" grep -q '6 points (0 refused)' "$work/table.txt"
check "sweep --help names the knobs" sh -c "'$mario' sweep --help | grep -q 'KNOBS'"
check "capacity --help" sh -c "'$mario' capacity --help | grep -q 'mario capacity CONFIG --grow'"

# Bad input: one line, exit 2; nothing fits: exit 4.
expect_one_line "an unknown knob lists the valid ones" 2 'unknown knob "micro_batch" (expected one of parallel.micro_batch_size' \
    "$mario" sweep "$base" --vary micro_batch=1,2
expect_one_line "a value that is not a number" 2 '\-\-vary: parallel.micro_batch_size: "two" is not a number' \
    "$mario" sweep "$base" --vary micro_batch_size=1,two
expect_one_line "a range that runs backwards" 2 "the range's MAX is below its MIN" \
    "$mario" sweep "$base" --vary micro_batch_size=8:1
expect_one_line "--vary without =" 2 'expected KEY=V1,V2' "$mario" sweep "$base" --vary micro_batch_size
expect_one_line "no --vary" 2 'a sweep needs a knob' "$mario" sweep "$base"
expect_one_line "three knobs" 2 'one or two knobs' \
    "$mario" sweep "$base" --vary pp=2 --vary dp=1 --vary tp=1
expect_one_line "an unknown scheme" 2 '\-\-schemes: unknown scheme "zigzag"' \
    "$mario" sweep "$base" --vary pp=2 --schemes zigzag
expect_one_line "a bad pass set" 2 '\-\-passes: pass set "bogus"' "$mario" sweep "$base" --vary pp=2 --passes 'none;bogus'
expect_one_line "--plot as PNG" 2 'mario writes SVG only' "$mario" sweep "$base" --vary pp=2 --plot "$work/x.png"
expect_one_line "every point refused" 2 'every point was refused; the first: model.layers' \
    "$mario" sweep "$base" --vary layers=1,2
expect_one_line "capacity of a knob that does not grow memory" 2 'parallel.pp: does not grow memory' \
    "$mario" capacity "$base" --grow pp
expect_one_line "capacity without --grow" 2 'capacity needs --grow' "$mario" capacity "$base"
expect_one_line "capacity where nothing fits" 4 'nothing fits: model.sequence_length 65536' \
    "$mario" capacity "$base" --grow sequence_length=65536:131072:65536

finish sweep_cli
