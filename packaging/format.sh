#!/usr/bin/env bash
# Formats the tracked C++ sources (core, views, app, executor, tests) with the repository's
# .clang-format, so layout is settled by one tool instead of by hand and in review.
# The style was tuned to the existing code and written for clang-format 14; other versions
# may format a few constructs differently.
#
# Usage: packaging/format.sh           rewrite every file that differs, in place
#        packaging/format.sh --check   change nothing; list the files that differ, exit 1 if any
# Set CLANG_FORMAT to use another binary (default: clang-format).
set -euo pipefail

usage() {
    cat <<'USAGE'
Usage: packaging/format.sh           rewrite every file that differs, in place
       packaging/format.sh --check   change nothing; list the files that differ, exit 1 if any
Set CLANG_FORMAT to use another binary (default: clang-format).
USAGE
}

check=0
case "${1:-}" in
    "") ;;
    --check) check=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
esac
[[ $# -le 1 ]] || { usage >&2; exit 2; }

clang_format=${CLANG_FORMAT:-clang-format}
if ! command -v "$clang_format" >/dev/null 2>&1; then
    echo "format.sh: $clang_format not found (install clang-format 14 or set CLANG_FORMAT)" >&2
    exit 2
fi
version=$("$clang_format" --version | sed -n 's/.*version \([0-9][0-9]*\).*/\1/p')
if [[ "$version" != 14 ]]; then
    echo "format.sh: warning: $clang_format is version ${version:-unknown}; .clang-format was tuned for 14" >&2
fi

root=$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)
cd "$root"
[[ -f .clang-format ]] || { echo "format.sh: no .clang-format in $root" >&2; exit 2; }

files=()
while IFS= read -r -d '' file; do
    case "$file" in
        core/* | views/* | app/* | executor/* | tests/*) [[ -f "$file" ]] && files+=("$file") ;;
    esac
done < <(git ls-files -z -- '*.h' '*.cpp')

if [[ ${#files[@]} -eq 0 ]]; then
    echo "format.sh: no C++ files found" >&2
    exit 2
fi

if [[ $check -eq 0 ]]; then
    "$clang_format" --style=file -i -- "${files[@]}"
    echo "format.sh: formatted ${#files[@]} files"
    exit 0
fi

differ=()
for file in "${files[@]}"; do
    if ! "$clang_format" --style=file -- "$file" | cmp -s - "$file"; then differ+=("$file"); fi
done
if [[ ${#differ[@]} -gt 0 ]]; then
    echo "format.sh: ${#differ[@]} of ${#files[@]} files differ from .clang-format (run packaging/format.sh):" >&2
    printf '  %s\n' "${differ[@]}" >&2
    exit 1
fi
echo "format.sh: all ${#files[@]} files match .clang-format"
