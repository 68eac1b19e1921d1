#!/usr/bin/env bash
# Builds the GPU bundle: one folder that runs the whole GPU gate and the fuzz
# campaign on a CUDA host without the toolchain (GPU.md): a plain Release
# build with CUDA (g++, sm_90 machine code only: the H200 needs no PTX, and
# leaving it out halves the kernels' share of every binary) in build-bundle,
# the libFuzzer targets with CUDA (preset fuzz-gpu: clang, no sanitizer) in
# build-bundle-fuzz, then OUTDIR with
#   tests/      every test binary whose ctest tests carry the gpu, cpu or corpus
#               label (found in the build tree through ctest's JSON listing,
#               plus any executable named *_test under tests/), stripped, and
#               tests/manifest.tsv: binary <TAB> labels; packed as tests.tar.gz
#               (the gate unpacks it on its first run: the transfer to the GPU
#               host is limited, and the binaries share most of their code)
#   bin/        every qcheck-* tool and the three libFuzzer targets, stripped,
#               and fused_q.dict
#   lib/        the shared libraries the binaries need beyond the base system
#               (libhwy.so.1 and friends); binaries find them through an
#               $ORIGIN/../lib rpath and the runner's LD_LIBRARY_PATH; the
#               example plugins and the CUDA planted-bug catalogue
#               (libqcheck_mutant_*.so and the harmless twins libqcheck_twin_*.so,
#               with the shared CUDA runtime they load)
#   corpus/     the repository's corpus folder
#   plugins/    include/qcheck/qcheck_plugin.h and the nvcc-only example plugin's
#               source (the gate builds it with nvcc -I plugins/include); the
#               built example plugins are in lib/
#   wheel/      the pip-installable wheel (tools/wheel/make_wheel.sh)
#   python/     the Python package (qcheck over lib/libqcheck.so): PYTHONPATH=DIR/python;
#               python/examples/run_examples.py runs the examples there, and
#               python/tests the package's tests (gate step 1c), with
#               python/test-wheels the tests' own pinned wheels (xmlschema,
#               elementpath), which with_test_deps.sh installs there
#   qcheck      the front door there: `qcheck fuzz [--mode=pr|batch] [MINUTES]`
#               (the campaign, run_campaign.sh; also run_fuzz.sh MINUTES) and
#               `qcheck test LOGDIR` (the gate, run_gpu_gate.sh LOGDIR)
# With --fuzz-only, a bundle for the campaign and the Python door alone:
# bin/ (the three libFuzzer targets, qcheck-replay, qcheck-minimize), lib/
# (libqcheck.so and what they load), python/ (package and examples), corpus/
# and the scripts; no test binaries, catalogue, plugins or wheel, so it builds
# in a fraction of the time (built in build-bundle-fuzz-only; its `qcheck test`
# says it has no gate).
# usage: tools/gpu_bundle/make_bundle.sh [--fuzz-only] [OUTDIR]   (default: <repo>/bundle)
set -euo pipefail

fuzz_only=0
if [[ "${1:-}" == --fuzz-only ]]; then fuzz_only=1; shift; fi
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$repo/bundle}
build=$repo/build-bundle
((fuzz_only)) && build=$repo/build-bundle-fuzz-only
jobs=${QCHECK_BUNDLE_JOBS:-2}

say() { printf 'make_bundle: %s\n' "$*"; }

command -v python3 >/dev/null || { say "python3 is needed to read ctest's JSON listing"; exit 2; }

mkdir -p "$build"
say "configuring $build (Release, CUDA on, g++)"
cmake -S "$repo" -B "$build" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
  -DQCHECK_CUDA=ON -DQCHECK_FUZZ=OFF -DQCHECK_SANITIZE=OFF -DQCHECK_EXHAUSTIVE=ON \
  -DQCHECK_MUTANT_KERNELS=$((fuzz_only ? 0 : 1)) \
  -DCMAKE_CUDA_ARCHITECTURES=90-real \
  '-DCMAKE_BUILD_RPATH=$ORIGIN/../lib' >"$build/qcheck-configure.log" 2>&1 ||
  { cat "$build/qcheck-configure.log"; exit 1; }
say "building with -j$jobs"
targets=()
((fuzz_only)) && targets=(--target qcheck qcheck-replay qcheck-minimize)
cmake --build "$build" -j "$jobs" "${targets[@]}" >"$build/qcheck-build.log" 2>&1 ||
  { tail -50 "$build/qcheck-build.log"; exit 1; }

