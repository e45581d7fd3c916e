#!/bin/sh
# Fuzzes the layout loader and the evaluation (fuzz/fuzz_layout.cpp) for SECONDS (default 300):
# configures the `fuzz` preset (clang, libFuzzer, AddressSanitizer, UBSan) in build-fuzz/, builds
# the target and runs it on one core, seeded from tests/data/fuzz/. Prints how many inputs ran.
# A finding is written to build-fuzz/findings/ (crash-*, timeout-*, oom-*): minimize it
# (fuzz_layout -minimize_crash=1 FILE), add it to tests/data/fuzz/crashers/ and a test row.
#
#   scripts/fuzz.sh [SECONDS] [TARGET]
# TARGET: fuzz_layout (default), or an importer: fuzz_import_topo (nvidia-smi topo -m),
# fuzz_import_xml (NCCL topology and graph XML), fuzz_import_log (nccl-tests logs), seeded from
# tests/data/import/ and tests/data/fuzz/import-*/; or fuzz_catalog (a user's catalog file),
# seeded from tests/data/fuzz/catalog/.
#   FUZZ_ARGS="-jobs=2 -workers=2" scripts/fuzz.sh 600     # more libFuzzer options
set -eu

seconds=${1:-300}
target=${2:-fuzz_layout}
case $seconds in
'' | *[!0-9]*)
    echo "usage: scripts/fuzz.sh [SECONDS] [TARGET]" >&2
    exit 2
    ;;
esac
case $target in
fuzz_layout) seeds="tests/data/fuzz/layout tests/data/fuzz/crashers" dict="-dict=fuzz/layout.dict" ;;
fuzz_catalog) seeds="tests/data/fuzz/catalog" dict= ;;
fuzz_import_topo) seeds="tests/data/import/topo-m tests/data/fuzz/import-crashers tests/data/fuzz/import-hostile" dict= ;;
fuzz_import_xml) seeds="tests/data/import/nccl-topo-xml tests/data/import/nccl-graph-xml tests/data/fuzz/import-crashers tests/data/fuzz/import-hostile" dict= ;;
fuzz_import_log) seeds="tests/data/import/nccl-tests tests/data/fuzz/import-crashers tests/data/fuzz/import-hostile" dict= ;;
*)
    echo "scripts/fuzz.sh: unknown target $target" >&2
    exit 2
    ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=build-fuzz
launcher=
command -v ccache >/dev/null 2>&1 && launcher=-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
cmake --preset fuzz $launcher >/dev/null
cmake --build "$build" --target "$target"

# The working corpus grows in build-fuzz/; the seeds in git stay small.
corpus="$build/corpus"
[ "$target" = fuzz_layout ] || corpus="$build/corpus-$target"
mkdir -p "$corpus" "$build/findings"
log="$build/$target-$(date +%Y%m%d-%H%M%S).log"
echo "fuzzing for $seconds s; log: $log"
status=0
# shellcheck disable=SC2086
"$build/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=3072 \
    -max_len=16384 $dict -print_final_stats=1 \
    -artifact_prefix="$build/findings/" ${FUZZ_ARGS:-} \
    "$corpus" $seeds >"$log" 2>&1 || status=$?

runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
echo "$target executions: ${runs:-?} (${secs:-?} per second), corpus: $(ls "$corpus" | wc -l) inputs"
if [ "$status" -ne 0 ]; then
    echo "the fuzzer stopped with status $status; the finding:"
    grep -E "^(==[0-9]+==ERROR|SUMMARY|fuzz_layout:|fuzz_import:|fuzz_catalog:)|runtime error|Test unit written" "$log" | head -n 20
    exit 1
fi
echo "no findings"
