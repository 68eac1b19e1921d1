#!/usr/bin/env bash
# Tests of the fuzz campaign (tools/fuzz_campaign/run_campaign.sh) on the CPU
# backends, called by ctest (label fuzz-smoke, tests/fuzz_smoke/CMakeLists.txt):
#
#   campaign_test.sh MODE CAMPAIGN FUSED_Q_FUZZER NUMERICS_FUZZER CASE_DECODE_FUZZER REPLAY DICT CORPUS MINIMIZE
#
#   faults   batch mode, a correct backend beside a planted fault and a
#            planted bug: both found and grouped, the fault attributed to its
#            input (its replay fails the same way), every group minimized, the
#            correct backend runs 1000 inputs after the fault's first finding
#            and has none itself, the corpus is merged at the end. The test
#            watches the run and stops it (SIGTERM: a background job ignores
#            SIGINT) once all of that happened,
#            within the campaign's 5 minutes.
#            The backends: QCHECK_TEST_CORRECT, QCHECK_TEST_FAULT (with
#            QCHECK_TEST_FAULT_SIGNATURE, a regex, and the exit code of its
#            replay, QCHECK_TEST_FAULT_EXIT), QCHECK_TEST_BUG; the defaults are
#            the CPU ones, the GPU gate sets the CUDA ones (under MPS).
#   pr       pr mode stops at the first new finding, before its time
#   known    pr mode with --known covering one planted bug: its workers go on
#            past it (no artifact), the summary names it, and the run stops
#            at the second planted bug
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
start_in_background() {  # [campaign args]: the campaign's pid in $pid
  QCHECK_FUZZ_WORK_DIR=$work/run "$campaign" --bin "$work/bin" --corpus "$corpus" "$@" >"$work/out" 2>&1 &
  pid=$!
}
# While the campaign runs (reading its work folder, as its own progress line does):
workers_of() {  # backend: the worker numbers that run it
  awk -v b="$1" '$3 == b {sub(/^w/, "", $1); print $1}' "$work/run/workers.tsv" 2>/dev/null
}
source "$(dirname "$campaign")/campaign_status.sh"
executions_of() {  # backend: its inputs so far, over all its workers and their rounds
  local total=0 i
  for i in $(workers_of "$1"); do total=$((total + $(worker_executions "$work/run" "$i"))); done
  echo $total
}
findings_of() {  # backend: the findings its workers stopped on so far
  local total=0 i n
  for i in $(workers_of "$1"); do
    n=$(grep -c '^finding' "$work/run/run/w$i.restarts" 2>/dev/null)
    total=$((total + ${n:-0}))
  done
  echo $total
}

