#!/usr/bin/env bash
# The GPU gate's planted-bug step (run_gpu_gate.sh step 7; also alone):
# qcheck-mutants over the bundle's CUDA catalogue (every lib/libqcheck_mutant_*
# as cuda-blocked+bug=NAME or cuda-legacy+bug=NAME, the run-time
# cuda-blocked-bug-tail, every lib/libqcheck_twin_* as cuda-blocked+twin=NAME)
# from empty corpora with seeds 1, 2, 3 at the limit case size (the
# default's sizes and the cases at the hardware's limits), each finding
# minimized for the first seed, the fixed-grid baseline beside it, and the
# correct blocked kernel as a false-alarm check. The gate's targets
# (issue: prove the fuzzers find real bugs): every bug found in every seed
# or proven equivalent, each within 60 s, the median under 5 s, no twin and
# no correct kernel reported.
# usage: run_mutants_gate.sh LOGDIR   (writes LOGDIR/mutants.md, mutants.log and
# LOGDIR/mutants/ with the CSV and the Stryker report; exit 0 when every target holds)
# Env: QCHECK_MUTANTS_EXCLUDE (an extended regex of backends to leave out, for
# a run in parts), QCHECK_MUTANTS_CLEAN_EXECUTIONS (default 3000 per seed for
# the twins and the correct kernel).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
logdir=${1:?usage: run_mutants_gate.sh LOGDIR}
mkdir -p "$logdir" || exit 2
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" QCHECK_PLUGIN_DIR="$here/lib"
list=$(ls "$here/lib" | sed -n -e 's/^libqcheck_mutant_\(blocked\|legacy\)_\(.*\)\.so$/cuda-\1+bug=\2/p' \
  -e 's/^libqcheck_twin_blocked_\(.*\)\.so$/cuda-blocked+twin=\1/p' | grep -Ev "${QCHECK_MUTANTS_EXCLUDE:-^$}" |
  paste -sd, -)
if [[ -z "$list" ]]; then
  echo "no libqcheck_mutant_*.so in $here/lib (make_bundle.sh builds the catalogue)" >"$logdir/mutants.log"
  exit 1
fi
"$here/bin/qcheck-mutants" --backends "$list,cuda-blocked-bug-tail" --seeds 1,2,3 --case-size limit \
  --max-executions 100000 --max-seconds 60 --minimize-seconds 2 --minimize-seeds 1 \
  --clean cuda-blocked --clean-executions "${QCHECK_MUTANTS_CLEAN_EXECUTIONS:-3000}" --max-find-seconds 60 --max-median-seconds 5 \
  --out "$logdir/mutants" >"$logdir/mutants.md" 2>"$logdir/mutants.log"
