#!/usr/bin/env bash
# Every kind of path a user can name, through the real `mario` binary (core/io/TextFile.h's one
# writer and one reader): `-o` onto a link, a FIFO, a device or a file that cannot be written
# whole; reads from devices, pipes and directories. Each used to replace the node, truncate the
# old file or read without end (issue 39).
# Usage: output_paths.sh MARIO_BINARY REPO_ROOT
source "$(dirname "$0")/harness.bash"

"$mario" plan "$example" -o "$work/reference.mario.json" >/dev/null

# A link stays a link; the file it names gets the plan (relative links from the link's folder).
echo old >"$work/real.json"
ln -s real.json "$work/link.json"
"$mario" plan "$example" -o "$work/link.json" >/dev/null
check "-o onto a link keeps the link" test -L "$work/link.json"
check "-o onto a link writes the file it names" cmp -s "$work/real.json" "$work/reference.mario.json"

# A FIFO is written through (what `-o >(gzip >x.gz)` names), never replaced by a regular file.
mkfifo "$work/fifo"
cat "$work/fifo" >"$work/from-fifo" &
"$mario" plan "$example" -o "$work/fifo" >/dev/null
wait
check "-o onto a FIFO writes through it" cmp -s "$work/from-fifo" "$work/reference.mario.json"
check "-o onto a FIFO leaves a FIFO" test -p "$work/fifo"

# A device is written through. As root, a node of our own with /dev/null's numbers stands in,
# so that a regression replaces a scratch node rather than the machine's /dev/null.
# A container that refuses to make or open nodes leaves root without a safe device: skipped.
null=/dev/null
if [ "$(id -u)" = 0 ]; then
    null=""
    if mknod "$work/null" c 1 3 2>/dev/null && (: >"$work/null") 2>/dev/null; then null="$work/null"; fi
fi
if [ -n "$null" ]; then
    check "-o $null succeeds" "$mario" plan "$example" -o "$null"
    check "-o $null leaves a device" test -c "$null"
fi
if [ -c /dev/full ] && (: >/dev/full) 2>/dev/null; then
    expect_one_line "-o /dev/full names the error" 2 'cannot write the plan to "/dev/full" (No space left on device)' \
        "$mario" plan "$example" -o /dev/full
    check "-o /dev/full leaves a device" test -c /dev/full
fi

# A write that fails part-way (a file-size limit stands in for a full disk) keeps the old file
# whole and leaves nothing beside it: the Chrome trace used to be truncated in place.
echo "the old trace" >"$work/trace.json"
( trap '' XFSZ; ulimit -f 1; "$mario" export "$work/reference.mario.json" --chrome-trace "$work/trace.json" ) \
    >"$work/out" 2>"$work/err"
check "a failed trace write exits 2" test "$?" = 2
check "a failed trace write says why" grep -q 'cannot write the Chrome trace to .*(File too large)' "$work/err"
check "a failed trace write keeps the old trace" grep -qx "the old trace" "$work/trace.json"
check "a failed trace write leaves no temporary" test "$(find "$work" -name '*.partial*' | wc -l)" = 0

expect_one_line "-o onto a directory" 2 "it is a directory" "$mario" plan "$example" -o "$work"

# Reads stop at the limit on devices; pipes read as files; a directory is named as one.
start=$SECONDS
expect_one_line "validate /dev/zero" 2 "/dev/zero: more than 256 MiB came from it (it is not a regular file)" \
    "$mario" validate /dev/zero
expect_one_line "import /dev/urandom" 2 "/dev/urandom: more than 256 MiB came from it" \
    "$mario" import /dev/urandom -o "$work/random.mario.json"
check "two device reads end within 60 s" test $((SECONDS - start)) -lt 60
check "a plan read from a pipe validates" "$mario" validate <(cat "$work/reference.mario.json")
expect_one_line "validate a directory" 2 "$work: is a directory, not a file" "$mario" validate "$work"

# `import` refuses a micro-batch past the limit at its cell, before any plan is built: a 70 MiB
# CSV of 1.95 M micro-batches took 18 s and 1.9 GB and wrote a plan `validate` refused.
python3 -c "print(','.join(f'0F{m},0B{m}' for m in range(16385)))" >"$work/many.csv"
expect_one_line "import of 16385 micro-batches" 2 'line 1, column 32769: instruction "0F16384": micro-batch 16384; a step runs at most 16384' \
    "$mario" import "$work/many.csv" -o "$work/many.mario.json"
check "nothing written for the refused import" test ! -e "$work/many.mario.json"

finish output_paths
