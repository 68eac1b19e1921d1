#!/usr/bin/env bash
# multi_gpu.sh FUZZER CORPUS_DIR MINUTES [BACKEND] [LIBFUZZER FLAGS...]
#
# Spreads fused_q workers over every visible GPU: one libFuzzer process per
# GPU, each with its own CUDA_VISIBLE_DEVICES, all sharing CORPUS_DIR (libFuzzer
# -reload picks up what the others add). libFuzzer -fork cannot do this: it
# gives a worker no index to pick a GPU by (TOOLCHAIN.md).
#
# A finding ends a worker (after a CUDA fault its context is dead anyway);
# the worker is restarted in a fresh process until MINUTES are over. Logs and
# artifacts go to CORPUS_DIR/../multi_gpu-DATE/. BACKEND defaults to
# cuda-blocked. GPUs: CUDA_VISIBLE_DEVICES if set (a comma list), else every
# GPU nvidia-smi lists. Exit status: 0 no finding, 1 findings, 2 bad setup.
set -uo pipefail

fuzzer=${1:?usage: multi_gpu.sh FUZZER CORPUS_DIR MINUTES [BACKEND] [FLAGS...]}
corpus=${2:?corpus folder}
minutes=${3:?minutes}
backend=${4:-cuda-blocked}
shift $(( $# >= 4 ? 4 : 3 ))
extra=("$@")

[ -x "$fuzzer" ] || { echo "multi_gpu: $fuzzer is not an executable"; exit 2; }
case "$minutes" in ''|*[!0-9]*) echo "multi_gpu: MINUTES must be a whole number"; exit 2 ;; esac
mkdir -p "$corpus"

if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
  IFS=, read -r -a gpus <<<"$CUDA_VISIBLE_DEVICES"
else
  mapfile -t gpus < <(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null)
fi
[ ${#gpus[@]} -gt 0 ] || { echo "multi_gpu: no GPU visible (nvidia-smi found none)"; exit 2; }

out=$(cd "$corpus/.." && pwd)/multi_gpu-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out/artifacts"
deadline=$((SECONDS + minutes * 60))
echo "multi_gpu: ${#gpus[@]} GPUs (${gpus[*]}), backend $backend, ${minutes} min, corpus $corpus, logs $out"

worker() {  # GPU
  local gpu=$1 round=0
  while [ $SECONDS -lt $deadline ]; do
    round=$((round + 1))
    CUDA_VISIBLE_DEVICES=$gpu "$fuzzer" -len_control=0 -max_len=4096 -timeout=120 -rss_limit_mb=8192 \
      -malloc_limit_mb=4096 -reload=30 -max_total_time=$((deadline - SECONDS)) -print_final_stats=1 \
      -artifact_prefix="$out/artifacts/gpu$gpu-" --backend="$backend" "${extra[@]}" "$corpus" \
      >"$out/gpu$gpu.round$round.log" 2>&1
    local status=$?
    [ $status -eq 0 ] && break  # time is up
    echo "multi_gpu: GPU $gpu worker stopped with exit $status (log $out/gpu$gpu.round$round.log); restarting"
  done
}

pids=()
for g in "${gpus[@]}"; do
  worker "$g" &
  pids+=($!)
done
trap 'kill "${pids[@]}" 2>/dev/null' INT TERM
wait "${pids[@]}"

echo
for log in "$out"/gpu*.log; do
  printf '%-40s %s executions\n' "$(basename "$log")" "$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')"
done
n=$(find "$out/artifacts" -type f | wc -l)
if [ "$n" -eq 0 ]; then
  echo "no findings"
  exit 0
fi
echo "FINDINGS: $n artifacts in $out/artifacts (replay each: qcheck-replay ARTIFACT --backend $backend --profile qcheck)"
ls -1 "$out/artifacts"
exit 1
