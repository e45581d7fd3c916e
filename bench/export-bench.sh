#!/bin/sh
# How long `railyard export` takes, how much memory it peaks at and how large its files are:
# every shipped layout to every diagram format (and the review report), run REPEAT times each;
# prints the medians (wall seconds, CPU seconds: user + system, output MB, peak resident MB),
# one row per layout and format, and marks a row over 5 s (wall) or 1 GB.
#
#   bench/export-bench.sh [RAILYARD] [REPEAT]    (default: build/bin/railyard, 3)
#   LAYOUTS="layouts/a.json layouts/b.json" FORMATS="svg pdf" bench/export-bench.sh
#
# Not a test (timings depend on the machine); needs /usr/bin/time (GNU time).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
railyard=${1:-$here/build/bin/railyard}
repeat=${2:-3}
layouts=${LAYOUTS:-$(ls "$here"/layouts/*.railyard.json)}
formats=${FORMATS:-svg png pdf report.pdf report.md}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

[ -x "$railyard" ] || { echo "export-bench: no railyard at $railyard" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "export-bench: needs GNU time at /usr/bin/time" >&2; exit 2; }

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-28s %-10s %8s %8s %9s %9s  %s\n' layout format seconds cpu_s MB peak_MB note
for layout in $layouts; do
    name=$(basename "$layout" .railyard.json)
    for format in $formats; do
        case $format in
        report.*) file="$out/$name.${format#report.}"; extra=--report ;;
        *) file="$out/$name.$format"; extra= ;;
        esac
        : > "$out/times"
        : > "$out/cpu"
        : > "$out/rss"
        i=0
        while [ "$i" -lt "$repeat" ]; do
            rm -f "$file"
            if ! /usr/bin/time -f '%e %M %U %S' -o "$out/measure" \
                    "$railyard" export "$layout" -o "$file" $extra > /dev/null 2> "$out/err"; then
                echo "export-bench: $name $format failed: $(cat "$out/err")" >&2
                break
            fi
            awk '{ print $1 >> "'"$out/times"'"; print $2 / 1024 >> "'"$out/rss"'"
                   print $3 + $4 >> "'"$out/cpu"'" }' "$out/measure"
            i=$((i + 1))
        done
        [ -s "$out/times" ] || continue
        seconds=$(median < "$out/times")
        cpu=$(median < "$out/cpu")
        rss=$(median < "$out/rss")
        # The Markdown report's diagram beside it counts too.
        bytes=$(cat "$file" "${file%.md}-diagram.svg" 2>/dev/null | wc -c)
        note=$(awk -v s="$seconds" -v m="$rss" 'BEGIN {
            n = ""; if (s > 5) n = n "over 5 s "; if (m > 1024) n = n "over 1 GB"; print n }')
        printf '%-28s %-10s %8.2f %8.2f %9.2f %9.0f  %s\n' "$name" "$format" "$seconds" "$cpu" \
            "$(echo "$bytes" | awk '{ print $1 / 1e6 }')" "$rss" "$note"
    done
done
