#!/usr/bin/env bash
# The GPU gate, run from inside a bundle made by make_bundle.sh:
#   1. nvidia-smi
#   1b. the nvcc-only example plugin built with nvcc alone from its one .cu
#      file and include/qcheck/qcheck_plugin.h (as a user builds one here); the gate
#      test then runs it over the covering grid, eager and from CUDA graphs
#   1c. the Python package's tests (python/tests) with this host's python3
#      and torch over the bundle's libqcheck, tools and plugins: every test
#      must run here, so a skip is a FAIL (the CUDA plugins, torch tensors);
#      the tests' own pinned wheels (xmlschema, elementpath: python/test-wheels)
#      installed into LOGDIR/test-deps by with_test_deps.sh; on a host without
#      chromium (the H200's) its one test, test_chromium_renders_the_page, is
#      deselected and the detail says so (CI runs it; test_report.py checks
#      the same page without a browser)
#   2. every test binary of tests/manifest.tsv, called directly (the ctest
#      files of the build tree hold absolute build paths), with its pass /
#      fail / skip counts: a binary whose tests all skip is SKIP, never PASS,
#      and a skipped gpu- or corpus-labelled test on this GPU host is a FAIL
#   2b. the corpus replayed QCHECK_GATE_REPEATS times (default 1000) on every
#      CUDA backend, every byte of each run against the first run's
#   3. compute-sanitizer memcheck, racecheck, initcheck and synccheck over the
#      gpu-labelled binaries with QCHECK_SMALL=1 (the tests then use small
#      shapes and sampled sweeps)
#   4. qcheck-bench (QCHECK_BENCH_ARGS, default none; "--quick" for a short run)
#   5. a campaign (under MPS where the host has it) with cuda-blocked beside
#      the planted fault cuda-blocked-bug-wild-write and the planted tail bug:
#      both found, the fault attributed to its input, every group minimized,
#      cuda-blocked clean and 1000 inputs further after the fault
#      (campaign_test.sh faults, stopped once it has seen all that)
#   6. the fused_q fuzz target through each plugin (the blocked kernel as a
#      plugin, the nvcc-only example) for QCHECK_GATE_PLUGIN_SECONDS (default
#      60) each, graph replay on: no finding
#   7. the CUDA planted-bug catalogue through qcheck-mutants
#      (run_mutants_gate.sh): every bug found in every seed or proven
#      equivalent, each within 60 s, the median under 5 s, the harmless twin
#      and the correct kernel silent
# Every log goes to LOGDIR; the summary table goes to stdout and
# LOGDIR/summary.txt, ending with the count of steps passed, failed and
# skipped. Exit status 0 only when no step failed.
# Env: QCHECK_GATE_SKIP="python tests sanitizers bench repeats campaign plugins mutants" skips steps; QCHECK_TEST_TIMEOUT
# (seconds per test binary, default 1800).
# LOGDIR/summary.txt holds the summary, LOGDIR/junit.xml the same steps as
# JUnit testcases (a CI system shows them as tests).
# usage: run_gpu_gate.sh LOGDIR
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ $# -ne 1 ]]; then
  echo "usage: $0 LOGDIR" >&2
  exit 2
fi
logdir=$1
mkdir -p "$logdir" || exit 2
logdir=$(cd "$logdir" && pwd)
# The test binaries travel packed (make_bundle.sh); unpacked once, beside the rest.
if [[ ! -d "$here/tests" && -f "$here/tests.tar.gz" ]]; then
  tar xzf "$here/tests.tar.gz" -C "$here" || { echo "run_gpu_gate: cannot unpack $here/tests.tar.gz" >&2; exit 2; }
fi
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export QCHECK_CORPUS_DIR="$here/corpus"
export PATH="$here/bin:$PATH"
export QCHECK_REPLAY="$here/bin/qcheck-replay"
export QCHECK_MINIMIZE="$here/bin/qcheck-minimize"
export QCHECK_PLUGIN_DIR="$here/lib"
skip=" ${QCHECK_GATE_SKIP:-} "
test_timeout=${QCHECK_TEST_TIMEOUT:-1800}

