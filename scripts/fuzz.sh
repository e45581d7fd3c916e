#!/bin/sh
# Fuzzes the layout loader and the evaluation (fuzz/fuzz_layout.cpp) for SECONDS (default 300):
# configures the `fuzz` preset (clang, libFuzzer, AddressSanitizer, UBSan) in build-fuzz/, builds
# the target and runs it on one core, seeded from tests/data/fuzz/. Prints how many inputs ran.
# A finding is written to build-fuzz/findings/ (crash-*, timeout-*, oom-*): minimize it
# (fuzz_layout -minimize_crash=1 FILE), add it to tests/data/fuzz/crashers/ and a test row.
#
#   scripts/fuzz.sh [SECONDS]
#   FUZZ_ARGS="-jobs=2 -workers=2" scripts/fuzz.sh 600     # more libFuzzer options
set -eu

seconds=${1:-300}
case $seconds in
'' | *[!0-9]*)
    echo "usage: scripts/fuzz.sh [SECONDS]" >&2
    exit 2
    ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=build-fuzz
launcher=
command -v ccache >/dev/null 2>&1 && launcher=-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
cmake --preset fuzz $launcher >/dev/null
cmake --build --preset fuzz

# The working corpus grows in build-fuzz/; the seeds in git stay small.
mkdir -p "$build/corpus" "$build/findings"
log="$build/fuzz-$(date +%Y%m%d-%H%M%S).log"
echo "fuzzing for $seconds s; log: $log"
status=0
# shellcheck disable=SC2086
"$build/fuzz/fuzz_layout" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=3072 \
    -max_len=8192 -dict=fuzz/layout.dict -print_final_stats=1 \
    -artifact_prefix="$build/findings/" ${FUZZ_ARGS:-} \
    "$build/corpus" tests/data/fuzz/layout tests/data/fuzz/crashers >"$log" 2>&1 || status=$?

runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
echo "executions: ${runs:-?} (${secs:-?} per second), corpus: $(ls "$build/corpus" | wc -l) inputs"
if [ "$status" -ne 0 ]; then
    echo "the fuzzer stopped with status $status; the finding:"
    grep -E "^(==[0-9]+==ERROR|SUMMARY|fuzz_layout:)|runtime error|Test unit written" "$log" | head -n 20
    exit 1
fi
echo "no findings"
