#!/usr/bin/env bash
# campaign.sh [MINUTES]   (README's main job: `./qcheck fuzz [MINUTES]`, default 10)
#
# Builds the fuzz preset (clang, libFuzzer, ASan+UBSan; CUDA on when nvcc and a
# GPU are both here, else -DQCHECK_CUDA=OFF), copies the committed seed corpus
# to a work folder (nothing is regenerated) and fuzzes for MINUTES with
# libFuzzer -fork over the cores:
#   fused_q      on cuda-blocked when a GPU is present, else on cpu-simd (checked
#                against the scalar oracle) and on cpu-model (the blocked kernel's
#                CPU model);
#   numerics     SIMD rows against the scalar spec;
#   case_decode  the decoders.
# A progress line every 15 s (executions, exec/s, coverage, features, findings),
# then a summary: exec/s per target, the semantic bins the fused_q corpus
# reaches, and every finding with its artifact and a replay command.
# Exit status: 0 no finding, 1 findings, 2 the build or setup failed.
#
# Environment: QCHECK_FUZZ_BUILD_DIR (default build/fuzz), QCHECK_FUZZ_WORK_DIR
# (default out/fuzz-campaign-DATE), QCHECK_FUZZ_JOBS (cores to use, default all).
set -uo pipefail

minutes=${1:-10}
case "$minutes" in ''|*[!0-9]*) echo "campaign: MINUTES must be a whole number, not '$minutes'"; exit 2 ;; esac
[ "$minutes" -ge 1 ] || { echo "campaign: MINUTES must be at least 1"; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
build=${QCHECK_FUZZ_BUILD_DIR:-build/fuzz}
cores=${QCHECK_FUZZ_JOBS:-$(nproc)}
seconds=$((minutes * 60))

# --- build ------------------------------------------------------------------
gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then gpu=1; fi
nvcc=0
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then nvcc=1; fi
cuda=OFF
[ $gpu -eq 1 ] && [ $nvcc -eq 1 ] && cuda=ON
mkdir -p "$build"
echo "campaign: ${minutes} min on ${cores} cores; GPU $([ $gpu -eq 1 ] && echo present || echo absent), CUDA build $cuda; build $build"
cmake --preset fuzz -B "$build" -DQCHECK_CUDA=$cuda >"$build/campaign-configure.log" 2>&1 ||
  { echo "campaign: configure failed, see $build/campaign-configure.log"; tail -n 20 "$build/campaign-configure.log"; exit 2; }
cmake --build "$build" -j "$cores" --target fused_q_fuzzer numerics_fuzzer case_decode_fuzzer qcheck-replay \
  >"$build/campaign-build.log" 2>&1 || { echo "campaign: build failed, see $build/campaign-build.log"; tail -n 30 "$build/campaign-build.log"; exit 2; }
targets=$build/fuzz/targets
replay=$build/tools/replay/qcheck-replay
dict=$root/fuzz/targets/fused_q.dict

# --- jobs -------------------------------------------------------------------
work=${QCHECK_FUZZ_WORK_DIR:-out/fuzz-campaign-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$work"
work=$(cd "$work" && pwd)

# On a GPU: the blocked kernel as it picks its configuration (256-thread
# blocks at fuzzing sizes), its staged configurations forced (auto takes
# them only from 512 tokens), and the legacy kernel.
if [ $gpu -eq 1 ] && [ "$cuda" = ON ]; then
  fused_backends=(cuda-blocked cuda-blocked-staged64 cuda-blocked-staged32 cuda-legacy)
else
  fused_backends=(cpu-simd cpu-model)
fi
# Two thirds of the cores to fused_q (split over its backends), the rest to
# numerics and case_decode; at least one worker each (2 cores: 4 workers,
# each at about half a core).
fused_forks=$(( (cores * 2 / 3) / ${#fused_backends[@]} )); [ $fused_forks -ge 1 ] || fused_forks=1
other_forks=$(( (cores - cores * 2 / 3) / 2 )); [ $other_forks -ge 1 ] || other_forks=1

jobs=()      # job names
declare -A job_fuzzer job_args job_pid
add_job() {  # name fuzzer forks seed-folders... -- args...
  local name=$1 fuzzer=$2 forks=$3; shift 3
  local seeds=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do seeds+=("$1"); shift; done
  shift
  mkdir -p "$work/$name/corpus" "$work/$name/artifacts"
  for s in "${seeds[@]}"; do
    find "$s" -type f ! -name 'README*' ! -name '*.md' -exec cp {} "$work/$name/corpus/" \;
  done
  jobs+=("$name")
  job_fuzzer[$name]=$fuzzer
  job_args[$name]="$*"
  # shellcheck disable=SC2086
  "$fuzzer" -fork="$forks" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -len_control=0 \
    -timeout=120 -rss_limit_mb=4096 -malloc_limit_mb=2048 -max_total_time="$seconds" \
    -artifact_prefix="$work/$name/artifacts/" "$@" "$work/$name/corpus" >"$work/$name/log" 2>&1 &
  job_pid[$name]=$!
}

for b in "${fused_backends[@]}"; do
  add_job "fused_q.$b" "$targets/fused_q_fuzzer" "$fused_forks" corpus/fused_q corpus/regressions corpus/examples \
    -- -max_len=4096 -dict="$dict" --backend="$b"
done
add_job numerics "$targets/numerics_fuzzer" "$other_forks" corpus/numerics -- -max_len=16391
add_job case_decode "$targets/case_decode_fuzzer" "$other_forks" corpus/case_decode corpus/examples \
  -- -max_len=4096 -dict="$dict"
echo "campaign: work folder $work"

# The last fork-mode status line of a job: "#N: cov: C ft: F corp: K exec/s E
# oom/timeout/crash: a/b/c time: Ts job: J ...".
status_line() { grep -E '^#[0-9]+: cov:' "$work/$1/log" | tail -n 1; }
field() { awk -v key="$2" '{for (i = 1; i < NF; ++i) if ($i == key) {print $(i + 1); exit}}' <<<"$1"; }
findings() { find "$work/$1/artifacts" -type f | wc -l; }

start=$SECONDS
running() { for j in "${jobs[@]}"; do kill -0 "${job_pid[$j]}" 2>/dev/null && return 0; done; return 1; }
trap 'for j in "${jobs[@]}"; do kill "${job_pid[$j]}" 2>/dev/null; done' INT TERM
while running; do
  sleep 15
  line=$(printf '[%02d:%02d]' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)))
  for j in "${jobs[@]}"; do
    s=$(status_line "$j")
    execs=${s%%:*}; execs=${execs#\#}
    line+=" | $j ${execs:-0} execs $(field "$s" 'exec/s' || true)/s cov $(field "$s" 'cov:') ft $(field "$s" 'ft:') findings $(findings "$j")"
  done
  echo "$line"
done
for j in "${jobs[@]}"; do wait "${job_pid[$j]}" 2>/dev/null; done
elapsed=$((SECONDS - start))

# --- summary ------------------------------------------------------------------
echo
echo "==== campaign summary: ${minutes} min, ${cores} cores, $(date -u +%Y-%m-%dT%H:%M:%SZ) ===="
total_findings=0
for j in "${jobs[@]}"; do
  s=$(status_line "$j")
  execs=${s%%:*}; execs=${execs#\#}; execs=${execs:-0}
  corpus=$(find "$work/$j/corpus" -type f | wc -l)
  n=$(findings "$j")
  total_findings=$((total_findings + n))
  printf '%-24s %10s execs %8s exec/s (wall, all workers)  cov %s ft %s corpus %s findings %s\n' "$j" "$execs" \
    "$((execs / (elapsed > 0 ? elapsed : 1)))" "$(field "$s" 'cov:')" "$(field "$s" 'ft:')" "$corpus" "$n"
done

for b in "${fused_backends[@]}"; do
  echo
  echo "semantic bins reached by the fused_q.$b corpus:"
  QCHECK_PRINT_BINS=1 "$targets/fused_q_fuzzer" -runs=0 -len_control=0 -max_len=4096 --backend="$b" \
    "$work/fused_q.$b/corpus" 2>&1 | sed -n '/^semantic bins reached/,$p'
done

echo
if [ $total_findings -eq 0 ]; then
  echo "no findings"
  exit 0
fi
echo "FINDINGS: $total_findings artifacts, grouped by signature (one replay command per group)"
# A signature per artifact: fused_q's primary mismatch signature (qcheck-replay
# --json), else the first line of the target's finding report or the
# sanitizer's summary, digits masked. At most 200 artifacts per job are
# replayed for this; the rest are counted.
signature_of() {  # job artifact
  local j=$1 a=$2
  case "$j" in
    fused_q.*)
      "$replay" "$a" --backend "${j#fused_q.}" $(replay_flags "${j#fused_q.}") --json 2>/dev/null |
        grep -m1 '"primary_signature"' | cut -d'"' -f4
      ;;
    *)
      # shellcheck disable=SC2086
      # The line after our own finding header, else an uncaught exception's
      # what() or the sanitizer's SUMMARY line.
      timeout 60 "${job_fuzzer[$j]}" ${job_args[$j]} "$a" 2>&1 |
        awk '/==== qcheck .* finding ====/ {getline; print; exit}
             /what\(\):|SUMMARY: / {print; exit}' |
        sed -E "s/'[^']*'/'...'/g; s/0x[0-9a-fA-F]+/0x#/g; s/[0-9]+/#/g" | cut -c1-160
      ;;
  esac
}
replay_flags() {  # backend: the oracle backends follow the case's profile, the others implement qcheck only
  case "$1" in
    cpu-simd) echo "--oracle scalar" ;;
    cpu-scalar) echo "" ;;
    *) echo "--profile qcheck" ;;
  esac
}
for j in "${jobs[@]}"; do
  declare -A groups=() first=()
  replayed=0 skipped=0
  for a in "$work/$j"/artifacts/*; do
    [ -f "$a" ] || continue
    if [ $replayed -ge 200 ]; then skipped=$((skipped + 1)); continue; fi
    replayed=$((replayed + 1))
    sig=$(signature_of "$j" "$a")
    sig=${sig:-$(basename "$a" | cut -d- -f1) (no report)}
    groups[$sig]=$(( ${groups[$sig]:-0} + 1 ))
    [ -n "${first[$sig]:-}" ] || first[$sig]=$a
  done
  [ $replayed -gt 0 ] || continue
  echo "$j:"
  for sig in "${!groups[@]}"; do
    a=${first[$sig]}
    echo "  ${groups[$sig]} x [$sig]"
    echo "    artifact: $a"
    case "$j" in
      fused_q.*) echo "    replay:   $replay $a --backend ${j#fused_q.} $(replay_flags "${j#fused_q.}")" ;;
      *) echo "    replay:   ${job_fuzzer[$j]} ${job_args[$j]} $a" ;;
    esac
  done
  [ $skipped -eq 0 ] || echo "  (+$skipped more artifacts not replayed, in $work/$j/artifacts)"
  unset groups first
done
exit 1
