#!/usr/bin/env bash
# Fails (exit 1) when a tracked C++ source is not as clang-format (the repository's .clang-format)
# would write it, listing each such file; run `clang-format -i FILE` to fix one. The planted files
# of tests/data are inputs, not sources, and are left as they are.
#   scripts/check-format.sh [CLANG_FORMAT]
set -euo pipefail
cd "$(dirname "$0")/.."
tool=${1:-clang-format}
if ! command -v "$tool" >/dev/null 2>&1; then
    echo "check-format: $tool is not installed (apt-get install clang-format)" >&2
    exit 2
fi
bad=()
while IFS= read -r -d '' f; do
    "$tool" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files -z -- '*.h' '*.cpp' ':!:tests/data/**')
if [ ${#bad[@]} -gt 0 ]; then
    printf 'check-format: %d file(s) differ from clang-format:\n' "${#bad[@]}" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
fi
echo "check-format: $(git ls-files -- '*.h' '*.cpp' ':!:tests/data/**' | wc -l) files as clang-format writes them"
