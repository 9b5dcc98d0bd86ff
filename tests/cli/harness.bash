# Shared by the CLI test scripts (sourced; the .bash name keeps it out of ctest's *.sh glob).
# Sets mario, root, work (a temporary directory removed on exit), the pass/fail counters and
# example (Figure 2's config); `finish NAME` prints the counts and fails when any check did.
set -u
mario="$1"
root="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passed=0
example="$root/resources/examples/figure2.config.json"

finish() {
    echo "$1: $passed passed, $failures failed"
    [ "$failures" = 0 ]
}