rows=()
passed_steps=0 failures=0 skipped_steps=0
step_started=$SECONDS
: >"$logdir/junit.tsv"
record() {  # step, result (PASS/FAIL/SKIP), detail
  rows+=("$(printf '%-48s %-5s %s' "$1" "$2" "$3")")
  # JUnit (written at the end, python/qcheck/reports/junit.py): one testcase per step.
  local result=pass
  case "$2" in FAIL) result=fail ;; SKIP) result=skip ;; esac
  printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$result" "$((SECONDS - step_started))" "${3//$'\t'/ }" \
    "logs: $logdir" >>"$logdir/junit.tsv"
  step_started=$SECONDS
  case "$2" in
    PASS) passed_steps=$((passed_steps + 1)) ;;
    FAIL) failures=$((failures + 1)) ;;
    *) skipped_steps=$((skipped_steps + 1)) ;;
  esac
  printf '%-48s %-5s %s\n' "$1" "$2" "$3"
}

# gtest's summary lines: "[  PASSED  ] 12 tests." and so on.
count() { sed -n "s/^\[  $1 *\] \([0-9][0-9]*\) tests\{0,1\}[,.].*/\1/p" "$2" | head -1; }

echo "== qcheck GPU gate: $here -> $logdir"
cat "$here/build-info.txt" 2>/dev/null

# 1. The device.
if nvidia-smi >"$logdir/nvidia-smi.log" 2>&1; then
  record "nvidia-smi" PASS "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  cat "$logdir/nvidia-smi.log"
else
  record "nvidia-smi" FAIL "see nvidia-smi.log"
fi

# 1b. The nvcc-only plugin, built as a user on this host would.
nvcc_plugin="$logdir/libfused_q_plugin.so"
nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if "$nvcc_bin" -O3 -arch=sm_90 -shared -Xcompiler -fPIC -I"$here/plugins/include" \
    "$here/plugins/nvcc_only/fused_q_plugin.cu" -o "$nvcc_plugin" >"$logdir/nvcc-plugin.log" 2>&1; then
  export QCHECK_NVCC_PLUGIN="$nvcc_plugin"
  record "nvcc-only plugin built" PASS "$("$nvcc_bin" --version | tail -1)"
else
  record "nvcc-only plugin built" FAIL "see nvcc-plugin.log"
fi

# 1c. The Python tests on this host's python3 and torch, as a user runs them
# (ctest's python.pytest runs them on the build machine, where the torch and
# CUDA tests skip: here none may).
if [[ "$skip" == *" python "* ]]; then
  record "pytest" SKIP "QCHECK_GATE_SKIP"
else
  start=$(date +%s)
  # The one test that needs a browser: where there is none it is deselected
  # (counted on pytest's line, never a skip) and named in the detail.
  browserless=() deselected=""
  if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
    browserless=(-k "not test_chromium_renders_the_page")
    deselected="; test_chromium_renders_the_page deselected: no chromium here (CI runs it)"
  fi
  QCHECK_TEST_WHEELS="$here/python/test-wheels" PYTHONPATH="$here/python" \
  QCHECK_LIBRARY="$here/lib/libqcheck.so" PYTHONDONTWRITEBYTECODE=1 \
    QCHECK_CASE_TOOL="$here/bin/qcheck-case" QCHECK_CHECK_TOOL="$here/bin/qcheck-check" QCHECK_PLUGIN_DIR="$here/lib" \
    timeout "$test_timeout" "$here/with_test_deps.sh" "$logdir/test-deps" \
    python3 -m pytest -q -rs -p no:cacheprovider "${browserless[@]}" "$here/python/tests" </dev/null \
    >"$logdir/pytest.log" 2>&1
  rc=$?
  totals=$(tail -n 1 "$logdir/pytest.log")
  detail="$totals, $(($(date +%s) - start))s, $(python3 -c 'import torch; print("torch", torch.__version__)' 2>&1 | tail -1)"
  if [[ $rc -ne 0 ]]; then
    record "pytest" FAIL "$detail, exit $rc"
  elif [[ "$totals" == *skipped* ]]; then
    record "pytest" FAIL "$detail: a test skipped on the GPU host ($(grep -m1 '^SKIPPED' "$logdir/pytest.log"))"
  elif [[ -n "$deselected" && "$totals" != *" 1 deselected"* ]]; then
    record "pytest" FAIL "$detail: expected exactly the chromium test deselected"
  else
    record "pytest" PASS "$detail$deselected"
  fi
