# campaign_gpus.sh: the GPUs the campaign uses, the fused_q backends its
# workers rotate over, and the MPS daemons it starts (one per GPU, private
# pipe and log folders under the work folder, stopped at exit). Sourced by
# run_campaign.sh after the work folder is set up; sets gpus, fused_backends,
# uses_cuda, own_mps, existing_mps, mps_note, stop_mps and has_own_mps.
gpus=()
# (On a Ray cluster the nodes' GPUs are Ray's: campaign_ray.sh; none of this host's is used here.)
if [ -z "${ray_address:-}" ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
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

# The MPS rules live in one place, python/qcheck/parallel/mps.py (the Python
# door's workers follow the same), as do the workers' restart rules
# (parallel/supervise.py) and the JUnit writer (reports/junit.py): run here as
# scripts, from the python/ folder next to this file in the bundle or the
# repository's (qcheck_py: its package folder).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
qcheck_py=""
for m in "$here/python/qcheck" "$here/../../python/qcheck"; do
  [ -f "$m/parallel/mps.py" ] && qcheck_py=$(cd "$m" && pwd) && break
done
[ -n "$qcheck_py" ] || fail_setup "python/qcheck is missing (next to $here or in the repository)"
mps_py=$qcheck_py/parallel/mps.py
own_mps=()  # GPUs with an MPS daemon of ours
existing_mps=""
stop_mps() {
  [ ${#own_mps[@]} -gt 0 ] && python3 "$mps_py" stop "$work/mps" "${own_mps[@]}"
  own_mps=()
}
trap stop_mps EXIT
mps_note="no GPU"
if [ ${#gpus[@]} -gt 0 ] && [ $uses_cuda -eq 1 ]; then
  eval "$(python3 "$mps_py" start "$work/mps" "${QCHECK_FUZZ_MPS:-auto}" "${gpus[@]}")"
  [ "$existing_mps" = 1 ] && gpus=("${gpus[0]}")
  [ "$existing_mps" = 1 ] || existing_mps=""
  [ "${QCHECK_FUZZ_MPS:-auto}" = off ] && mps_note="MPS off (QCHECK_FUZZ_MPS=off): the workers time-slice the GPU"
fi
has_own_mps() { local g; for g in "${own_mps[@]}"; do [ "$g" = "$1" ] && return 0; done; return 1; }
