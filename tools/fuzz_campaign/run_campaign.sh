#!/usr/bin/env bash
# run_campaign.sh: the fuzz campaign over binaries already built. campaign.sh
# builds them on a build machine and calls this; the GPU bundle carries both
# (DIR/qcheck fuzz). The same campaign everywhere:
#
#   run_campaign.sh --bin DIR --corpus DIR [--mode default|pr|batch] [--known FILE] [--ray ADDRESS] MINUTES
#
#   --bin DIR     fused_q_fuzzer, numerics_fuzzer, case_decode_fuzzer,
#                 qcheck-replay, fused_q.dict and qcheck-minimize (each fused_q
#                 finding group is minimized when it is there); with
#                 fused_k_fuzzer there, one worker fuzzes fused_k (the CPU
#                 model of its kernel against the oracle, ops/fused_k/fuzz)
#   --corpus DIR  the repository's corpus/: seeds are copied into the work
#                 folder (the repository is never written), regressions/
#                 tells pr mode which findings are known
#   --mode        default: fuzz for MINUTES, then triage every finding;
#                 pr: stop at the first new finding (one that no case of
#                 corpus/regressions already reproduces), exit 1;
#                 batch: at the end, merge and prune the corpus.
#   --known FILE  known bugs (fuzz/verdict/known.h: signature patterns, an
#                 optional domain, a note): the fused_q workers go on past a
#                 failure they cover (no artifact, no restart, no findings
#                 cap filled; the first of each entry is in the worker's log),
#                 and an artifact they cover is counted under KNOWN in the
#                 summary, not minimized, and neither stops pr mode nor makes
#                 the exit status 1.
#   --ray ADDRESS the workers on a Ray cluster (ADDRESS, or "local": a Ray
#                 instance of the run's own on this host) instead of this
#                 host's cores: python/qcheck/parallel/ray_campaign.py plans them from
#                 the cluster's nodes and fills the work folder, which the
#                 rest of this script reads as on one host. Needs Ray in
#                 python3 (or QCHECK_RAY_PYTHON).
#
# One persistent libFuzzer process per core, no -fork (every restart of a
# CUDA process pays a new context), sharing one corpus folder per target
# (-reload). On a GPU the fused_q workers rotate over the CUDA backends and
# share the GPU through an MPS daemon of the campaign's own (private pipe and
# log folders, stopped at exit; none started where one already runs or MPS is
# missing); several GPUs get their workers spread over them, one MPS daemon
# each. A worker that stops (a finding, a GPU fault that ended its context,
# a hang) is restarted until the time is up. Every artifact is then replayed
# alone in a fresh process (outside MPS): what reproduces is a finding,
# grouped by backend and where the outputs differ (the tensor/part pairs,
# qcheck-replay's "group") with a replay command; a worker that an other
# worker's GPU fault took down (its input replays clean) is counted as such,
# not as a finding.
#
# Progress line every 15 s; summary at the end, also on SIGINT or SIGTERM
# (corpus and findings stay). Exit: 0 no finding, 1 findings, 2 setup or
# disk problem, 130/143 interrupted without a finding.
#
# Environment: QCHECK_FUZZ_WORK_DIR (default out/fuzz-campaign-DATE),
# QCHECK_FUZZ_JOBS (workers, default the cores), QCHECK_FUZZ_BACKENDS
# (fused_q backends to rotate, a comma list), QCHECK_CASE_SIZE (default,
# usual, tiny), QCHECK_FUZZ_TIMEOUT (seconds before an input is a hang,
# default 60), QCHECK_FUZZ_MPS (auto or off), QCHECK_FUZZ_MIN_FREE_MB (stop
# below this much free disk, default 256), QCHECK_FUZZ_SEED (first libFuzzer
# seed, default 1), QCHECK_FUZZ_MAX_FINDINGS (a worker stops after this many
# findings: a broken kernel fails nearly every input, and each finding costs
# a restart; default 25; CUDA runtime errors do not count, see python/qcheck/parallel/supervise.py),
# QCHECK_FUZZ_MAX_REPLAYS (artifacts replayed per backend, default 300),
# QCHECK_FUZZ_MINIMIZE_SECONDS (budget per finding
# group, 0 for none; default 30), CUDA_VISIBLE_DEVICES (the GPUs to use),
# QCHECK_GPU_LEDGER (the GPU memory ledger's folder, default WORK/gpu-ledger
# on a GPU; another run's to share it), QCHECK_GPU_LEDGER_WORKERS,
# QCHECK_GPU_LEDGER_WAIT_SECONDS (fuzz/admission/gpu_ledger.h).
set -uo pipefail

