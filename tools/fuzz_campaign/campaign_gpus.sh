# campaign_gpus.sh: the GPUs the campaign uses, the fused_q backends its
# workers rotate over, and the MPS daemons it starts (one per GPU, private
# pipe and log folders under the work folder, stopped at exit). Sourced by
# run_campaign.sh after the work folder is set up; sets gpus, fused_backends,
# uses_cuda, mps_control, own_mps, existing_mps, mps_note, stop_mps and
# has_own_mps.
gpus=()
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
    IFS=, read -r -a gpus <<<"$CUDA_VISIBLE_DEVICES"
  else
    mapfile -t gpus < <(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null)
  fi
fi
gpu_problem=$("$bin/fused_q_fuzzer" -runs=0 --backend=cuda-blocked /dev/null 2>&1 | grep -m1 'cannot run here' || true)
if [ ${#gpus[@]} -gt 0 ] && [ -n "$gpu_problem" ]; then
  say "a GPU is listed but the CUDA backends cannot run (${gpu_problem#*: }): fuzzing the CPU backends"
  gpus=()
fi

if [ -n "${QCHECK_FUZZ_BACKENDS:-}" ]; then
  IFS=, read -r -a fused_backends <<<"$QCHECK_FUZZ_BACKENDS"
elif [ ${#gpus[@]} -gt 0 ]; then
  fused_backends=(cuda-blocked cuda-blocked-threads256 cuda-blocked-staged64 cuda-blocked-staged32
                  cuda-blocked-parts cuda-legacy)
else
  fused_backends=(cpu-simd cpu-model)
fi
for b in "${fused_backends[@]}"; do
  "$replay" --list-backends | awk '{print $1}' | grep -qx -- "$b" || fail_setup "QCHECK_FUZZ_BACKENDS: '$b' is not a backend"
done
uses_cuda=0
for b in "${fused_backends[@]}"; do [[ $b == cuda-* ]] && uses_cuda=1; done

mps_control=$(command -v nvidia-cuda-mps-control 2>/dev/null || true)
[ -n "$mps_control" ] || for p in /usr/local/nvidia/bin /usr/bin /usr/local/cuda/bin; do
  [ -x "$p/nvidia-cuda-mps-control" ] && mps_control=$p/nvidia-cuda-mps-control && break
done
own_mps=()  # GPUs with an MPS daemon of ours
stop_mps() {
  local g
  for g in "${own_mps[@]}"; do
    echo quit | CUDA_MPS_PIPE_DIRECTORY=$work/mps/gpu$g/pipe CUDA_MPS_LOG_DIRECTORY=$work/mps/gpu$g/log \
      "$mps_control" >/dev/null 2>&1
  done
  own_mps=()
}
trap stop_mps EXIT
mps_note="no GPU"
if [ ${#gpus[@]} -gt 0 ] && [ $uses_cuda -eq 1 ]; then
  if [ "${QCHECK_FUZZ_MPS:-auto}" = off ]; then
    mps_note="MPS off (QCHECK_FUZZ_MPS=off): the workers time-slice the GPU"
  elif [ -z "$mps_control" ]; then
    mps_note="MPS is not installed (no nvidia-cuda-mps-control): the workers time-slice the GPU, about one process's rate in all"
  elif pgrep -x nvidia-cuda-mps-control >/dev/null 2>&1 || pgrep -x nvidia-cuda-mps-server >/dev/null 2>&1; then
    mps_note="an MPS daemon already runs here (pid $(pgrep -x nvidia-cuda-mps-control | head -1)): the workers use it as the environment finds it, none started"
    gpus=("${gpus[0]}")
    existing_mps=1
  else
    for g in "${gpus[@]}"; do
      d=$work/mps/gpu$g
      mkdir -p "$d/pipe" "$d/log"
      if CUDA_VISIBLE_DEVICES=$g CUDA_MPS_PIPE_DIRECTORY=$d/pipe CUDA_MPS_LOG_DIRECTORY=$d/log \
           "$mps_control" -d >"$d/start.log" 2>&1; then
        own_mps+=("$g")
      else
        say "MPS for GPU $g did not start ($(head -c 200 "$d/start.log")): its workers time-slice it"
      fi
    done
    mps_note="MPS daemons of the campaign's own on GPU ${own_mps[*]:-none} (pipes under $work/mps)"
  fi
fi
has_own_mps() { local g; for g in "${own_mps[@]}"; do [ "$g" = "$1" ] && return 0; done; return 1; }
