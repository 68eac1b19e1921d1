#!/usr/bin/env bash
# The catalogue's planted race (missing-barrier) at the gate's schedule, six
# seeds run at once, as the H200 figures in README.md were taken; then the
# correct kernel at the default size (no finding expected).
# usage: tools/mutants/race_seeds.sh BUNDLE_DIR OUT_DIR   (a GPU bundle: bin/qcheck-mutants, lib/)
set -uo pipefail
dir=$(cd "${1:?BUNDLE_DIR}" && pwd)
out=${2:?OUT_DIR}
mkdir -p "$out"
export LD_LIBRARY_PATH=$dir/lib QCHECK_PLUGIN_DIR=$dir/lib
for seed in 1 2 3 4 5 6; do
  "$dir/bin/qcheck-mutants" --backends cuda-blocked+bug=missing-barrier --seeds "$seed" --case-size limit \
    --max-executions 100000 --max-seconds 60 --minimize-seconds 0 --no-baseline --out "$out/seed$seed" \
    >"$out/seed$seed.log" 2>&1 &
done
wait
grep -h 'missing-barrier' "$out"/seed*/mutants.md
"$dir/bin/qcheck-mutants" --backends cuda-blocked+bug=missing-barrier --seeds 1 --case-size default \
  --max-executions 1 --max-seconds 60 --minimize-seconds 0 --no-baseline --clean cuda-blocked \
  --clean-executions 3000 --out "$out/clean" >"$out/clean.log" 2>&1
grep -h '^| cuda-blocked |' "$out/clean/mutants.md"
