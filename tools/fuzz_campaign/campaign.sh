#!/usr/bin/env bash
# campaign.sh [--mode default|pr|batch] [--ray ADDRESS] [MINUTES]   (README's main job:
# `./qcheck fuzz [MINUTES]`, default 10)
#
# Builds the fuzz targets and tools on this machine, then runs the campaign
# (run_campaign.sh, which the GPU bundle carries too):
#   with a GPU and nvcc: preset fuzz-gpu (clang, libFuzzer, the CUDA kernels,
#     no sanitizer: a CUDA context under ASan costs much of the rate);
#   otherwise: preset fuzz (clang, libFuzzer, ASan+UBSan), CUDA off.
# Environment: QCHECK_FUZZ_BUILD_DIR (default build/fuzz or build/fuzz-gpu)
# and every variable run_campaign.sh reads (QCHECK_FUZZ_WORK_DIR,
# QCHECK_FUZZ_JOBS, QCHECK_FUZZ_BACKENDS, ...). Exit status: run_campaign.sh's,
# or 2 when the build fails.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
args=("$@")
# MINUTES defaults to 10, also beside options (./qcheck fuzz --ray ADDRESS)
[[ " $* " =~ \ [0-9]+\  ]] || args+=(10)

gpu=0
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU' && gpu=1
nvcc=0
{ command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; } && nvcc=1
if [ $gpu -eq 1 ] && [ $nvcc -eq 1 ]; then
  preset=fuzz-gpu extra=()
else
  preset=fuzz extra=(-DQCHECK_CUDA=OFF)
fi
build=${QCHECK_FUZZ_BUILD_DIR:-$root/build/$preset}
mkdir -p "$build"
echo "campaign: building preset $preset in $build (GPU $([ $gpu -eq 1 ] && echo present || echo absent))"
cmake --preset "$preset" -S "$root" -B "$build" "${extra[@]}" >"$build/campaign-configure.log" 2>&1 ||
  { echo "campaign: configure failed, see $build/campaign-configure.log"; tail -n 20 "$build/campaign-configure.log"; exit 2; }
cmake --build "$build" -j "$(nproc)" --target fused_q_fuzzer numerics_fuzzer case_decode_fuzzer fused_k_fuzzer qcheck-replay \
  qcheck-minimize \
  >"$build/campaign-build.log" 2>&1 ||
  { echo "campaign: build failed, see $build/campaign-build.log"; tail -n 30 "$build/campaign-build.log"; exit 2; }

# One folder with what run_campaign.sh runs, as the bundle has it.
bin=$build/campaign-bin
mkdir -p "$bin"
for t in fused_q numerics case_decode; do ln -sf "$build/fuzz/targets/${t}_fuzzer" "$bin/"; done
ln -sf "$build/ops/fused_k/fuzz/fused_k_fuzzer" "$bin/"
ln -sf "$build/tools/replay/qcheck-replay" "$bin/"
ln -sf "$build/tools/minimize/qcheck-minimize" "$bin/"
ln -sf "$root/fuzz/targets/fused_q.dict" "$bin/"
cd "$root"
exec "$root/tools/fuzz_campaign/run_campaign.sh" --bin "$bin" --corpus "$root/corpus" "${args[@]}"