fuzz_build=$repo/build-bundle-fuzz
say "configuring $fuzz_build (preset fuzz-gpu: clang, libFuzzer, CUDA, no sanitizer)"
mkdir -p "$fuzz_build"
cmake --preset fuzz-gpu -S "$repo" -B "$fuzz_build" '-DCMAKE_BUILD_RPATH=$ORIGIN/../lib' \
  >"$fuzz_build/qcheck-configure.log" 2>&1 || { cat "$fuzz_build/qcheck-configure.log"; exit 1; }
cmake --build "$fuzz_build" -j "$jobs" --target fused_q_fuzzer numerics_fuzzer case_decode_fuzzer fused_k_fuzzer \
  >"$fuzz_build/qcheck-build.log" 2>&1 || { tail -50 "$fuzz_build/qcheck-build.log"; exit 1; }

rm -rf "$out"
mkdir -p "$out/tests" "$out/bin" "$out/lib"
: >"$out/tests/manifest.tsv"

if ((fuzz_only == 0)); then
# Test binaries and their labels, from ctest's own listing of the build tree.
(cd "$build" && ctest --show-only=json-v1) | python3 -c '
import json, os, sys
build, wanted = sys.argv[1], {"gpu", "cpu", "corpus"}
labels = {}
for test in json.load(sys.stdin).get("tests", []):
    command = test.get("command") or []
    if not command:
        continue
    exe = command[0]
    props = {p["name"]: p["value"] for p in test.get("properties", [])}
    # The gate judges a binary by its exit code: a test that passes by its
    # output (the generated regression test must fail) stays out.
    if "PASS_REGULAR_EXPRESSION" in props or props.get("WILL_FAIL"):
        continue
    tags = set(props.get("LABELS", []))
    if tags & wanted and exe.startswith(build) and os.access(exe, os.X_OK):
        labels.setdefault(exe, set()).update(tags & wanted)
for exe, tags in sorted(labels.items()):
    print(exe + "\t" + ",".join(sorted(tags)))
' "$build" >"$build/bundle-tests.tsv"

# The naming convention catches test binaries ctest does not list (yet).
while IFS= read -r exe; do
  grep -qF "$exe	" "$build/bundle-tests.tsv" || printf '%s\t%s\n' "$exe" "unlabelled" >>"$build/bundle-tests.tsv"
done < <(find "$build/tests" -type f -perm -u+x -name '*_test' ! -name 'qcheck_generated_regression_test' | sort)

while IFS=$'\t' read -r exe tags; do
  name=$(basename "$exe")
  if [[ -e "$out/tests/$name" ]]; then say "two test binaries are named $name"; exit 1; fi
  cp "$exe" "$out/tests/$name"
  printf '%s\t%s\n' "$name" "$tags" >>"$out/tests/manifest.tsv"
done <"$build/bundle-tests.tsv"
fi

find "$build" -type f -perm -u+x -name 'qcheck-*' ! -path '*/CMakeFiles/*' -exec cp {} "$out/bin/" \;
for t in fused_q numerics case_decode; do cp "$fuzz_build/fuzz/targets/${t}_fuzzer" "$out/bin/"; done
cp "$fuzz_build/ops/fused_k/fuzz/fused_k_fuzzer" "$out/bin/"
# The Python package and the library it loads (found as DIR/lib from DIR/python/qcheck).
cp "$build/capi/libqcheck.so" "$out/lib/"
mkdir -p "$out/python"
cp -r "$repo/python/qcheck" "$out/python/"
cp "$repo/python/README.md" "$out/python/"
# The examples (a Triton kernel, a PyTorch eager reference, their driver):
# the tracked files only.
mkdir -p "$out/python/examples"
git -C "$repo" ls-files python/examples | while read -r f; do cp "$repo/$f" "$out/python/examples/"; done
cp "$repo/fuzz/targets/fused_q.dict" "$out/bin/"
if ((fuzz_only == 0)); then
# The package's tests: the gate runs them with this host's torch.
mkdir -p "$out/python/tests"
git -C "$repo" ls-files python/tests | while read -r f; do cp "$repo/$f" "$out/python/tests/"; done
# The tests' own pinned wheels (python/tests/requirements.txt: xmlschema and
# elementpath, pure Python, for the JUnit schema check): the GPU host has no
# network; the gate installs them with with_test_deps.sh.
env -u QCHECK_TEST_WHEELS "$repo/tests/with_test_deps.sh" "$build/test-deps" true
mkdir -p "$out/python/test-wheels"
cp "$build/test-deps/wheels/"*.whl "$out/python/test-wheels/"
# The wheel (tools/wheel): `pip install DIR/wheel/qcheck-*.whl` on the host.
"$repo/tools/wheel/make_wheel.sh" "$out/wheel" >/dev/null
# The example plugins (ops/fused_q/plugins, built in capi/plugins) beside the libraries, and what a user
# needs to build one with nvcc alone.
find "$build/capi/plugins" -maxdepth 1 \( -name 'libqcheck_*plugin*.so' -o -name 'libqcheck_mutant_*.so' \
  -o -name 'libqcheck_twin_*.so' \) \
  -exec cp {} "$out/lib/" \;
