#!/usr/bin/env bash
# Debian's build dependencies for a machine that cannot install them (the GPU machines: no
# network, no Debian packages), as a folder of unpacked .deb files to build against.
#   scripts/gpu_deps.sh download DIR     here (Debian, with its registry): fetch the .deb files
#   scripts/gpu_deps.sh unpack DIR PREFIX   there: unpack them into PREFIX (never into /)
# scripts/gpu_python_check.sh uses it when SIMPREC_DEPS_DEBS names such a folder.
set -euo pipefail
packages=(libmpfr-dev libmpfr6 libgmp-dev libgmp10 libgmpxx4ldbl libeigen3-dev libtomlplusplus-dev
          libtomlplusplus3 nlohmann-json3-dev libdlpack-dev librandom123-dev libcli11-dev
          liblzma-dev liblzma5 pkgconf pkgconf-bin libpkgconf3 tao-pegtl-dev)
case "${1:-}" in
  download)
    mkdir -p "$2"
    (cd "$2" && apt-get download "${packages[@]}")
    ;;
  unpack)
    mkdir -p "$3"
    prefix=$(cd "$3" && pwd)
    for deb in "$2"/*.deb; do dpkg-deb -x "$deb" "$prefix"; done
    # Absolute links (liblzma.so -> /lib/...) would point out of the prefix: point them in.
    find "$prefix" -type l -lname '/*' | while read -r link; do
      ln -sfn "$prefix$(readlink "$link")" "$link"
    done
    ;;
  *) echo "usage: scripts/gpu_deps.sh download DIR | unpack DIR PREFIX" >&2; exit 2 ;;
esac
