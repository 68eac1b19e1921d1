#!/usr/bin/env bash
# oss_fuzz_build.sh: an OSS-Fuzz / ClusterFuzz style build of the fuzz targets.
#
# Uses the environment OSS-Fuzz's builder sets: $CC, $CXX, $CFLAGS, $CXXFLAGS
# (sanitizer and coverage flags), $LIB_FUZZING_ENGINE (the engine to link,
# e.g. -fsanitize=fuzzer), $OUT (where the fuzzers go), $WORK (scratch; default
# a temporary folder) and $SRC (default: this repository). Writes into $OUT:
#   fused_q_fuzzer, numerics_fuzzer, case_decode_fuzzer
#   <target>_seed_corpus.zip      from corpus/ (regressions and examples included)
#   <target>.dict, <target>.options
#   libhwy.so.1                   (the fuzzers find it through an $ORIGIN rpath)
# CUDA stays off: ClusterFuzz bots have no GPU. Run by hand for a local check:
#   CC=clang-14 CXX=clang++-14 CFLAGS="-fsanitize=address,fuzzer-no-link" \
#   CXXFLAGS="$CFLAGS" LIB_FUZZING_ENGINE=-fsanitize=fuzzer OUT=/tmp/out \
#   tools/fuzz_campaign/oss_fuzz_build.sh
set -euo pipefail

: "${CC:?set CC}" "${CXX:?set CXX}" "${OUT:?set OUT}" "${LIB_FUZZING_ENGINE:?set LIB_FUZZING_ENGINE}"
CFLAGS=${CFLAGS:-}
CXXFLAGS=${CXXFLAGS:-}
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
repo=$SRC
[ -f "$repo/CMakeLists.txt" ] || repo=$SRC/qcheck  # OSS-Fuzz checks projects out under $SRC/<name>
WORK=${WORK:-$(mktemp -d)}
build=$WORK/qcheck-oss-fuzz
mkdir -p "$OUT" "$build"

# The project's own sanitizer and fuzzer flags stay off: OSS-Fuzz's flags
# (in CFLAGS/CXXFLAGS) and engine decide. -ffp-contract=off and the other
# per-room flags still come from the project's CMake files.
cmake -S "$repo" -B "$build" \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_EXE_LINKER_FLAGS="-Wl,-rpath,\$ORIGIN" \
  -DQCHECK_CUDA=OFF -DQCHECK_SANITIZE=OFF -DQCHECK_FUZZ=OFF -DQCHECK_EXHAUSTIVE=OFF \
  -DQCHECK_LIB_FUZZING_ENGINE="$LIB_FUZZING_ENGINE"
cmake --build "$build" -j "$(nproc)" --target fused_q_fuzzer numerics_fuzzer case_decode_fuzzer

targets=$repo/fuzz/targets
for name in fused_q numerics case_decode; do
  cp "$build/fuzz/targets/${name}_fuzzer" "$OUT/"
  cp "$targets/$name.options" "$OUT/${name}_fuzzer.options"
done
cp "$targets/fused_q.dict" "$OUT/fused_q_fuzzer.dict"
cp "$targets/fused_q.dict" "$OUT/case_decode_fuzzer.dict"

# Seed corpora: flat zips, README files left out.
seed_zip() {  # target folders...
  local zip=$OUT/$1_seed_corpus.zip; shift
  rm -f "$zip"
  find "$@" -type f ! -name 'README*' ! -name '*.md' -print0 | xargs -0 zip -q -j "$zip"
}
seed_zip fused_q_fuzzer "$repo/corpus/fused_q" "$repo/corpus/regressions" "$repo/corpus/examples"
seed_zip numerics_fuzzer "$repo/corpus/numerics"
seed_zip case_decode_fuzzer "$repo/corpus/case_decode" "$repo/corpus/examples"

# Highway is a shared library on Debian: ship it beside the fuzzers.
hwy=$(ldd "$OUT/fused_q_fuzzer" | awk '/libhwy/ {print $3; exit}')
if [ -n "$hwy" ]; then cp -L "$hwy" "$OUT/"; fi
echo "oss_fuzz_build: wrote $(ls "$OUT" | wc -l) files to $OUT"
ls -1 "$OUT"
