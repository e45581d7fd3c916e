#!/usr/bin/env bash
# Fails if the build or the tests used a file from a Debian package that scripts/install-deps.sh
# would not install on a bare Debian 12 machine. A machine that already holds the package (a
# developer's, or CI's) still catches it: the check does not look at what is installed, only at
# what was used and whether install-deps.sh's list (with its dependencies) brings it.
#
# Usage: scripts/check-deps.sh [--without PKG]... [--ld-debug DIR] [BUILD_DIR]
#   BUILD_DIR       a configured and built tree (default: build)
#   --ld-debug DIR  also check the ELF files that processes loaded, from LD_DEBUG=files output
#                   written with LD_DEBUG_OUTPUT=DIR/trace (see .ci/run)
#   --without PKG   check as if PKG were missing from install-deps.sh (to show the check works)
# Exit status: 0 when every package used is brought, 1 when one is not, 2 on usage errors, 77 when
# the check cannot run here (not Debian, or no apt package lists).
#
# What counts as used:
#   - every CMake file the configure read (the inputs of build.ninja's re-run rule),
#   - every header the compiler read (ninja -t deps),
#   - the compiler, CMake, Ninja and every program or library CMake found that build.ninja or a
#     test command names (FILEPATH entries of CMakeCache),
#   - every shared library the built programs need (ldd), and with --ld-debug every program and
#     plugin the test run started or loaded, with the libraries they need.
# The allowed set is the closure of install-deps.sh's packages (apt-cache depends --recurse, no
# recommends or suggests) plus the Essential and required packages every Debian system has.
set -euo pipefail
cd "$(dirname "$0")/.."
source_dir=$(pwd)

without=()
ld_debug=""
build=build
while [ $# -gt 0 ]; do
    case $1 in
        --without) without+=("$2"); shift 2 ;;
        --ld-debug) ld_debug=$2; shift 2 ;;
        -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "check-deps: unknown option $1" >&2; exit 2 ;;
        *) build=$1; shift ;;
    esac
done
[ -f "$build/build.ninja" ] || { echo "check-deps: $build/build.ninja not found (configure with -G Ninja first)" >&2; exit 2; }
build=$(cd "$build" && pwd)
# Exit 77 (a skip, for ctest) where the check cannot run: not Debian, or no package lists.
command -v apt-cache >/dev/null && command -v dpkg >/dev/null || { echo "check-deps: needs apt-cache and dpkg (Debian); not checked" >&2; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- The packages install-deps.sh names, minus --without --------------------------------------
scripts/install-deps.sh --list | sort -u > "$tmp/listed"
for w in "${without[@]}"; do
    grep -qx -- "$w" "$tmp/listed" || { echo "check-deps: --without $w: install-deps.sh does not name it" >&2; exit 2; }
    grep -vx -- "$w" "$tmp/listed" > "$tmp/listed.new" || true
    mv "$tmp/listed.new" "$tmp/listed"
done

# --- Their closure, with what every Debian system has (Essential and required packages) -------
dpkg-query -W -f='${Package} ${Essential} ${Priority}\n' |
    awk '$2 == "yes" || $3 == "required" {print $1}' > "$tmp/base"
apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances $(cat "$tmp/listed" "$tmp/base") 2>"$tmp/apt-err" |
    grep -v '^ ' | tr -d '<>' | sed 's/:.*//' > "$tmp/closure" || true
if ! grep -qx -- "$(head -n 1 "$tmp/listed")" "$tmp/closure"; then
    echo "check-deps: apt-cache knows none of install-deps.sh's packages (run apt-get update); not checked:" >&2
    head -n 3 "$tmp/apt-err" >&2
    exit 77
fi
sort -u -o "$tmp/closure" "$tmp/closure"

# --- The files the build and the tests used ----------------------------------------------------
outside() { grep -E '^/' | grep -v -e "^$source_dir/" -e "^$build/" || true; }
{
    # CMake inputs: the dependencies of build.ninja's re-run rule.
    awk '/^build build.ninja:/ {f = 1} f {print} f && !/\$$/ {exit}' "$build/build.ninja" |
        tr ' ' '\n' | outside
    # Headers the compiler read.
    ninja -C "$build" -t deps 2>/dev/null | sed -n 's/^ \{4\}//p' | outside
    # Programs and libraries CMake found that the build or the tests really use: those named in
    # build.ninja or in a test command (optional finds, such as CTest's valgrind, are not used).
    find "$build" -name CTestTestfile.cmake -exec cat {} + > "$tmp/commands"
    cat "$build/build.ninja" >> "$tmp/commands"
    sed -n 's/^[A-Za-z0-9_]*:FILEPATH=\(\/.*\)$/\1/p' "$build/CMakeCache.txt" | outside |
        while read -r f; do if grep -qF -- "$f" "$tmp/commands"; then echo "$f"; fi; done
    grep -E '^CMAKE_(COMMAND|CTEST_COMMAND):INTERNAL=' "$build/CMakeCache.txt" | sed 's/^[^=]*=//'
} | sort -u > "$tmp/files"

# ELF objects: the built programs, and with --ld-debug whatever the test run started or loaded.
# (One perl for every file, not a shell and a head each: perl-base is Essential on Debian.)
find "$build" -type f -perm -u+x -print0 |
    perl -0ne 'chomp; open(my $f, "<", $_) or next; read($f, my $h, 4); print "$_\n" if $h eq "\x7fELF"' \
    > "$tmp/elves"
if [ -n "$ld_debug" ]; then
    # binutils (ar, ranlib, ld) loads whatever plugins sit in its bfd-plugins directories, in
    # directory order; the build uses none of them (no LTO), so a plugin found there, and the
    # libraries only it pulled in, is what the machine happens to hold, not a dependency.
    for t in "$ld_debug"/*; do
        [ -f "$t" ] || continue
        awk '
            function base(p) { sub(/.*\//, "", p); return p }
            !match($0, /file=[^ ]+/) { next }
            {
                f = substr($0, RSTART + 5, RLENGTH - 5); b = base(f); by = ""
                if (match($0, /(needed by|dynamically loaded by) [^ ]+/)) {
                    by = substr($0, RSTART, RLENGTH); sub(/^[a-z ]* by /, "", by)
                }
                if (b in plugin) next
                if ((f ~ /\/bfd-plugins\// && $0 ~ /dynamically loaded by/) ||
                    (by != "" && base(by) in plugin)) { plugin[b] = 1; next }
                if (f ~ /^\//) print f
                if (by ~ /^\//) print by
            }' "$t"
    done | sort -u | outside |
        while read -r f; do if [ -e "$f" ]; then echo "$f"; fi; done |
        tee -a "$tmp/files" >> "$tmp/elves"
fi
# ldd takes many files at once (it prints each one's libraries under its name).
sort -u "$tmp/elves" | while read -r elf; do if [ -f "$elf" ]; then printf '%s\0' "$elf"; fi; done |
    xargs -0 -r ldd 2>/dev/null | grep -oE '=> /[^ ]+' | sed 's/^=> //' | sort -u | outside \
    >> "$tmp/files" || true
sort -u -o "$tmp/files" "$tmp/files"

# --- Which package each file came from ---------------------------------------------------------
# dpkg's own file lists (what dpkg -S reads), as one table. dpkg records some files under /lib and
# some under /usr/lib (merged /usr): try both, and the resolved path of a symlink.
# One awk over all the lists and one realpath over all the files, not a process for each (this
# part took minutes on CI's two cores).
awk '{pkg = FILENAME; sub(/.*\//, "", pkg); sub(/\.list$/, "", pkg); sub(/:.*/, "", pkg)
      print pkg "\t" $0}' /var/lib/dpkg/info/*.list > "$tmp/dpkg-files"
