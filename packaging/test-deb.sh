#!/bin/sh
# Builds the .deb with CPack from a configured and built tree, unpacks it into a temporary folder
# and checks what a user gets: the program runs (--version), and the desktop entry, metainfo,
# icon and man page sit at the standard share/ paths.
# Usage: test-deb.sh BUILD_DIR    Exit: 0 ok, 1 failure, 77 skipped (no dpkg-deb).
set -eu
build=$1
command -v dpkg-deb >/dev/null 2>&1 || { echo "SKIP: dpkg-deb not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1) \
    || { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/out/*.deb | head -1)
[ -f "$deb" ] || { echo "no .deb produced"; exit 1; }
dpkg-deb --info "$deb" | grep -q "Package: railyard" || { echo "bad control data"; exit 1; }
dpkg-deb -x "$deb" "$work/root"
for f in usr/bin/railyard \
         usr/share/applications/io.github.railyard.Railyard.desktop \
         usr/share/metainfo/io.github.railyard.Railyard.metainfo.xml \
         usr/share/icons/hicolor/scalable/apps/io.github.railyard.Railyard.svg; do
    [ -e "$work/root/$f" ] || { echo "missing in the package: /$f"; exit 1; }
done
ls "$work"/root/usr/share/man/man1/railyard.1* >/dev/null 2>&1 || { echo "missing man page"; exit 1; }
version=$(env -u DISPLAY "$work/root/usr/bin/railyard" --version)
echo "$version"
case "$version" in
    "railyard "*) ;;
    *) echo "unexpected --version output"; exit 1 ;;
esac
echo "ok: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"