mkdir -p "$out/plugins/nvcc_only" "$out/plugins/include/qcheck"
cp "$repo/include/qcheck/qcheck_plugin.h" "$out/plugins/include/qcheck/"
git -C "$repo" ls-files --cached --others --exclude-standard ops/fused_q/plugins/nvcc_only | while read -r f; do cp "$repo/$f" "$out/plugins/nvcc_only/"; done
fi
find "$out/python" -name __pycache__ -prune -exec rm -rf {} +

# Shared libraries beyond glibc, libstdc++ and libgcc (present on any host).
base='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s)\.'
for binary in "$out"/tests/* "$out"/bin/* "$out"/lib/libqcheck_mutant_*.so "$out"/lib/libqcheck_twin_*.so; do
  [[ -x "$binary" && ! -d "$binary" ]] || continue
  ldd "$binary" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r soname path; do
  [[ "$soname" =~ $base ]] && continue
  cp -L "$path" "$out/lib/$soname"
done

strip --strip-unneeded "$out"/tests/* "$out"/bin/*_fuzzer "$out"/bin/qcheck-* "$out"/lib/libqcheck*.so 2>/dev/null || true
find "$out/tests" -name manifest.tsv -prune -o -type f -exec chmod +x {} \;

if [[ -d "$repo/corpus" ]]; then cp -r "$repo/corpus" "$out/corpus"; else mkdir -p "$out/corpus"; fi
for f in tools/gpu_bundle/run_gpu_gate.sh tools/gpu_bundle/run_mutants_gate.sh tools/gpu_bundle/qcheck tools/gpu_bundle/run_fuzz.sh \
         tools/fuzz_campaign/run_campaign.sh tools/fuzz_campaign/campaign_gpus.sh tools/fuzz_campaign/campaign_report.sh \
         tools/fuzz_campaign/campaign_status.sh tools/fuzz_campaign/campaign_ray.sh tests/fuzz_smoke/campaign_test.sh \
         tests/with_test_deps.sh; do
  cp "$repo/$f" "$out/"
  chmod +x "$out/$(basename "$f")"
done
{
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "version: $(sed -n 's/^project(qcheck VERSION \([0-9.]*\).*/\1/p' "$repo/CMakeLists.txt")"
  echo "commit: $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$repo" diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "host: $(uname -sr), $(ldd --version | head -1)"
  echo "compilers: $(g++ --version | head -1); $(/usr/local/cuda/bin/nvcc --version 2>/dev/null | tail -1 || true)"
} >"$out/build-info.txt"

if ((fuzz_only)); then
  echo "fuzz only: the campaign and the Python door, no gate (make_bundle.sh --fuzz-only)" >>"$out/build-info.txt"
  rm -rf "$out/tests"
  what="fuzz only, no gate"
else
  what="$(wc -l <"$out/tests/manifest.tsv") test binaries (tests.tar.gz)"
  tar czf "$out/tests.tar.gz" -C "$out" tests && rm -rf "$out/tests"
fi
size=$(du -sb "$out" | cut -f1)
say "bundle $out: $what, $(ls "$out/bin" | wc -l) tools, $(ls "$out/lib" | wc -l) libraries, $((size / 1024 / 1024)) MiB"
# The device host takes at most 64 MiB per transfer; 4 MiB stay for what
# travels beside the bundle (scripts, a case folder). (Every test binary
# carries the kernels and the static CUDA runtime: a shared harness library
# would shrink the bundle by half.)
if ((size > 60 * 1024 * 1024)); then say "bundle is larger than 60 MiB (the transfer limit is 64 MiB)"; exit 1; fi
if ((fuzz_only)); then
  say "run on the GPU host: $out/qcheck fuzz MINUTES (the campaign), PYTHONPATH=$out/python python3 -m qcheck fuzz ... (the door)"
else
  say "run on the GPU host: $out/qcheck test LOGDIR (the gate), $out/qcheck fuzz MINUTES (the campaign)"
fi