fi

# The CUDA backends of this build that are real targets (planted bugs left out).
mapfile -t cuda_backends < <("$here/bin/qcheck-replay" --list-backends | awk '$1 ~ /^cuda-/ && $2 == "target" {print $1}')

# The GPU test binaries the sanitizer step runs (read apart from step 2, so
# that the sanitizers run in a call that skips the tests). Planted-bug
# binaries stay out: their kernels make the out-of-bounds accesses the
# sanitizers are there to report.
gpu_binaries=()
while IFS=$'\t' read -r name labels; do
  [[ -n "$name" && ",$labels," == *,gpu,* && "$name" != *planted* && "$name" != *_replay ]] && gpu_binaries+=("$name")
done <"$here/tests/manifest.tsv"

# 2. Every test binary.
if [[ "$skip" == *" tests "* ]]; then
  record "test binaries and replays" SKIP "QCHECK_GATE_SKIP"
else
  while IFS=$'\t' read -r name labels; do
    [[ -n "$name" ]] || continue
    log="$logdir/test-$name.log"
    start=$(date +%s)
    if [[ "$name" == *_replay ]]; then
      # A fuzz target's plain replay driver (not gtest): it runs the corpus
      # folder of its target; fused_q's on every backend this host runs.
      target=${name%_replay}
      rc=0
      backends=("")
      if [[ $target == fused_q ]]; then
        backends=(--backend=cpu-simd)
        for b in "${cuda_backends[@]}"; do backends+=("--backend=$b"); done
      fi
      folders=("$here/corpus/$target")
      [[ $target == capi ]] && folders=("$here/corpus/case_decode" "$here/corpus/fused_q")  # it has no corpus of its own
      for backend in "${backends[@]}"; do
        timeout "$test_timeout" "$here/tests/$name" $backend "${folders[@]}" </dev/null >>"$log" 2>&1 || rc=$?
      done
      runs=${#backends[@]}
      record "replay $name" "$([[ $rc -eq 0 ]] && echo PASS || echo FAIL)" \
        "$(grep -c 'no finding' "$log") of $runs runs without a finding, exit $rc [$labels]"
      continue
    fi
    timeout "$test_timeout" "$here/tests/$name" --gtest_color=no </dev/null >"$log" 2>&1
    rc=$?
    seconds=$(($(date +%s) - start))
    passed=$(count PASSED "$log"); failed=$(count FAILED "$log"); skipped=$(count SKIPPED "$log")
    detail="passed ${passed:-0}, failed ${failed:-0}, skipped ${skipped:-0}, ${seconds}s [$labels]"
    if [[ $rc -ne 0 || -z "$passed$skipped" ]]; then
      record "test $name" FAIL "$detail, exit $rc"
    elif [[ ( ",$labels," == *,gpu,* || ",$labels," == *,corpus,* ) && "${skipped:-0}" != 0 ]]; then
      record "test $name" FAIL "$detail: a test skipped on the GPU host ($(grep -m1 -A1 '^\[  SKIPPED \]' "$log" | tail -1))"
    elif [[ "${passed:-0}" == 0 ]]; then
      record "test $name" SKIP "$detail: every test skipped"
    else
      record "test $name" PASS "$detail"
    fi
  done <"$here/tests/manifest.tsv"
fi

# 2b. The corpus replayed many times on every CUDA backend: each run's bytes
# against the first run's (a race shows as a difference between runs).
repeats=${QCHECK_GATE_REPEATS:-1000}
if [[ "$skip" == *" repeats "* ]]; then
  record "corpus x$repeats on the CUDA backends" SKIP "QCHECK_GATE_SKIP"
elif [[ ${#cuda_backends[@]} -eq 0 ]]; then
  record "corpus x$repeats on the CUDA backends" FAIL "qcheck-replay lists no CUDA backend"
else
  for b in "${cuda_backends[@]}"; do
    log="$logdir/repeat-$b.log"
    start=$(date +%s)
    timeout "$test_timeout" "$here/bin/qcheck-replay" "$here/corpus/fused_q" "$here/corpus/examples" \
      "$here/corpus/regressions" --backend "$b" --repeat "$repeats" --quiet </dev/null >"$log" 2>&1
    rc=$?
    line="$(tail -n 1 "$log"), $(($(date +%s) - start))s"
    if [[ $rc -eq 0 ]]; then record "corpus x$repeats $b" PASS "$line"; else record "corpus x$repeats $b" FAIL "$line, exit $rc"; fi
  done
fi

# 3. compute-sanitizer over the small-shape subset of the gpu binaries.
if [[ "$skip" == *" sanitizers "* ]]; then
  record "compute-sanitizer" SKIP "QCHECK_GATE_SKIP"
elif ! command -v compute-sanitizer >/dev/null; then
  record "compute-sanitizer" FAIL "compute-sanitizer is not on PATH"
elif [[ ${#gpu_binaries[@]} -eq 0 ]]; then
  record "compute-sanitizer" FAIL "tests/manifest.tsv lists no gpu test binary"
else
  for tool in memcheck racecheck initcheck synccheck; do
    for name in "${gpu_binaries[@]}"; do
      log="$logdir/sanitizer-$tool-$name.log"
      extra=()
      [[ $tool == memcheck ]] && extra=(--leak-check full)
      QCHECK_SMALL=1 timeout "$test_timeout" compute-sanitizer --tool "$tool" "${extra[@]}" \
        --error-exitcode 99 "$here/tests/$name" --gtest_color=no </dev/null >"$log" 2>&1
      rc=$?
      summary=$(grep -a 'ERROR SUMMARY' "$log" | tail -1 | sed 's/^========= //')
      if [[ $rc -eq 0 ]]; then
        record "$tool $name" PASS "${summary:-no summary line}"
      else
        record "$tool $name" FAIL "${summary:-no summary line}, exit $rc"
      fi
    done
  done
fi

# 4. The benchmark.
if [[ "$skip" == *" bench "* ]]; then
  record "qcheck-bench" SKIP "QCHECK_GATE_SKIP"
elif [[ -x "$here/bin/qcheck-bench" ]]; then
  start=$(date +%s)
  # shellcheck disable=SC2086
  if "$here/bin/qcheck-bench" ${QCHECK_BENCH_ARGS:-} >"$logdir/bench.log" 2>&1; then
    record "qcheck-bench ${QCHECK_BENCH_ARGS:-}" PASS "$(($(date +%s) - start))s, see bench.log"
  else
    record "qcheck-bench ${QCHECK_BENCH_ARGS:-}" FAIL "see bench.log"
  fi
else
  record "qcheck-bench" FAIL "bin/qcheck-bench missing from the bundle"
fi

# 5. The campaign survives a planted GPU fault.
if [[ "$skip" == *" campaign "* ]]; then
  record "campaign with a planted fault" SKIP "QCHECK_GATE_SKIP"
else
  start=$(date +%s)
  QCHECK_TEST_CORRECT=cuda-blocked QCHECK_TEST_FAULT=cuda-blocked-bug-wild-write \
  QCHECK_TEST_FAULT_SIGNATURE='runtime error: .*cudaErrorIllegalAddress' QCHECK_TEST_FAULT_EXIT=3 \
  QCHECK_TEST_BUG=cuda-blocked-bug-tail QCHECK_TEST_KEEP_OUTPUT="$logdir/campaign-faults-output.log" \
  QCHECK_TEST_WHEELS="$here/python/test-wheels" \
    "$here/with_test_deps.sh" "$logdir/test-deps" \
    "$here/campaign_test.sh" faults "$here/run_campaign.sh" "$here/bin/fused_q_fuzzer" "$here/bin/numerics_fuzzer" \
      "$here/bin/case_decode_fuzzer" "$here/bin/qcheck-replay" "$here/bin/fused_q.dict" "$here/corpus" \
      "$here/bin/qcheck-minimize" \
      </dev/null >"$logdir/campaign-faults.log" 2>&1
  rc=$?
  line="$(grep -m1 -E '^(PASS|FAIL)' "$logdir/campaign-faults.log"), $(($(date +%s) - start))s"
  record "campaign with a planted fault" "$([[ $rc -eq 0 ]] && echo PASS || echo FAIL)" "$line"
fi

# 6. Fuzzing through the plugin door.
plugin_seconds=${QCHECK_GATE_PLUGIN_SECONDS:-60}
if [[ "$skip" == *" plugins "* ]]; then
  record "fuzz through the plugins" SKIP "QCHECK_GATE_SKIP"
else
  for plugin in "$here/lib/libqcheck_blocked_plugin.so" "${QCHECK_NVCC_PLUGIN:-}"; do
    name=$(basename "${plugin:-nvcc-only plugin (not built)}")
    if [[ -z "$plugin" || ! -f "$plugin" ]]; then
      record "fuzz plugin $name" FAIL "no such plugin library"
      continue
    fi
    log="$logdir/fuzz-plugin-$name.log"
    work="$logdir/fuzz-plugin-$name"
    mkdir -p "$work/corpus"
    (cd "$work" && timeout $((plugin_seconds + 120)) "$here/bin/fused_q_fuzzer" --backend="plugin:$plugin" --graph \
      --case-size=usual -len_control=0 -dict="$here/bin/fused_q.dict" -max_total_time="$plugin_seconds" \
      -print_final_stats=1 corpus "$here/corpus/fused_q" </dev/null >"$log" 2>&1)
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    detail="${execs:-?} executions, ${rate:-?} exec/s, ${plugin_seconds}s, exit $rc"
    if [[ $rc -eq 0 ]] && ! grep -q '==== qcheck fused_q finding' "$log"; then
      record "fuzz plugin $name" PASS "$detail"
    else
      record "fuzz plugin $name" FAIL "$detail, see $(basename "$log")"
    fi
  done
fi

# 7. The planted-bug catalogue: do the fuzzers find every bug, fast?
if [[ "$skip" == *" mutants "* ]]; then
  record "planted-bug catalogue" SKIP "QCHECK_GATE_SKIP"
else
  start=$(date +%s)
  "$here/run_mutants_gate.sh" "$logdir" </dev/null
  rc=$?
  detail="$(grep -m1 '^fuzzer:' "$logdir/mutants.md"); $(grep -m1 '^time to find' "$logdir/mutants.md"), $(($(date +%s) - start))s"
  record "planted-bug catalogue" "$([[ $rc -eq 0 ]] && echo PASS || echo FAIL)" "$detail"
fi

{
  echo
  echo "== summary ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  printf '%s\n' "${rows[@]}"
  echo "== $((passed_steps + failures + skipped_steps)) steps: $passed_steps passed, $failures failed, $skipped_steps skipped"
} | tee "$logdir/summary.txt"
python3 "$here/python/qcheck/reports/junit.py" "qcheck GPU gate" "$logdir/junit.xml" <"$logdir/junit.tsv" ||
  echo "run_gpu_gate: could not write $logdir/junit.xml" >&2
[[ $failures -eq 0 ]]