say() { echo "campaign: $*"; }
fail_setup() { echo "campaign: $*" >&2; exit 2; }

# --- arguments --------------------------------------------------------------
bin="" corpus="" mode=default minutes="" known_file="" ray_address=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=${2:-}; shift 2 ;;
    --bin=*) bin=${1#*=}; shift ;;
    --corpus) corpus=${2:-}; shift 2 ;;
    --corpus=*) corpus=${1#*=}; shift ;;
    --mode) mode=${2:-}; shift 2 ;;
    --mode=*) mode=${1#*=}; shift ;;
    --known) known_file=${2:-}; shift 2 ;;
    --known=*) known_file=${1#*=}; shift ;;
    --ray) ray_address=${2:-}; shift 2 || shift ;;
    --ray=*) ray_address=${1#*=}; shift ;;
    -*) fail_setup "unknown option $1 (--bin DIR --corpus DIR --mode default|pr|batch --known FILE --ray ADDRESS MINUTES)" ;;
    *) minutes=$1; shift ;;
  esac
done
case "$minutes" in ''|*[!0-9]*) fail_setup "MINUTES must be a whole number, not '$minutes'" ;; esac
[ "$minutes" -ge 1 ] || fail_setup "MINUTES must be at least 1"
case "$mode" in default|pr|batch) ;; *) fail_setup "--mode must be default, pr or batch, not '$mode'" ;; esac
[ -d "$bin" ] || fail_setup "--bin DIR: '$bin' is not a folder"
case "$ray_address" in -*) fail_setup "--ray ADDRESS: '$ray_address' is not an address (host:port, ray://host:port or local)" ;; esac
[ -d "$corpus" ] || fail_setup "--corpus DIR: '$corpus' is not a folder"
if [ -n "$known_file" ]; then
  [ -f "$known_file" ] || fail_setup "--known FILE: '$known_file' is not a file"
  known_file=$(cd "$(dirname "$known_file")" && pwd)/$(basename "$known_file")
fi
bin=$(cd "$bin" && pwd)
corpus=$(cd "$corpus" && pwd)
for f in fused_q_fuzzer numerics_fuzzer case_decode_fuzzer qcheck-replay; do
  [ -x "$bin/$f" ] || fail_setup "$bin/$f is missing or not executable"
done
replay=$bin/qcheck-replay
# The other targets: numerics and case_decode always, fused_k where its
# fuzzer was built (on this host's cores; the Ray plan has no fused_k yet).
cpu_targets=(numerics case_decode)
[ -x "$bin/fused_k_fuzzer" ] && [ -z "$ray_address" ] && cpu_targets+=(fused_k)
targets=(fused_q "${cpu_targets[@]}")
dict=$bin/fused_q.dict
[ -f "$dict" ] || fail_setup "$dict is missing"

jobs=${QCHECK_FUZZ_JOBS:-$(nproc)}
timeout_s=${QCHECK_FUZZ_TIMEOUT:-60}
min_free_mb=${QCHECK_FUZZ_MIN_FREE_MB:-256}
seed0=${QCHECK_FUZZ_SEED:-1}
max_findings=${QCHECK_FUZZ_MAX_FINDINGS:-25}
for v in jobs timeout_s min_free_mb seed0 max_findings; do
  case "${!v}" in ''|*[!0-9]*) fail_setup "$v must be a whole number, not '${!v}'" ;; esac
done
[ "$jobs" -ge 1 ] || fail_setup "QCHECK_FUZZ_JOBS must be at least 1"

