#!/bin/sh
# The README's two commands and CI's test command are one definition: the README's test command
# appears verbatim in .ci/run, both commands use workflow presets that CMakePresets.json defines,
# and the app command opens the binary the build makes. Exit 1 with the reason otherwise.
#   check-readme-commands.sh SOURCE_DIR
set -eu
src=$1
readme=$src/README.md
ci=$src/.ci/run
app=$(grep -m1 '^scripts/install-deps.sh && .*build/bin/railyard$' "$readme" || true)
test=$(grep -m1 '^scripts/install-deps.sh && cmake --workflow --preset [a-z]*$' "$readme" || true)
[ -n "$app" ] || { echo "README.md: no app command (install-deps, workflow, build/bin/railyard)"; exit 1; }
[ -n "$test" ] || { echo "README.md: no test command (install-deps and a workflow preset)"; exit 1; }
grep -qxF "$test" "$ci" || { echo ".ci/run does not run the README's test command: $test"; exit 1; }
for cmd in "$app" "$test"; do
    preset=$(printf '%s\n' "$cmd" | sed -n 's/.*cmake --workflow --preset \([a-z]*\).*/\1/p')
    grep -q "\"name\": \"$preset\"" "$src/CMakePresets.json" ||
        { echo "CMakePresets.json: no preset '$preset' (README: $cmd)"; exit 1; }
done
echo "README and .ci/run share: $test"
