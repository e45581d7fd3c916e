#!/usr/bin/env bash
# Installs what Railyard needs to build, test and run on a bare Debian 12 (run as root). Safe to
# run again: it installs only what is missing. CI checks this list against the files the build
# and the tests really used (scripts/check-deps.sh), so a package this machine happens to have
# cannot hide a missing name.
#   --list   print the package names and exit (used by check-deps.sh)
set -euo pipefail
packages=(
    # Build
    cmake ninja-build g++ pkg-config
    qt6-base-dev qt6-base-dev-tools qt6-charts-dev qt6-svg-dev # qt6-base-dev brings Qt Concurrent
    libqt6opengl6-dev libgl-dev # Qt Charts' CMake config needs Qt6OpenGL, which needs GL
    libboost-dev nlohmann-json3-dev # Boost.Math: the ECMP collision model (traffic.cpp)
    libexpat1-dev # the XML reader of the NCCL topology and graph importers
    # Run: the xcb platform plugin for a desktop, and a font for every label (the offscreen
    # platform of the tests draws text too)
    qt6-qpa-plugins fonts-dejavu-core
    # Packaging checks run by the tests
    desktop-file-utils appstream dpkg-dev file
    # The export tests open exported SVG and PDF files as other programs do (rsvg-convert,
    # pdftoppm, pdftotext)
    librsvg2-bin poppler-utils
    # The review report tests parse its Markdown as a Markdown reader does (GitHub's tables)
    cmark-gfm
)
if [ "${1:-}" = "--list" ]; then
    printf '%s\n' "${packages[@]}"
    exit 0
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "install-deps: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
