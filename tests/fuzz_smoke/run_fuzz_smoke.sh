#!/usr/bin/env bash
# The fuzz-smoke checks, one libFuzzer run each (called by ctest, see
# tests/fuzz_smoke/CMakeLists.txt; runnable by hand with the same arguments).
#
#   run_fuzz_smoke.sh smoke FUZZER SEED_DIR SECONDS [TARGET FLAGS...]
#       fuzz from a copy of the seed corpus for SECONDS: any finding fails.
#   run_fuzz_smoke.sh find FUZZER RUNS SEED BACKEND REPLAY
#       start from an EMPTY corpus with -seed=SEED and at most RUNS executions
#       on a planted-bug backend: passes only when libFuzzer reports the
#       finding, an artifact exists, and qcheck-replay (REPLAY) gives a
#       mismatch (exit 1) for that artifact on the same backend.
#   run_fuzz_smoke.sh clean FUZZER RUNS SEED BACKEND [TARGET FLAGS...]
#       the same budget on a backend that must pass: any finding fails.
#   run_fuzz_smoke.sh find-replay FUZZER RUNS SEED BACKEND REPLAY [TARGET FLAGS...]
#       as find, for a target whose own replay driver (REPLAY, e.g.
#       fused_k_replay) judges the artifact: with --backend=BACKEND it must
#       report the finding (a non-zero exit), with the target's default
#       backend (the correct one) it must pass.
#
# Every mode prints the executions libFuzzer ran (stat::number_of_executed_units)
# and the wall time, the figures the proof of power is judged by.
set -u

