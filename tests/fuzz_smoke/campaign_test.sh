#!/usr/bin/env bash
# Tests of the fuzz campaign (tools/fuzz_campaign/run_campaign.sh) on the CPU
# backends, called by ctest (label fuzz-smoke, tests/fuzz_smoke/CMakeLists.txt):
#
#   campaign_test.sh MODE CAMPAIGN FUSED_Q_FUZZER NUMERICS_FUZZER CASE_DECODE_FUZZER REPLAY DICT CORPUS MINIMIZE
#
#   faults   batch mode, 1 min, a correct backend beside a planted fault and a
#            planted bug: both found and grouped, the fault attributed to its
#            input (its replay fails the same way), each group minimized, the
#            correct backend goes on fuzzing and has no finding, the corpus is
#            merged at the end.
#            The backends: QCHECK_TEST_CORRECT, QCHECK_TEST_FAULT (with
#            QCHECK_TEST_FAULT_SIGNATURE, a regex, and the exit code of its
#            replay, QCHECK_TEST_FAULT_EXIT), QCHECK_TEST_BUG; the defaults are
#            the CPU ones, the GPU gate sets the CUDA ones (under MPS).
#   pr       pr mode stops at the first new finding, well before its time
#   hang     a hang becomes a timeout finding
#   signal   SIGTERM: the summary is printed, corpus kept, exit 143
#   setup    an unwritable work folder and a full disk: one line, exit 2
set -u
mode=${1:?mode}
campaign=${2:?run_campaign.sh}
work=$(mktemp -d "${TMPDIR:-/tmp}/qcheck-campaign-test.XXXXXX")
echo "campaign_test $mode: work folder $work (removed when the test passes)"
# QCHECK_TEST_KEEP_OUTPUT=FILE keeps the campaign's output of a passing test.
passed() {
  echo "PASS: $*"
  [ -n "${QCHECK_TEST_KEEP_OUTPUT:-}" ] && cp "$work/out" "$QCHECK_TEST_KEEP_OUTPUT"
  rm -rf "$work"
  exit 0
}
mkdir -p "$work/bin"
for f in "$3" "$4" "$5" "$6" "$7" "$9"; do ln -s "$f" "$work/bin/"; done
corpus=$8
export QCHECK_FUZZ_MINIMIZE_SECONDS=${QCHECK_FUZZ_MINIMIZE_SECONDS:-10}
export QCHECK_CASE_SIZE=tiny

fail() { echo "FAIL: $*"; [ -f "$work/out" ] && { echo "--- campaign output:"; cat "$work/out"; }; exit 1; }
expect() {  # pattern description
  grep -qE -- "$1" "$work/out" || fail "$2 (no line matching: $1)"
}
run() {  # minutes [campaign args]: output in $work/out, exit in $status
  QCHECK_FUZZ_WORK_DIR=$work/run "$campaign" --bin "$work/bin" --corpus "$corpus" "$@" >"$work/out" 2>&1
  status=$?
}

