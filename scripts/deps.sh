#!/usr/bin/env bash
# Fills .deps/ with the build dependencies, unpacked from Debian packages (no system install, no
# root needed beyond apt's own download), and the cudnn_frontend C++ headers (header-only), unpacked
# from NVIDIA's nvidia-cudnn-frontend wheel on PyPI into .deps/cudnn-frontend/include. The device
# machine has no package registry, so this folder travels there with `carry`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deps="$root/.deps"
packages=(libcli11-dev nlohmann-json3-dev libgtest-dev)
# Only the wheel's include/ is kept; any CPython x86_64 build of it carries the same headers, so the
# download names one (--python-version/--platform) whatever python runs here.
wheels=(nvidia-cudnn-frontend==1.32.0)
stamp="$deps/.complete"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${packages[*]} ${wheels[*]}" ]; then exit 0; fi
rm -rf "$deps"; mkdir -p "$deps/debs"
(
  cd "$deps/debs"
  if ! apt-get download "${packages[@]}" >/dev/null 2>&1; then
    echo "[deps] apt-get download failed; refreshing the package lists and retrying" >&2
    apt-get update >/dev/null
    apt-get download "${packages[@]}"
  fi
)
for deb in "$deps"/debs/*.deb; do dpkg -x "$deb" "$deps/root"; done
rm -rf "$deps/debs"
echo "[deps] unpacked ${packages[*]} into $deps/root"
mkdir -p "$deps/wheels"
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
  --platform manylinux_2_28_x86_64 --dest "$deps/wheels" "${wheels[@]}"
for wheel in "$deps"/wheels/*.whl; do
  # include/ (the headers) and the licence files; the wheel's Python modules and binaries stay out.
  python3 - "$wheel" "$deps/cudnn-frontend" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    for name in wheel.namelist():
        if name.startswith("include/") or ".dist-info/licenses/" in name:
            wheel.extract(name, sys.argv[2])
EOF
done
rm -rf "$deps/wheels"
test -f "$deps/cudnn-frontend/include/cudnn_frontend.h"
echo "${packages[*]} ${wheels[*]}" >"$stamp"
echo "[deps] unpacked the headers of ${wheels[*]} into $deps/cudnn-frontend/include"