# Everything lives in main, read whole before it runs: editing this file
# while a test runs cannot change what the running copy executes.
main() {
  mode=${1:?mode: smoke, find or clean}
  fuzzer=${2:?fuzzer binary}
  shift 2

  work=$(mktemp -d "${TMPDIR:-/tmp}/qcheck-fuzz-smoke.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  # On a failure the artifacts and the log are kept here (ctest runs in the
  # build tree's tests/fuzz_smoke folder).
  keep=${QCHECK_FUZZ_SMOKE_KEEP:-$PWD/fuzz-smoke-failures}
  mkdir -p "$work/corpus" "$work/artifacts"
  log="$work/log"

  # Flags every run needs: cases are ~110 bytes (len_control=0), big cases may
  # take a while under ASan, and the artifact goes to our folder.
  common=(-len_control=0 -max_len=4096 -timeout=120 -rss_limit_mb=4096 -malloc_limit_mb=2048
          -print_final_stats=1 "-artifact_prefix=$work/artifacts/")

  executed() { grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}'; }
  finding_reported() { grep -q -e '==== qcheck .* finding ====' -e 'ERROR: libFuzzer' -e 'ERROR: AddressSanitizer' \
                            -e 'runtime error:' -e 'ERROR: LeakSanitizer' "$log"; }

  keep_failure() {  # label
    local dest=$keep/$(printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '_' | cut -c1-80)
    rm -rf "$dest" && mkdir -p "$dest" && cp -r "$work/artifacts" "$log" "$dest/" 2>/dev/null
    echo "kept: $dest (log and artifacts)"
    for a in "$dest"/artifacts/*; do [ -f "$a" ] && echo "  artifact: $a"; done
  }

  run_fuzzer() {
    local start=$SECONDS
    "$fuzzer" "${common[@]}" "$@" >"$log" 2>&1
    status=$?
    elapsed=$((SECONDS - start))
  }

  # find and find-replay: fuzz $runs executions from seed $seed on the
  # planted $backend (with the target's flags given) until the finding
  # banner of op OP (a grep pattern) and its artifact are there; else fail
  # with the log's tail.
  fuzz_until_found() {  # OP [target flags...]
    local op=$1; shift
    run_fuzzer -runs="$runs" -seed="$seed" "--backend=$backend" "$@" "$work/corpus"
    artifact=$(ls "$work/artifacts"/crash-* 2>/dev/null | head -n 1)
    echo "find: $backend seed $seed: exit $status after ${elapsed}s, finding after $(executed) executions (budget $runs)"
    if [ "$status" -eq 0 ] || ! grep -q "==== qcheck $op finding ====" "$log" || [ -z "$artifact" ]; then
      echo "FAIL: no finding on planted bug $backend within $runs executions (seed $seed); log tail:"
      tail -n 40 "$log"
      keep_failure "find-$backend-seed$seed"
      exit 1
    fi
  }

  case "$mode" in
    smoke)
      seeds=${1:?seed corpus folder}; seconds=${2:?seconds}; shift 2
      find "$seeds" -type f ! -name 'README*' ! -name '*.md' -exec cp {} "$work/corpus/" \;
      # A fixed seed: the same mutations every run (how far they get in the
      # time depends on the machine).
      run_fuzzer -max_total_time="$seconds" -seed=1 "$@" "$work/corpus"
      echo "smoke: $(basename "$fuzzer") $*: exit $status after ${elapsed}s, $(executed) executions"
      if [ "$status" -ne 0 ] || finding_reported; then
        echo "FAIL: the fuzzer reported a finding (or stopped with exit $status); its log (finding first):"
        grep -m1 -B2 -A30 -e '==== qcheck' -e 'ERROR:' -e 'runtime error:' -e 'terminate called' -e 'deadly signal' "$log"
        echo "..."
        tail -n 25 "$log"
        keep_failure "smoke-$(basename "$fuzzer")-${*##*=}"
        exit 1
      fi
      ;;
    find)
      runs=${1:?runs}; seed=${2:?seed}; backend=${3:?backend}; replay=${4:?qcheck-replay}
      fuzz_until_found fused_q
      grep -m1 -A1 '^FAIL backend' "$log"
      "$replay" "$artifact" --backend "$backend" --profile qcheck >"$work/replay.log" 2>&1
      replay_status=$?
      if [ "$replay_status" -ne 1 ]; then
        echo "FAIL: qcheck-replay of the artifact exited $replay_status, expected 1 (mismatch):"
        cat "$work/replay.log"
        exit 1
      fi
      echo "artifact replays as a mismatch: $(head -n 1 "$work/replay.log")"
      ;;
    find-replay)
      runs=${1:?runs}; seed=${2:?seed}; backend=${3:?backend}; replay=${4:?replay driver}; shift 4
      fuzz_until_found '[a-z0-9_]*' "$@"
      grep -m1 'FAIL backend' "$log"
      "$replay" "--backend=$backend" "$@" "$artifact" >"$work/replay.log" 2>&1
      if [ $? -eq 0 ] || ! grep -q '==== qcheck [a-z0-9_]* finding ====' "$work/replay.log"; then
        echo "FAIL: $(basename "$replay") --backend=$backend passed the artifact:"
        cat "$work/replay.log"
        exit 1
      fi
      if ! "$replay" "$@" "$artifact" >"$work/replay.log" 2>&1; then
        echo "FAIL: the correct backend fails the artifact too:"
        cat "$work/replay.log"
        exit 1
      fi
      echo "the artifact replays as a finding on $backend and passes on the correct backend"
      ;;
    clean)
      runs=${1:?runs}; seed=${2:?seed}; backend=${3:?backend}; shift 3
      run_fuzzer -runs="$runs" -seed="$seed" "--backend=$backend" "$@" "$work/corpus"
      echo "clean: $backend seed $seed: exit $status after ${elapsed}s, $(executed) executions (budget $runs)"
      if [ "$status" -ne 0 ] || finding_reported; then
        echo "FAIL: a finding on $backend, which must pass; the finding:"
        grep -m1 -B2 -A40 -e '==== qcheck' -e 'ERROR:' -e 'runtime error:' -e 'terminate called' "$log"
        keep_failure "clean-$backend-seed$seed"
        exit 1
      fi
      ;;
    *)
      echo "unknown mode $mode (smoke, find, clean)"
      exit 2
      ;;
  esac
  exit 0
}

main "$@"