case "$mode" in
  faults)
    correct=${QCHECK_TEST_CORRECT:-cpu-simd}
    fault=${QCHECK_TEST_FAULT:-cpu-bug-crash}
    fault_signature=${QCHECK_TEST_FAULT_SIGNATURE:-crash: .*SEGV}
    fault_exit=${QCHECK_TEST_FAULT_EXIT:-99}
    bug=${QCHECK_TEST_BUG:-cpu-model-bug-skip-last-tail-token}
    export QCHECK_FUZZ_BACKENDS=$correct,$fault,$bug
    run --mode batch 1
    [ $status -eq 1 ] || fail "exit $status, expected 1 (findings)"
    expect "^  [0-9]+ x \\[$fault \\| $fault_signature" "the planted fault is a finding grouped by its signature"
    expect "^  [0-9]+ x \\[$bug \\| " "the planted bug is a finding"
    grep -q "^  [0-9]* x \\[$correct " "$work/out" && fail "a finding on the correct backend $correct"
    line=$(grep -m1 "^  fused_q on $correct " "$work/out")
    execs=$(awk '{print $6}' <<<"$line")
    [ "${execs:-0}" -gt 1000 ] || fail "$correct ran only ${execs:-0} inputs beside the faulting worker: $line"
    expect '^worker restarts: [1-9]' "the workers that stopped were restarted"
    expect '^batch merge: fused_q [0-9]+ -> [0-9]+ files' "batch mode merges the corpus"
    expect '^    minimized: T=[0-9]+ H=1 ' "each finding group is minimized"
    grep -A3 "\\[$fault | " "$work/out" | grep -q '^    minimized: T=7 ' || fail "the fault is not minimized to T = 7"

    # The fault is attributed to its input: its artifact fails the same way in a replay.
    command=$(grep -A1 "\\[$fault | " "$work/out" | sed -n 's/^    replay: //p' | head -1)
    [ -n "$command" ] || fail "no replay command for the fault"
    ASAN_OPTIONS=exitcode=99 $command >/dev/null 2>&1
    replay_status=$?
    [ $replay_status -eq "$fault_exit" ] || fail "the fault's artifact exits $replay_status in a replay, not $fault_exit: $command"
    grep -E '^[0-9]+ artifacts of workers ended by an other' "$work/out"
    passed "fault and bug found and grouped, $correct ran $execs inputs, replay: $command"
    ;;
  pr)
    export QCHECK_FUZZ_BACKENDS=cpu-simd,cpu-model-bug-log2f-scale
    start=$SECONDS
    run --mode pr 2
    [ $status -eq 1 ] || fail "exit $status, expected 1"
    expect '^pr mode: stopped at the first new finding' "pr mode names the finding it stopped at"
    [ $((SECONDS - start)) -lt 90 ] || fail "pr mode ran $((SECONDS - start)) s of its 2 min"
    passed "pr mode stopped after $((SECONDS - start)) s"
    ;;
  hang)
    export QCHECK_FUZZ_BACKENDS=cpu-simd,cpu-bug-hang QCHECK_FUZZ_TIMEOUT=3
    run --mode pr 2
    [ $status -eq 1 ] || fail "exit $status, expected 1"
    expect '^  [0-9]+ x \[cpu-bug-hang \| timeout' "the hang is a timeout finding"
    passed "the hang became a timeout finding"
    ;;
  signal)
    QCHECK_FUZZ_WORK_DIR=$work/run "$campaign" --bin "$work/bin" --corpus "$corpus" 5 >"$work/out" 2>&1 &
    pid=$!
    sleep 20
    kill -TERM $pid
    wait $pid
    status=$?
    [ $status -eq 143 ] || fail "exit $status after SIGTERM, expected 143"
    expect '^campaign: SIGTERM: stopped after' "the campaign says it was stopped"
    expect '^==== campaign summary' "the summary is printed"
    expect '^no findings' "the summary ends with its findings"
    [ "$(find "$work/run/fused_q/corpus" -type f | wc -l)" -gt 0 ] || fail "the corpus was not kept"
    pgrep -f "$work/bin/" >/dev/null && fail "workers still run after the campaign ended"
    passed "SIGTERM gave the summary, the corpus stayed"
    ;;
  setup)
    touch "$work/a-file"
    QCHECK_FUZZ_WORK_DIR=$work/a-file/run "$campaign" --bin "$work/bin" --corpus "$corpus" 1 >"$work/out" 2>&1
    status=$?
    [ $status -eq 2 ] || fail "exit $status for an unwritable work folder, expected 2"
    expect '^campaign: cannot create the work folder' "one line about the work folder"
    [ "$(wc -l <"$work/out")" -eq 1 ] || fail "more than one line for an unwritable work folder"
    QCHECK_FUZZ_MIN_FREE_MB=999999999 QCHECK_FUZZ_WORK_DIR=$work/run "$campaign" --bin "$work/bin" \
      --corpus "$corpus" 1 >"$work/out" 2>&1
    status=$?
    [ $status -eq 2 ] || fail "exit $status for a full disk, expected 2"
    expect 'MiB free, less than QCHECK_FUZZ_MIN_FREE_MB' "one line about the disk"
    [ -z "$(find "$work/run" -path '*/artifacts/*' -type f 2>/dev/null)" ] || fail "artifacts written on a full disk"
    passed "unwritable folder and full disk refused in one line each"
    ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