tr '\n' '\0' < "$tmp/files" | xargs -0 -r realpath -m -- > "$tmp/resolved"
paste "$tmp/files" "$tmp/resolved" | awk -F'\t' '
    function out(f, p) {
        print f "\t" p
        if (p ~ /^\/usr\/(lib|bin|sbin)\//) print f "\t" substr(p, 5)
        else if (p ~ /^\/(lib|bin|sbin|lib64)\//) print f "\t/usr" p
    }
    {out($1, $1); out($1, $2)}' > "$tmp/candidates"
awk -F'\t' -v owned="$tmp/owned" -v unowned="$tmp/unowned" '
    FILENAME == ARGV[1] {if (!($2 in pkg)) pkg[$2] = $1; next}
    {order[$1] = 1; if (!($1 in got) && ($2 in pkg)) got[$1] = pkg[$2]}
    END {
        for (f in order) {
            if (f in got) print got[f] " " f > owned
            else print f > unowned
        }
    }' "$tmp/dpkg-files" "$tmp/candidates"
touch "$tmp/owned" "$tmp/unowned"

# --- Verdict -----------------------------------------------------------------------------------
missing=$(awk 'NR == FNR {ok[$1] = 1; next} !($1 in ok) {print}' "$tmp/closure" "$tmp/owned" | sort)
nfiles=$(wc -l < "$tmp/files")
npkgs=$(cut -d' ' -f1 "$tmp/owned" | sort -u | wc -l)
echo "check-deps: $nfiles files used from outside the tree, from $npkgs packages;" \
     "install-deps.sh names $(wc -l < "$tmp/listed"), whose closure holds $(wc -l < "$tmp/closure")"
if [ -s "$tmp/unowned" ]; then
    echo "check-deps: $(wc -l < "$tmp/unowned") files belong to no package (generated or local), not checked:"
    head -n 5 "$tmp/unowned" | sed 's/^/    /'
fi
if [ -n "$missing" ]; then
    echo "check-deps: FAILED: these packages were used but scripts/install-deps.sh does not bring them:" >&2
    echo "$missing" | awk '{n[$1]++; if (n[$1] <= 3) ex[$1] = ex[$1] "\n        " $2}
        END {for (p in n) printf "    %s (%d files), e.g.:%s\n", p, n[p], ex[p]}' >&2
    echo "check-deps: add them to scripts/install-deps.sh." >&2
    exit 1
fi
echo "check-deps: OK"
