#!/usr/bin/env bash
# Fills .deps/ with the build dependencies, unpacked from Debian packages (no system install, no
# root needed beyond apt's own download). The device machine has no package registry, so this
# folder travels there with `carry`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deps="$root/.deps"
packages=(libcli11-dev nlohmann-json3-dev libgtest-dev)
stamp="$deps/.complete"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${packages[*]}" ]; then exit 0; fi
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
echo "${packages[*]}" >"$stamp"
echo "[deps] unpacked ${packages[*]} into $deps/root"