# --- the work folder: writable, with room ------------------------------------
work=${QCHECK_FUZZ_WORK_DIR:-out/fuzz-campaign-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$work" 2>/dev/null || fail_setup "cannot create the work folder $work"
work=$(cd "$work" && pwd)
probe=$work/.write-probe
if ! { head -c 1048576 /dev/zero >"$probe"; } 2>/dev/null; then
  rm -f "$probe"
  fail_setup "cannot write into the work folder $work (read-only or full): nothing was started"
fi
rm -f "$probe"
free_mb() { df -Pk "$work" 2>/dev/null | awk 'NR == 2 {print int($4 / 1024)}'; }
free=$(free_mb)
if [ -n "$free" ] && [ "$free" -lt "$min_free_mb" ]; then
  fail_setup "the disk holding $work has ${free} MiB free, less than QCHECK_FUZZ_MIN_FREE_MB = $min_free_mb: nothing was started"
fi
for t in "${targets[@]}"; do
  mkdir -p "$work/$t/corpus" "$work/$t/artifacts" || fail_setup "cannot create folders under $work"
done
mkdir -p "$work/logs" "$work/status" "$work/run" "$work/triage" "$work/mps/off" || fail_setup "cannot create folders under $work"
rm -f "$work/run/stop"

# Seeds are named by their SHA-1, as libFuzzer names what it adds and the
# artifacts it writes: an input that ended a worker is then found and taken
# out of the corpus by its artifact's name (otherwise every restart would
# load it and end again).
copy_seeds() {  # target folders...
  local target=$1 s f; shift
  for s in "$@"; do
    [ -d "$s" ] || continue
    while IFS= read -r -d '' f; do
      cp "$f" "$work/$target/corpus/$(sha1sum <"$f" | cut -c1-40)"
    done < <(find "$s" -type f ! -name 'README*' ! -name '*.md' -print0)
  done
}
copy_seeds fused_q "$corpus/fused_q" "$corpus/regressions" "$corpus/examples"
copy_seeds numerics "$corpus/numerics"
copy_seeds case_decode "$corpus/case_decode" "$corpus/examples"
[[ " ${targets[*]} " == *" fused_k "* ]] && copy_seeds fused_k "$corpus/fused_k"

# --- GPUs, backends and MPS: campaign_gpus.sh --------------------------------------
source "$(dirname "${BASH_SOURCE[0]}")/campaign_gpus.sh"

# --- workers --------------------------------------------------------------------
# Without a GPU, fused_q gets every core but one per other target (numerics,
# case_decode and fused_k one each), and at least one worker per fused_q
# backend (2 cores: 5 processes, each at about half a core). On a GPU, fused_q
# gets every core but one (left to the MPS server and this script: on the
# H200 host 16 fused_q workers gave 27,000 exec/s in all where 14 gave
# 32,000) and the other targets, which test CPU code only, run beside it at
# the lowest priority. On a Ray cluster the driver plans by the same rules per
# node (campaign_ray.sh).
nice_cpu_targets=""
worker_target=() worker_backend=() worker_gpu=() worker_size=()
if [ -n "$ray_address" ]; then
  source "$(dirname "${BASH_SOURCE[0]}")/campaign_ray.sh"
  ray_plan
else
  if [ ${#gpus[@]} -gt 0 ] && [ $uses_cuda -eq 1 ]; then
    fused_workers=$((jobs > 1 ? jobs - 1 : 1))
    nice_cpu_targets="nice -n 19"
  else
    fused_workers=$((jobs - ${#cpu_targets[@]}))
  fi
  [ $fused_workers -ge ${#fused_backends[@]} ] || fused_workers=${#fused_backends[@]}
  # On a GPU the first CUDA worker also runs the limit cases (--case-size=limit,
  # case_mutator.h: T past 65535, views past 2^32 elements, production loads),
  # unless QCHECK_CASE_SIZE chooses one size for every worker.
  for ((i = 0; i < fused_workers; i++)); do
    worker_target+=(fused_q)
    worker_backend+=("${fused_backends[$((i % ${#fused_backends[@]}))]}")
    worker_size+=("")
    if [ ${#gpus[@]} -gt 0 ] && [[ ${worker_backend[$i]} == cuda-* ]]; then
      worker_gpu+=("${gpus[$((i % ${#gpus[@]}))]}")
      if [ -z "${QCHECK_CASE_SIZE:-}" ] && [[ " ${worker_size[*]} " != *" limit "* ]]; then worker_size[$i]=limit; fi
    else
      worker_gpu+=("")
    fi
  done
  for t in "${cpu_targets[@]}"; do
    worker_target+=("$t"); worker_backend+=(""); worker_gpu+=(""); worker_size+=("")
  done
  nworkers=${#worker_target[@]}
  : >"$work/workers.tsv"
  for ((i = 0; i < nworkers; i++)); do
    printf 'w%d\t%s\t%s\t%s\t%s\n' "$i" "${worker_target[$i]}" "${worker_backend[$i]:--}" "${worker_gpu[$i]:--}" \
      "${worker_size[$i]:-${QCHECK_CASE_SIZE:-default}}" >>"$work/workers.tsv"
  done
fi

# GPU memory admission (fuzz/admission/gpu_ledger.h, python/qcheck/parallel/gpu_ledger.py): one ledger in the work
# folder for the CUDA workers, the triage's replays and the minimizer, so that a worker's limit case waits
# for room on the device rather than running it out of memory beside fourteen others; a run that runs out
# of memory all the same is retried alone, and one that fails alone is a memory note, not a finding. (On
# Ray each node's workers share a ledger of the node's: ray_campaign.py.)
if [ -z "$ray_address" ] && [ ${#gpus[@]} -gt 0 ] && [ $uses_cuda -eq 1 ]; then
  export QCHECK_GPU_LEDGER=${QCHECK_GPU_LEDGER:-$work/gpu-ledger}
  export QCHECK_GPU_LEDGER_WORKERS=${QCHECK_GPU_LEDGER_WORKERS:-$(((fused_workers + ${#gpus[@]} - 1) / ${#gpus[@]}))}
fi

start_time=$SECONDS
deadline=$((SECONDS + minutes * 60))

# The libFuzzer command of worker i (without corpus and time).
fuzzer_args() {  # i
  local i=$1 t=${worker_target[$1]}
  # -handle_int=0: Ctrl-C is the campaign's to handle (it stops every worker
  # with SIGTERM and prints the summary).
  local args=(-len_control=0 -timeout="$timeout_s" -rss_limit_mb=4096 -malloc_limit_mb=2048 -reload=10
              -print_final_stats=1 -handle_int=0)
  case "$t" in
    fused_q) args+=(-max_len=4096 -dict="$dict" "--backend=${worker_backend[$i]}")
      # Known bugs are no findings for the workers either: they go on past them.
      [ -n "$known_file" ] && args+=("--known=$known_file")
      # A limit case holds up to about 4.5 GB of tensors, three sets of them
      # in the verdict, and takes 10 to 30 s (the later -rss_limit_mb,
      # -malloc_limit_mb and -timeout win; a slow unit is reported only past
      # the timeout, not at libFuzzer's 10 s).
      [ "${worker_size[$i]}" = limit ] && args+=(--case-size=limit -rss_limit_mb=24576 -malloc_limit_mb=8192
        -timeout=$((timeout_s * 4)) -report_slow_units=$((timeout_s * 4))) ;;
    numerics) args+=(-max_len=16391) ;;
    case_decode) args+=(-max_len=4096 -dict="$dict") ;;
    fused_k) args+=(-max_len=4096 --max-arena-mb=64) ;;
  esac
  printf '%s\n' "${args[@]}"
}

# The workers: libFuzzer processes restarted until the time is up, by the
# rules the Python door's workers follow too (python/qcheck/parallel/supervise.py,
# run here as a script: a finding's input leaves the corpus, a worker
# stops after QCHECK_FUZZ_MAX_FINDINGS findings, one that cannot start is
# given up after 30 quick failures; reasons in run/wI.restarts). Each
# worker's command and environment are files: run/wI.args, run/wI.env.
# On a GPU a worker gets either the MPS pipe of its GPU (clients of an MPS
# daemon must not set CUDA_VISIBLE_DEVICES: the daemon's own decides) or
# CUDA_VISIBLE_DEVICES.
for ((i = 0; i < nworkers; i++)); do
  t=${worker_target[$i]} g=${worker_gpu[$i]}
  {
    [ "$t" != fused_q ] && [ -n "$nice_cpu_targets" ] && printf '%s\n' $nice_cpu_targets
    printf '%s\n' "$bin/${t}_fuzzer"
    fuzzer_args "$i"
    printf '%s\n' '-seed={seed}' '-max_total_time={seconds}' \
      "-artifact_prefix=$work/$t/artifacts/w$i.${worker_backend[$i]:-$t}." "$work/$t/corpus"
  } >"$work/run/w$i.args"
  {
    echo "QCHECK_STATUS_FILE=$work/status/w$i.r{round}"
    if [ -n "$g" ]; then
      if has_own_mps "$g"; then
        echo "-CUDA_VISIBLE_DEVICES"
        echo "CUDA_MPS_PIPE_DIRECTORY=$work/mps/gpu$g/pipe"
        echo "CUDA_MPS_LOG_DIRECTORY=$work/mps/gpu$g/log"
      elif [ -z "${existing_mps:-}" ]; then
        echo "CUDA_VISIBLE_DEVICES=$g"
      fi
    fi
  } >"$work/run/w$i.env"
done

say "${minutes} min, mode $mode, ${nworkers} workers: ${fused_workers} fused_q over ${fused_backends[*]}, 1 each of ${cpu_targets[*]}${nice_cpu_targets:+ (these at nice 19)}"
say "work folder $work (workers.tsv, logs/, */artifacts/)"
stop_seconds=15
if [ -n "$ray_address" ]; then
  ray_start  # the driver waits for the workers' command files; it stops them and hands over what they hold
  stop_seconds=120
else
  say "GPUs: ${gpus[*]:-none}; $mps_note"
  python3 "$qcheck_py/parallel/supervise.py" libfuzzer "$work/run" "$(($(date +%s) + deadline - SECONDS))" "$seed0" \
    "$max_findings" "$nworkers" >"$work/logs/supervisor.log" 2>&1 &
  supervisor_pid=$!
fi

stop_workers() {
  kill -TERM "$supervisor_pid" 2>/dev/null  # it stops every worker: SIGTERM, SIGKILL after 10 s
  for _ in $(seq 1 $((stop_seconds * 2))); do
    kill -0 "$supervisor_pid" 2>/dev/null || break
    sleep 0.5
  done
  kill -KILL "$supervisor_pid" 2>/dev/null
  wait 2>/dev/null
}

# --- triage, minimization, summary: campaign_report.sh -----------------------------
source "$(dirname "${BASH_SOURCE[0]}")/campaign_report.sh"

# pr mode: the groups that corpus/regressions already reproduces, per backend.
declare -A known=()
if [ "$mode" = pr ] && [ -d "$corpus/regressions" ]; then
  for b in "${fused_backends[@]}"; do
    while IFS= read -r s; do [ -n "$s" ] && known["$b|$s"]=1; done < <(
      "$replay" "$corpus/regressions" --backend "$b" --json 2>/dev/null | grep '"group"' | cut -d'"' -f4)
  done
fi
new_finding=""
first_new_finding() {
  local f name class sig b
  for f in "$work"/triage/*; do
    [ -f "$f" ] || continue
    name=$(basename "$f"); b=${name#*.}; b=${b%%.*}
    IFS=$'\t' read -r class sig _ <"$f"
    # (a known bug's class is "known": never the finding pr mode stops at)
    [ "$class" = finding ] && [ -z "${known["$b|$sig"]:-}" ] && { echo "$name"; return; }
  done 2>/dev/null
}

# --- progress ------------------------------------------------------------------
source "$(dirname "${BASH_SOURCE[0]}")/campaign_status.sh"
executions() {  # target [backend]: executions so far over all workers and rounds
  local total=0 i
  for ((i = 0; i < nworkers; i++)); do
    [ "${worker_target[$i]}" = "$1" ] || continue
    [ -n "${2:-}" ] && [ "${worker_backend[$i]}" != "$2" ] && continue
    total=$((total + $(worker_executions "$work" "$i")))
  done
  echo $total
}
artifact_count() { find "$work"/*/artifacts -type f | wc -l; }
restart_count() { cat "$work"/run/w*.restarts 2>/dev/null | grep -c -e '^finding' -e '^no artifact' -e '^actor restarted'; }

interrupted=""
on_signal() { interrupted=$1; }
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
disk_full=""
last_print=$SECONDS
declare -A last_execs=()
while [ $SECONDS -lt $deadline ] && [ -z "$interrupted" ]; do
  sleep 3 &
  wait $! 2>/dev/null
  [ -n "$interrupted" ] && break
  free=$(free_mb)
  if [ -n "$free" ] && [ "$free" -lt "$min_free_mb" ]; then
    disk_full="the disk holding $work has ${free} MiB free, less than QCHECK_FUZZ_MIN_FREE_MB = $min_free_mb"
    break
  fi
  if [ "$mode" = pr ]; then
    triage_all
    new_finding=$(first_new_finding)
    [ -n "$new_finding" ] && break
  fi
  kill -0 "$supervisor_pid" 2>/dev/null || { say "every worker has stopped"; break; }
  if [ $((SECONDS - last_print)) -ge 15 ]; then
    line=$(printf '[%02d:%02d]' $(((SECONDS - start_time) / 60)) $(((SECONDS - start_time) % 60)))
    for t in "${targets[@]}"; do
      n=$(executions $t)
      line+=" $t $n execs $(( (n - ${last_execs[$t]:-0}) / (SECONDS - last_print) ))/s |"
      last_execs[$t]=$n
    done
    line+=" artifacts $(artifact_count), restarts $(restart_count)"
    waiting=$(memory_waiting "$work")
    [ "$waiting" -gt 0 ] && line+=", $waiting waiting for GPU memory"
    echo "$line"
    printf '%s\t%s\n' "$((SECONDS - start_time))" "${last_execs[fused_q]}" >>"$work/progress.tsv"  # the HTML plot
    last_print=$SECONDS
  fi
done
stop_workers
stop_mps
elapsed=$((SECONDS - start_time))
# The plot's last point: when the workers stopped (not after the triage, which runs no input).
printf '%s\t%s\n' "$elapsed" "$(executions fused_q)" >>"$work/progress.tsv"
[ -n "$interrupted" ] && say "SIG$interrupted: stopped after ${elapsed}s; corpus and findings are kept in $work"
[ -n "$disk_full" ] && say "$disk_full: stopped after ${elapsed}s; corpus and findings so far are kept in $work"

# --- batch mode: merge and prune the corpus ----------------------------------------
merge_note=""
if [ "$mode" = batch ] && [ -z "$disk_full" ]; then
  for t in "${targets[@]}"; do
    merged=$work/$t/corpus.merged
    rm -rf "$merged" && mkdir -p "$merged"
    mapfile -t args < <(for ((i = 0; i < nworkers; i++)); do [ "${worker_target[$i]}" = "$t" ] && fuzzer_args "$i" && break; done)
    before=$(find "$work/$t/corpus" -type f | wc -l)
    if env CUDA_MPS_PIPE_DIRECTORY="$work/mps/off" "$bin/${t}_fuzzer" "${args[@]}" -merge=1 "$merged" "$work/$t/corpus" \
         >"$work/logs/merge-$t.log" 2>&1; then
      rm -rf "$work/$t/corpus" && mv "$merged" "$work/$t/corpus"
      merge_note+=" $t $before -> $(find "$work/$t/corpus" -type f | wc -l) files;"
    else
      merge_note+=" $t merge failed (logs/merge-$t.log);"
    fi
  done
fi

# --- summary ---------------------------------------------------------------------
triage_all
minimize_groups
summary_text=$(summary)
echo
echo "$summary_text"
if printf '%s\n' "$summary_text" 2>/dev/null >"$work/summary.txt.partial" && mv "$work/summary.txt.partial" "$work/summary.txt"; then
  echo "summary also in $work/summary.txt"
else
  rm -f "$work/summary.txt.partial"
  echo "campaign: the summary could not be saved in $work (disk full?): only the copy above exists"
fi
# The finding groups as JUnit testcases (summary() wrote their rows), and the
# whole run as one HTML page (exec/s over time, bins, groups, known bugs).
python3 "$qcheck_py/reports/junit.py" "qcheck campaign" "$work/junit.xml" <"$work/junit.tsv" && echo "JUnit in $work/junit.xml"
python3 "$qcheck_py/reports/html_report.py" campaign "$work" "$work/report.html" && echo "report in $work/report.html"

if grep -q '^FINDINGS:' <<<"$summary_text"; then exit 1; fi
[ -n "$disk_full" ] && exit 2
[ "$interrupted" = INT ] && exit 130
[ "$interrupted" = TERM ] && exit 143
exit 0
