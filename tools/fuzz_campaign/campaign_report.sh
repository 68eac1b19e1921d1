# campaign_report.sh: the campaign's triage, minimization and summary,
# sourced by run_campaign.sh (they read its variables: work, bin, jobs,
# timeout_s, fused_backends, worker_*). Kept apart only to keep each file
# readable; it is not run on its own.

# --- triage: each artifact replayed alone in a fresh process --------------------
# Artifacts are named wI.BACKEND.KIND-SHA1; the same input from several
# workers of one backend is replayed once. One line per input in
# triage/TARGET.BACKEND.KIND-SHA1: "class<TAB>signature<TAB>replay command<TAB>
# classes" (a fused_q mismatch's tensor/part/class=count, comma-separated).
# class: finding, known (a fused_q finding that a --known entry covers; its
# signature names the entry), or collateral (a crash whose input replays
# clean: the worker was ended by an other worker's GPU fault), or memory (a
# replay that needed more memory than the device has, even alone:
# fuzz/buffers/device_mirror.h; not a finding). A fused_q
# mismatch's signature is its group: where the outputs differ.
mask_digits() { sed -E "s/'[^']*'/'...'/g; s/0x[0-9a-fA-F]+/0x#/g; s/[0-9]+/#/g" | cut -c1-160; }
# qcheck-replay --json's counts as tensor/part/class=count, comma-separated.
mismatch_classes() {
  python3 -c '
import json, sys
text = sys.stdin.read()
try:
    counts = json.loads(text[text.index("{"):]).get("counts", [])
except ValueError:
    counts = []
print(",".join("%s/%s/%s=%d" % (c["tensor"], c["part"], c["class"], c["count"]) for c in counts))' 2>/dev/null
}
triage_key() {  # artifact path
  local a=$1
  echo "$(basename "$(dirname "$(dirname "$a")")").$(basename "$a" | cut -d. -f2-)"
}
triage_one() {  # artifact path
  local a=$1 key name t w b g kind out code sig class command classes=""
  key=$(triage_key "$a")
  name=$(basename "$a")
  [ -f "$work/triage/$key" ] && return
  t=${key%%.*}
  w=${name%%.*}
  b=${name#*.}; b=${b%%.*}
  kind=${name##*.}; kind=${kind%%-*}
  g=$(awk -v w="$w" '$1 == w {print $4}' "$work/workers.tsv")
  [ "$g" = "-" ] && g=""
  local env_args=(ASAN_OPTIONS="${ASAN_OPTIONS:-}:exitcode=99:protect_shadow_gap=0:detect_leaks=0"
                  UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:exitcode=99" CUDA_MPS_PIPE_DIRECTORY="$work/mps/off")
  [ -n "$g" ] && env_args+=(CUDA_VISIBLE_DEVICES="$g")
  if [ "$t" = fused_q ]; then
    local oracle="" known_args="" entry
    [ "$b" = cpu-simd ] && oracle="--oracle scalar"
    [ -n "$known_file" ] && known_args="--known $known_file"
    command="$replay $a --backend $b${oracle:+ $oracle}${known_args:+ $known_args}"
    # shellcheck disable=SC2086
    out=$(env "${env_args[@]}" timeout -k 5 "$((timeout_s * 2))" "$replay" "$a" --backend "$b" $oracle $known_args \
          --json 2>&1)
    code=$?
    entry=$(grep -m1 '"known":' <<<"$out" | tr -dc '0-9-')
    case $code in
      0) sig="" ;;
      1) sig=$(grep -m1 '"group"' <<<"$out" | cut -d'"' -f4)
         classes=$(mismatch_classes <<<"$out") ;;
      2) sig="invalid input: $(grep -m1 '"reason"' <<<"$out" | cut -d'"' -f4 | mask_digits)" ;;
      3) sig="runtime error: $(grep -m1 '"reason"' <<<"$out" | cut -d'"' -f4 | mask_digits)" ;;
      124|137) sig="timeout: the replay ran past $((timeout_s * 2)) s" ;;
      99) sig="crash: $(grep -m1 'SUMMARY: ' <<<"$out" | sed -E 's/^SUMMARY: //; s/ \([^)]*\)//' | mask_digits)" ;;
      *) sig="crash: exit $code$([ $code -gt 128 ] && echo " (signal $((code - 128)))")" ;;
    esac
  else
    local fuzzer=$bin/${t}_fuzzer
    command="$fuzzer $a"
    out=$(env "${env_args[@]}" timeout -k 5 "$((timeout_s * 2))" "$fuzzer" "$a" 2>&1)
    code=$?
    sig=""
    if [ $code -ne 0 ]; then
      sig=$(awk '/==== qcheck .* finding ====/ {getline; print; exit}
                 /what\(\):|SUMMARY: / {print; exit}' <<<"$out" | mask_digits)
      [ -n "$sig" ] || sig="exit $code"
    fi
  fi
  if [[ $sig == "runtime error: needs more memory than the device has"* ]]; then
    class=memory
  elif [ -n "$sig" ] && [ -n "${entry:-}" ] && [ "${entry:-}" != -1 ]; then
    class=known sig="known bug $entry: $(grep -m1 '"known_note"' <<<"$out" | cut -d'"' -f4) ($sig)"
  elif [ -n "$sig" ]; then
    class=finding
  elif [ "$kind" = crash ]; then
    class=collateral sig="ended while its input replays clean (an other worker's GPU fault, or flaky)"
  else
    class=finding sig="$kind that does not reproduce in a replay"
  fi
  printf '%s\t%s\t%s\t%s\n' "$class" "$sig" "$command" "$classes" >"$work/triage/$key.partial" &&
    mv "$work/triage/$key.partial" "$work/triage/$key"
}
# Every input not replayed yet, $jobs replays at a time, at most
# QCHECK_FUZZ_MAX_REPLAYS (default 300) per backend: a kernel that faults
# all campaign long leaves thousands of artifacts; the rest are counted.
max_replays=${QCHECK_FUZZ_MAX_REPLAYS:-300}
triage_all() {
  local a key b batch=()
  declare -A queued=() per_backend=()
  for a in "$work"/*/artifacts/*; do
    [ -f "$a" ] || continue
    key=$(triage_key "$a")
    b=$(basename "$a" | cut -d. -f2)
    [ -f "$work/triage/$key" ] && per_backend[$b]=$(( ${per_backend[$b]:-0} + 1 ))
  done
  for a in "$work"/*/artifacts/*; do
    [ -f "$a" ] || continue
    key=$(triage_key "$a")
    [ -f "$work/triage/$key" ] || [ -n "${queued[$key]:-}" ] && continue
    b=$(basename "$a" | cut -d. -f2)
    [ "${per_backend[$b]:-0}" -lt "$max_replays" ] || continue
    per_backend[$b]=$(( ${per_backend[$b]:-0} + 1 ))
    queued[$key]=1
    triage_one "$a" &
    batch+=($!)
    if [ ${#batch[@]} -ge "$jobs" ]; then wait "${batch[@]}"; batch=(); fi
  done
  [ ${#batch[@]} -eq 0 ] || wait "${batch[@]}"
}

# --- minimize: the first input of each fused_q finding group ------------------------
# qcheck-minimize (when the bin folder has it) within QCHECK_FUZZ_MINIMIZE_SECONDS
# each, $jobs at a time; results in minimized/N/ (report.txt, minimized.json,
# regression_test.cc, replay.txt), listed in the summary beside their group.
minimize_seconds=${QCHECK_FUZZ_MINIMIZE_SECONDS:-30}
minimize_groups() {
  [ -x "$bin/qcheck-minimize" ] || return
  [ "$minimize_seconds" -gt 0 ] 2>/dev/null || return
  local a f class sig b key batch=() n=0
  declare -A done=()
  mkdir -p "$work/minimized"
  for a in "$work"/fused_q/artifacts/*; do
    [ -f "$a" ] || continue
    f=$work/triage/$(triage_key "$a")
    [ -f "$f" ] || continue
    IFS=$'\t' read -r class sig _ <"$f"
    [ "$class" = finding ] || continue
    b=$(basename "$a" | cut -d. -f2)
    key="$b | $sig"
    [ -z "${done[$key]:-}" ] || continue
    n=$((n + 1))
    done[$key]=$n
    printf '%s\n' "$key" >"$work/minimized/$n.group"
    local oracle=()
    [ "$b" = cpu-simd ] && oracle=(--oracle scalar)
    env CUDA_MPS_PIPE_DIRECTORY="$work/mps/off" ASAN_OPTIONS="${ASAN_OPTIONS:-}:protect_shadow_gap=0:detect_leaks=0" \
      timeout -k 5 $((minimize_seconds * 3 + 60)) "$bin/qcheck-minimize" "$a" --backend "$b" "${oracle[@]}" \
      --budget "$minimize_seconds" --timeout "$timeout_s" --out "$work/minimized/$n" >"$work/minimized/$n.log" 2>&1 &
    batch+=($!)
    if [ ${#batch[@]} -ge "$jobs" ]; then wait "${batch[@]}"; batch=(); fi
  done
  [ ${#batch[@]} -eq 0 ] || wait "${batch[@]}"
}

summary() {
  echo "==== campaign summary: mode $mode, ${elapsed}s of ${minutes} min, ${nworkers} workers, $(date -u +%Y-%m-%dT%H:%M:%SZ) ===="
  if [ -n "$ray_address" ]; then ray_summary; else echo "GPUs: ${gpus[*]:-none}; $mps_note"; fi
  local t b n e=$((elapsed > 0 ? elapsed : 1))
  for t in "${targets[@]}"; do
    n=$(executions $t)
    printf '%-12s %12s execs %9s exec/s in all   corpus %s files\n' "$t" "$n" "$((n / e))" \
      "$(find "$work/$t/corpus" -type f | wc -l)"
  done
  for b in "${fused_backends[@]}"; do
    local w=0 i
    for ((i = 0; i < nworkers; i++)); do [ "${worker_backend[$i]}" = "$b" ] && w=$((w + 1)); done
    n=$(executions fused_q "$b")
    printf '  fused_q on %-28s %2d workers %12s execs %9s exec/s\n' "$b" "$w" "$n" "$((n / e))"
  done
  echo "worker restarts: $(restart_count) (reasons in $work/run/w*.restarts)"
  grep -l '^stopped after\|^gave up\|^actor lost' "$work"/run/w*.restarts 2>/dev/null | while read -r f; do
    local w; w=$(basename "$f" .restarts)
    echo "  $w ($(awk -v w="$w" '$1 == w {print $3}' "$work/workers.tsv")): $(grep -m1 '^stopped after\|^gave up\|^actor lost' "$f")"
  done
  [ -n "$merge_note" ] && echo "batch merge:$merge_note"
  echo
  echo "semantic bins reached by the fused_q corpus:"
  env CUDA_MPS_PIPE_DIRECTORY="$work/mps/off" QCHECK_PRINT_BINS=1 "$bin/fused_q_fuzzer" -runs=0 -len_control=0 \
    -max_len=4096 "--backend=${fused_backends[0]}" --keep-going "$work/fused_q/corpus" 2>&1 |
    sed -n '/^semantic bins reached/,$p'
  echo
  local collateral=0 memory=0 findings=0 unreplayed=0 known_count=0 a f name class sig command classes key
  declare -A groups=() first=() replay_of=() known_groups=() classes_of=()
  # JUnit rows (run_campaign.sh writes junit.xml from them): one testcase per
  # finding group, one skipped per known group, "no findings" otherwise.
  local junit=$work/junit.tsv
  : >"$junit"
  for a in "$work"/*/artifacts/*; do
    [ -f "$a" ] || continue
    f=$work/triage/$(triage_key "$a")
    [ -f "$f" ] || { unreplayed=$((unreplayed + 1)); continue; }
    name=$(basename "$a")
    IFS=$'\t' read -r class sig command classes <"$f"
    if [ "$class" = collateral ]; then collateral=$((collateral + 1)); continue; fi
    if [ "$class" = memory ]; then memory=$((memory + 1)); continue; fi
    if [ "$class" = known ]; then
      known_count=$((known_count + 1))
      key="${name#*.}"; key="${key%%.*} | ${sig%% (*}"
      known_groups[$key]=$(( ${known_groups[$key]:-0} + 1 ))
      continue
    fi
    findings=$((findings + 1))
    key="${name#*.}"; key="${key%%.*} | $sig"
    groups[$key]=$(( ${groups[$key]:-0} + 1 ))
    [ -n "$classes" ] && classes_of[$key]+="${classes},"
    [ -n "${first[$key]:-}" ] || { first[$key]=$name; replay_of[$key]=$command; }
  done
  [ $collateral -eq 0 ] || echo "$collateral artifacts of workers ended by an other worker's GPU fault (their inputs replay clean; not findings)"
  local retried notes
  read -r retried notes < <(memory_figures "$work")
  [ "${retried:-0}" -eq 0 ] || echo "memory pressure, retried alone: $retried (fused_q runs out of device memory that passed alone: not findings)"
  [ "${notes:-0}" -eq 0 ] && [ $memory -eq 0 ] ||
    echo "memory: $((notes + memory)) cases need more memory than the device has, even alone (not findings; the first ones with their cases: grep -A3 'memory note' $work/logs/*.log)"
  [ $unreplayed -eq 0 ] || echo "$unreplayed artifacts not replayed (over QCHECK_FUZZ_MAX_REPLAYS = $max_replays per backend), in $work/*/artifacts"
  if [ -n "$known_file" ]; then
    # The workers print the first failure of each known entry they meet and go on.
    local seen
    seen=$(grep -h '^==== qcheck fused_q known bug' "$work"/logs/*.log 2>/dev/null |
           sed -E 's/^==== qcheck fused_q (known bug [0-9]+ \([^)]*\)).*/\1/' | sort | uniq -c |
           sed -E 's/^ *([0-9]+) /  \1 worker runs met /')
    [ -n "$seen" ] && echo "KNOWN bugs the fused_q workers went on past ($known_file):" && echo "$seen"
  fi
  if [ $known_count -gt 0 ]; then
    echo "KNOWN: $known_count artifacts covered by $known_file (not findings, not minimized):"
    for key in "${!known_groups[@]}"; do
      echo "  ${known_groups[$key]} x known [$key]"
      printf 'known [%s]\tskip\t0\t%s artifacts covered by %s\t\n' "$key" "${known_groups[$key]}" "$known_file" >>"$junit"
    done
  fi
  if [ $findings -eq 0 ]; then
    echo "no findings$([ $known_count -gt 0 ] && echo " beyond the known bugs")"
    printf 'no findings\tpass\t0\t\t%s\n' "work folder $work" >>"$junit"
    [ -n "$new_finding" ] && echo "pr mode: stopped at the first new finding, $new_finding"
    return
  fi
  echo "FINDINGS: $findings artifacts in ${#groups[@]} groups (backend | where the outputs differ), one replay command each"
  for key in "${!groups[@]}"; do
    local group_text
    group_text=$(
      echo "  ${groups[$key]} x [$key]"
      # Every class the group's artifacts showed, with its count over them.
      [ -n "${classes_of[$key]:-}" ] && echo "    classes: $(tr ',' '\n' <<<"${classes_of[$key]}" |
        awk -F= 'NF == 2 {n[$1] += $2} END {for (c in n) printf "%s (%d)\n", c, n[c]}' | sort | paste -sd, - |
        sed 's/,/, /g')"
      echo "    replay: ${replay_of[$key]}"
      for g in "$work"/minimized/*.group; do
        [ -f "$g" ] && [ "$(cat "$g")" = "$key" ] || continue
        m=${g%.group}
        if [ -f "$m/minimized.json" ]; then
          echo "    minimized: $(sed -n 's/^minimized: //p' "$m/report.txt" | cut -c1-150)"
          echo "      $(grep -m1 'verdicts (oracle calls)' "$m/report.txt"); report $m/report.txt"
        else
          echo "    minimized: not written ($(tail -n 1 "$m.log" | cut -c1-120))"
        fi
      done
    )
    printf '%s\n' "$group_text"
    local body=${group_text//$'\t'/ }
    printf 'finding group [%s]\tfail\t0\t%s artifacts\t%s\n' "$key" "${groups[$key]}" "${body//$'\n'/\\n}" >>"$junit"
  done
  [ -n "$new_finding" ] && echo "pr mode: stopped at the first new finding, $new_finding"
}