case "$mode" in
  faults)
    correct=${QCHECK_TEST_CORRECT:-cpu-simd}
    fault=${QCHECK_TEST_FAULT:-cpu-bug-crash}
    fault_signature=${QCHECK_TEST_FAULT_SIGNATURE:-crash: .*SEGV}
    fault_exit=${QCHECK_TEST_FAULT_EXIT:-99}
    bug=${QCHECK_TEST_BUG:-cpu-model-bug-skip-last-tail-token}
    export QCHECK_FUZZ_BACKENDS=$correct,$fault,$bug
    # Wait for the events, not for a rate: the fault found, then the correct
    # backend 1000 inputs further, and the bug found; the campaign's own 5
    # minutes bound the wait.
    start_in_background --mode batch 5
    after_fault=""
    while kill -0 $pid 2>/dev/null; do
      if [ -z "$after_fault" ] && [ "$(findings_of "$fault")" -gt 0 ]; then after_fault=$(executions_of "$correct"); fi
      if [ -n "$after_fault" ] && [ "$(executions_of "$correct")" -gt $((after_fault + 1000)) ] &&
         [ "$(findings_of "$bug")" -gt 0 ]; then
        kill -TERM $pid
        break
      fi
      sleep 2
    done
    ran=$(executions_of "$correct")
    wait $pid
    status=$?
    [ -n "$after_fault" ] || fail "no finding on $fault within the campaign's time"
    [ "$ran" -gt $((after_fault + 1000)) ] ||
      fail "$correct ran $((ran - after_fault)) inputs after the fault's first finding, within the campaign's time"
    [ $status -eq 1 ] || fail "exit $status, expected 1 (findings)"
    expect '^campaign: SIGTERM: stopped after' "the test stopped the campaign once it had seen the events"
    expect "^  [0-9]+ x \\[$fault \\| $fault_signature" "the planted fault is a finding grouped by its signature"
    expect "^  [0-9]+ x \\[$bug \\| " "the planted bug is a finding"
    grep -A1 "\\[$bug | " "$work/out" | grep -qE '^    classes: [a-z_0-9]+/[^/]+/[a-z-]+ \([0-9]+\)' ||
      fail "the planted bug's group does not list its classes with their counts"
    grep -q "^  [0-9]* x \\[$correct " "$work/out" && fail "a finding on the correct backend $correct"
    expect '^worker restarts: [1-9]' "the workers that stopped were restarted"
    expect '^batch merge: fused_q [0-9]+ -> [0-9]+ files' "batch mode merges the corpus"
    # Every finding group is minimized: each group's lines (up to the next
    # group) hold a minimized case.
    groups=$(grep -c '^  [0-9]* x \[' "$work/out")
    unminimized=$(awk '/^  [0-9]+ x \[/ {if (group != "" && !done) print group; group = $0; done = 0; next}
                       /^    minimized: T=[0-9]+ / {done = 1}
                       END {if (group != "" && !done) print group}' "$work/out")
    [ "$groups" -ge 2 ] || fail "$groups finding groups, expected the fault's and the bug's"
    [ -z "$unminimized" ] || fail "finding groups without a minimized case: $unminimized"
    grep -A3 "\\[$fault | " "$work/out" | grep -q '^    minimized: T=7 ' || fail "the fault is not minimized to T = 7"
    grep -A3 "\\[$bug | " "$work/out" | grep -qE '^    minimized: T=[0-9]+ H=1 ' || fail "the bug is not minimized to one head"
    # The same groups as JUnit testcases, each with its replay command and minimized case.
    junit=$work/run/junit.xml
    [ -f "$junit" ] || fail "no $junit"
    junit_failures=$(python3 -c 'import sys, xml.etree.ElementTree as E
print(E.parse(sys.argv[1]).getroot().find("testsuite").get("failures"))' "$junit")
    [ "$junit_failures" = "$groups" ] || fail "junit.xml has $junit_failures failing testcases for $groups groups"
    [ "$(grep -c 'replay: ' "$junit")" -ge "$groups" ] && [ "$(grep -c 'minimized: T=' "$junit")" -ge "$groups" ] ||
      fail "junit.xml lacks a replay command or a minimized case for some group"
    # And the HTML page: the plot, the groups, nothing from outside.
    page=$work/run/report.html
    [ -f "$page" ] || fail "no $page"
    grep -q "Finding groups ($groups)" "$page" && grep -q '<polyline' "$page" && grep -q 'replay: ' "$page" ||
      fail "report.html lacks the groups, the plot or the replay commands"
    grep -qiE '<script|<link|src=|href=' "$page" && fail "report.html refers to something outside it"
    # Against python/tests/junit.xsd (junit_schema.py: xmlschema, which ctest and
    # the GPU gate put on PYTHONPATH through with_test_deps.sh), in the GPU
    # bundle (beside the campaign) or the repository (two folders up).
    schema_check=
    for candidate in "$(dirname "$campaign")/python/tests/junit_schema.py" \
                     "$(dirname "$campaign")/../../python/tests/junit_schema.py"; do
      [ -f "$candidate" ] && { schema_check=$candidate; break; }
    done
    [ -n "$schema_check" ] || fail "no python/tests/junit_schema.py beside $campaign to validate junit.xml"
    python3 "$schema_check" "$junit" 2>"$work/schema.log" || fail "junit.xml against junit.xsd: $(cat "$work/schema.log")"
    # Workers ended by an other worker's fault: on the CPU no worker can end
    # another (separate processes, no shared GPU context), so there must be
    # none; under MPS there may be some, never more than the artifacts.
    collateral=$(sed -n 's/^\([0-9]*\) artifacts of workers ended by an other.*/\1/p' "$work/out")
    if [[ $fault == cuda-* ]]; then
      artifacts=$(find "$work"/run/*/artifacts -type f | wc -l)
      [ "${collateral:-0}" -le "$artifacts" ] || fail "$collateral collateral artifacts of $artifacts"
    else
      [ -z "$collateral" ] || fail "$collateral artifacts counted as ended by an other worker on the CPU backends"
    fi

    # The fault is attributed to its input: its artifact fails the same way in a replay.
    command=$(grep -A1 "\\[$fault | " "$work/out" | sed -n 's/^    replay: //p' | head -1)
    [ -n "$command" ] || fail "no replay command for the fault"
    ASAN_OPTIONS=exitcode=99 $command >/dev/null 2>&1
    replay_status=$?
    [ $replay_status -eq "$fault_exit" ] || fail "the fault's artifact exits $replay_status in a replay, not $fault_exit: $command"
    passed "fault and bug found and grouped, $correct ran $((ran - after_fault)) inputs after the fault, replay: $command"
    ;;
  pr)
    export QCHECK_FUZZ_BACKENDS=cpu-simd,cpu-model-bug-log2f-scale
    run --mode pr 5
    [ $status -eq 1 ] || fail "exit $status, expected 1"
    # The line is written only when the loop broke on a new finding, before
    # the deadline; the summary's header gives the seconds the loop ran.
    expect '^pr mode: stopped at the first new finding' "pr mode names the finding it stopped at"
    ran=$(sed -n 's/^==== campaign summary: mode pr, \([0-9]*\)s of 5 min.*/\1/p' "$work/out")
    [ -n "$ran" ] && [ "$ran" -lt 300 ] || fail "pr mode ran '${ran}' s of its 5 min"
    passed "pr mode stopped after $ran s"
    ;;
  known)
    # The log2f scale bug shows in the indexer outputs only; the tail bug
    # always leaves query_out unwritten as well, so no entry covers it.
    export QCHECK_FUZZ_BACKENDS=cpu-simd,cpu-model-bug-log2f-scale,cpu-model-bug-skip-last-tail-token
    printf '%s\n' '{"known": [{"signature": "index_q_fp8/*", "note": "planted log2f scale"},' \
      '{"signature": "index_weights_out/*", "note": "planted log2f scale"}]}' >"$work/known.json"
    run --mode pr --known "$work/known.json" 5
    [ $status -eq 1 ] || fail "exit $status, expected 1 (the tail bug is new)"
    expect '^pr mode: stopped at the first new finding, .*cpu-model-bug-skip-last-tail-token' \
      "pr mode stopped at the tail bug, not at the known one"
    grep -q '^  [0-9]* x \[cpu-model-bug-log2f-scale ' "$work/out" && fail "the known bug is listed as a finding"
    # The log2f bug fails 23 of the seed corpus's cases, which every worker
    # runs first: its workers met it and went on, leaving no artifact.
    expect '^  [0-9]+ worker runs met known bug [01] \(planted log2f scale\)' \
      "the summary names the known bug the workers went on past"
    [ -z "$(find "$work"/run/fused_q/artifacts -name '*log2f*' 2>/dev/null)" ] ||
      fail "a worker stopped on the known bug (an artifact of cpu-model-bug-log2f-scale)"
    passed "pr mode went on past the known bug and stopped at the second one"
    ;;
  hang)
    export QCHECK_FUZZ_BACKENDS=cpu-simd,cpu-bug-hang QCHECK_FUZZ_TIMEOUT=3
    run --mode pr 2
    [ $status -eq 1 ] || fail "exit $status, expected 1"
    expect '^  [0-9]+ x \[cpu-bug-hang \| timeout' "the hang is a timeout finding"
    passed "the hang became a timeout finding"
    ;;
  signal)
    start_in_background 5
    # SIGTERM once the campaign is in its loop (its first progress line,
    # after 15 s; it traps the signals before the loop), bound: 120 s.
    for ((waited = 0; waited < 120; waited += 2)); do
      grep -q '^\[[0-9][0-9]:[0-9][0-9]\] fused_q' "$work/out" && break
      sleep 2
    done
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
