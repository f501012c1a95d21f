#!/usr/bin/env bash
# Fills .deps/ with the build dependencies, unpacked from Debian packages (no system install, no
# root needed beyond apt's own download), and headers from NVIDIA's PyPI wheels: cudnn_frontend
# (nvidia-cudnn-frontend -> .deps/cudnn-frontend/include), CUTLASS/CuTe (nvidia-cutlass ->
# .deps/cutlass/include) and NCCL's nccl.h (nvidia-nccl-cu13 -> .deps/nccl/include).
# The device machine has no package registry, so this folder travels there with `carry`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deps="$root/.deps"
packages=(libcli11-dev nlohmann-json3-dev libgtest-dev)
# Any CPython x86_64 build of these wheels carries the same headers, so the download names one
# (--python-version/--platform) whatever python runs here.
wheels=(nvidia-cudnn-frontend==1.32.0 nvidia-cutlass==4.2.0.0)
stamp="$deps/.complete"
# Keeps a wheel's headers (under `prefix`, moved to dest/include) and licence files; its Python
# modules and binaries stay out.
unpack_headers() {  # wheel prefix dest
  python3 - "$1" "$2" "$3" <<'EOF'
import os, sys, zipfile
wheel, prefix, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as archive:
    for info in archive.infolist():
        name = info.filename
        if name.endswith("/"):
            continue
        if name.startswith(prefix):
            target = os.path.join(dest, "include", name[len(prefix):])
        elif ".dist-info/licenses/" in name:
            target = os.path.join(dest, "licenses", os.path.basename(name))
        else:
            continue
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with archive.open(info) as src, open(target, "wb") as out:
            out.write(src.read())
EOF
}
# Optional (KBENCH_WITH_FLASHINFER=1 or ON): FlashInfer's own headers from the flashinfer-python wheel,
# for the `flashinfer` yardstick backend (cmake -DKBENCH_WITH_FLASHINFER=ON). Only what its kernels
# need is kept: include/, the bundled CUTLASS (include, tools/util/include) and CCCL (libcudacxx, cub,
# thrust: FlashInfer needs a newer CCCL than CUDA 13.0's) and the licence files. They are stored as ONE
# archive, .deps/flashinfer-<version>.tar.xz (xz -9, a few MB: .deps travels to the device), and also
# unpacked to .deps/flashinfer/ here (tens of MB: leave it behind; CMake unpacks the archive when it
# is missing). A run with the option after one without fetches just this part.
flashinfer_version=0.7.2.post1
flashinfer_archive="$deps/flashinfer-$flashinfer_version.tar.xz"
flashinfer_stamp="$deps/.complete-flashinfer"
fetch_flashinfer() {
  case "${KBENCH_WITH_FLASHINFER:-0}" in 1|ON|On|on|TRUE|True|true|YES|Yes|yes) ;; *) return 0 ;; esac
  if [ -f "$flashinfer_stamp" ] && [ "$(cat "$flashinfer_stamp")" = "$flashinfer_version" ] && [ -f "$flashinfer_archive" ]; then
    if [ ! -f "$deps/flashinfer/include/flashinfer/attention/prefill.cuh" ]; then
      rm -rf "$deps/flashinfer"; tar -C "$deps" -xJf "$flashinfer_archive"
    fi
    return 0
  fi
  rm -rf "$deps/flashinfer" "$deps/flashinfer-wheel" "$flashinfer_archive" "$flashinfer_stamp"
  mkdir -p "$deps/flashinfer-wheel"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$deps/flashinfer-wheel" \
    "flashinfer-python==$flashinfer_version"
  python3 - "$deps"/flashinfer-wheel/flashinfer_python-*.whl "$deps/flashinfer" <<'EOF'
import os, sys, zipfile
wheel, dest = sys.argv[1:]
keep = ("include/", "cutlass/include/", "cutlass/tools/util/include/", "cccl/libcudacxx/include/",
        "cccl/cub/cub/", "cccl/thrust/thrust/")
with zipfile.ZipFile(wheel) as archive:
    for info in archive.infolist():
        name = info.filename
        if name.endswith("/"):
            continue
        rel = name[len("flashinfer/data/"):] if name.startswith("flashinfer/data/") else None
        if rel is not None and rel.startswith(keep):
            target = os.path.join(dest, rel)
        elif "LICENSE" in os.path.basename(name).upper():
            target = os.path.join(dest, "licenses", name.replace("/", "__"))
        else:
            continue
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with archive.open(info) as src, open(target, "wb") as out:
            out.write(src.read())
EOF
  rm -rf "$deps/flashinfer-wheel"
  test -f "$deps/flashinfer/include/flashinfer/attention/prefill.cuh"
  test -f "$deps/flashinfer/cutlass/include/cute/tensor.hpp"
  test -f "$deps/flashinfer/cccl/libcudacxx/include/cuda/std/version"
  tar -C "$deps" -cf - flashinfer | xz -9 -T2 >"$flashinfer_archive.tmp"
  mv "$flashinfer_archive.tmp" "$flashinfer_archive"
  echo "$flashinfer_version" >"$flashinfer_stamp"
  echo "[deps] flashinfer-python==$flashinfer_version headers: $flashinfer_archive ($(du -h "$flashinfer_archive" | cut -f1)), unpacked in $deps/flashinfer"
}
# nccl.h for a machine with NCCL's runtime library but no header (the device: libnccl.so.2 2.28.3 in
# /usr/lib/x86_64-linux-gnu), matching that library's version: only the wheel's headers are kept,
# its 200 MB library is not. cmake/KbenchDependencies.cmake looks in .deps/nccl/include. Its own
# stamp, so a .deps made before this part gets just this on the next run.
nccl_wheel=nvidia-nccl-cu13==2.28.3
nccl_stamp="$deps/.complete-nccl"
fetch_nccl_header() {
  if [ -f "$nccl_stamp" ] && [ "$(cat "$nccl_stamp")" = "$nccl_wheel" ] && [ -f "$deps/nccl/include/nccl.h" ]; then
    return 0
  fi
  rm -rf "$deps/nccl" "$deps/nccl-wheel" "$nccl_stamp"
  mkdir -p "$deps/nccl-wheel"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
    --platform manylinux_2_18_x86_64 --dest "$deps/nccl-wheel" "$nccl_wheel"
  unpack_headers "$deps"/nccl-wheel/nvidia_nccl_cu13-*.whl nvidia/nccl/include/ "$deps/nccl"
  rm -rf "$deps/nccl-wheel"
  test -f "$deps/nccl/include/nccl.h"
  echo "$nccl_wheel" >"$nccl_stamp"
  echo "[deps] unpacked the headers of $nccl_wheel into $deps/nccl/include"
}
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${packages[*]} ${wheels[*]}" ]; then
  fetch_flashinfer
  fetch_nccl_header
  exit 0
fi
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
unpack_headers "$deps"/wheels/nvidia_cudnn_frontend-*.whl include/ "$deps/cudnn-frontend"
unpack_headers "$deps"/wheels/nvidia_cutlass-*.whl cutlass_library/source/include/ "$deps/cutlass"
rm -rf "$deps/wheels"
test -f "$deps/cudnn-frontend/include/cudnn_frontend.h"
test -f "$deps/cutlass/include/cute/tensor.hpp"
echo "${packages[*]} ${wheels[*]}" >"$stamp"
echo "[deps] unpacked the headers of ${wheels[*]} into $deps/cudnn-frontend and $deps/cutlass"
fetch_flashinfer
fetch_nccl_header
