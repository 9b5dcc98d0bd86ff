# Shared by the CLI test scripts (sourced; the .bash name keeps it out of ctest's *.sh glob).
# Sets mario, root, work (a temporary directory removed on exit), the pass/fail counters and
# example (Figure 2's config), `check` and `expect_one_line`; `finish NAME` prints the counts and
# fails when any check did.
set -u
mario="$1"
root="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passed=0
example="$root/resources/examples/figure2.config.json"

check() {  # check NAME COMMAND...: passes when the command succeeds
    local name="$1"; shift
    if "$@"; then passed=$((passed + 1)); else echo "FAIL: $name"; failures=$((failures + 1)); fi
}

# expect_one_line NAME CODE PATTERN CMD...: the command exits CODE with one line on stderr
# that holds PATTERN (the tools' rule for every refusal).
expect_one_line() {
    local name="$1" code="$2" pattern="$3"; shift 3
    "$@" >"$work/out" 2>"$work/err"; local rc=$?
    if [ "$rc" = "$code" ] && [ "$(wc -l <"$work/err")" = 1 ] && grep -q -- "$pattern" "$work/err"; then
        passed=$((passed + 1))
    else
        echo "FAIL: $name (exit $rc): $(head -c 300 "$work/err")"
        failures=$((failures + 1))
    fi
}

finish() {
    echo "$1: $passed passed, $failures failed"
    [ "$failures" = 0 ]
}
