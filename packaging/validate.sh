#!/bin/sh
# Validate the desktop entry and the AppStream metainfo.
# Usage: validate.sh DESKTOP_FILE METAINFO_FILE
# Exit status: 0 valid, 1 invalid, 2 usage error, 77 skipped (no validator installed).
set -u

if [ $# -ne 2 ]; then
    echo "usage: $0 DESKTOP_FILE METAINFO_FILE" >&2
    exit 2
fi
desktop=$1
metainfo=$2

for f in "$desktop" "$metainfo"; do
    if [ ! -r "$f" ]; then
        echo "validate.sh: cannot read $f" >&2
        exit 1
    fi
done

have_dfv=0
have_asc=0
command -v desktop-file-validate >/dev/null 2>&1 && have_dfv=1
command -v appstreamcli >/dev/null 2>&1 && have_asc=1

if [ $have_dfv -eq 0 ] && [ $have_asc -eq 0 ]; then
    echo "SKIP: neither desktop-file-validate (desktop-file-utils) nor appstreamcli (appstream) is installed"
    exit 77
fi

status=0

if [ $have_dfv -eq 1 ]; then
    echo "desktop-file-validate $desktop"
    out=$(desktop-file-validate "$desktop" 2>&1)
    rc=$?
    [ -n "$out" ] && printf '%s\n' "$out"
    # It exits 0 on warnings; hints are fine, warnings and errors are not.
    if [ $rc -ne 0 ] || printf '%s\n' "$out" | grep -Eq ': (error|warning): '; then
        echo "FAIL: $desktop"
        status=1
    fi
else
    echo "note: desktop-file-validate not installed, desktop entry not checked"
fi

if [ $have_asc -eq 1 ]; then
    echo "appstreamcli validate --no-net $metainfo"
    # Fails on errors and warnings; infos and pedantic hints pass.
    if ! appstreamcli validate --no-net "$metainfo"; then
        echo "FAIL: $metainfo"
        status=1
    fi
else
    echo "note: appstreamcli not installed, metainfo not checked"
fi

# The metainfo must launch this desktop file.
name=$(basename "$desktop")
if ! grep -q "<launchable type=\"desktop-id\">$name</launchable>" "$metainfo"; then
    echo "FAIL: $metainfo has no launchable for $name"
    status=1
fi

exit $status
