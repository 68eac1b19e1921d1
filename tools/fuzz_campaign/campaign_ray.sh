# campaign_ray.sh: the campaign's workers on a Ray cluster (--ray ADDRESS).
# Sourced by run_campaign.sh; python/qcheck/parallel/ray_campaign.py is the driver:
#   ray_plan    starts the driver, which connects (or starts a Ray instance
#               of the run's own for "local"), plans the workers from the
#               cluster's nodes and writes workers.tsv and run/ray-plan.tsv;
#               sets the worker_* arrays, fused_backends and supervisor_pid
#               (the driver, which run_campaign.sh stops as it stops
#               supervise.py on one host);
#   ray_start   once run/wI.args and run/wI.env are written: the deadline,
#               first seed and findings cap in run/args.ready, on which the
#               driver places the workers.
#   ray_summary the cluster's lines of the summary.
ray_python=${QCHECK_RAY_PYTHON:-python3}

ray_plan() {
  "$ray_python" -c 'import ray' 2>/dev/null ||
    fail_setup "--ray: $ray_python cannot import ray (pip install 'qcheck[ray]', or ray; QCHECK_RAY_PYTHON names another python)"
  gpus=() mps_note="Ray cluster $ray_address"
  QCHECK_RAY_AVAILABLE_BACKENDS=$("$replay" --list-backends | awk '{print $1}' | paste -sd, -) \
    "$ray_python" "$qcheck_py/parallel/ray_campaign.py" "$work" "$ray_address" >"$work/logs/ray-driver.log" 2>&1 &
  supervisor_pid=$!
  local waited=0
  until [ -s "$work/run/ray-plan.tsv" ]; do
    if ! kill -0 "$supervisor_pid" 2>/dev/null; then
      wait "$supervisor_pid" 2>/dev/null
      fail_setup "--ray $ray_address: $(grep -m1 '^campaign: ' "$work/logs/ray-driver.log" | cut -c11- || true)$(
        grep -q '^campaign: ' "$work/logs/ray-driver.log" || tail -n 3 "$work/logs/ray-driver.log")"
    fi
    [ $waited -lt 600 ] || { kill "$supervisor_pid"; fail_setup "--ray $ray_address: no plan after 120 s (logs/ray-driver.log)"; }
    sleep 0.2; waited=$((waited + 1))
  done
  local w t b g s
  while IFS=$'\t' read -r w t b g s; do
    worker_target+=("$t"); worker_gpu+=("")
    [ "$b" = - ] && b=""
    worker_backend+=("$b")
    [ "$s" = limit ] && worker_size+=(limit) || worker_size+=("")
  done <"$work/workers.tsv"
  nworkers=${#worker_target[@]}
  fused_backends=() fused_workers=0
  for ((i = 0; i < nworkers; i++)); do
    [ "${worker_target[$i]}" = fused_q ] || continue
    fused_workers=$((fused_workers + 1))
    [[ " ${fused_backends[*]} " == *" ${worker_backend[$i]} "* ]] || fused_backends+=("${worker_backend[$i]}")
  done
  # numerics and case_decode at nice 19 where they share a GPU node's CPUs
  awk -F'\t' 'NR > 1 && $6 == 1' "$work/run/ray-plan.tsv" | grep -q . && nice_cpu_targets="nice -n 19"
  say "Ray cluster $ray_address: $(awk -F'\t' 'NR > 1 {n[$2]++} END {for (h in n) printf "%s%s %d workers", s, h, n[h]; s = "; "}' \
    "$work/run/ray-plan.tsv") (run/ray-plan.tsv; driver log logs/ray-driver.log)"
}

ray_start() {
  echo "$(($(date +%s) + deadline - SECONDS)) $seed0 $max_findings" >"$work/run/args.ready.partial" &&
    mv "$work/run/args.ready.partial" "$work/run/args.ready"
}

ray_summary() {
  echo "Ray cluster $ray_address:"
  grep '^campaign: node ' "$work/logs/ray-driver.log" 2>/dev/null | sed 's/^campaign: /  /'
  [ -f "$work/run/ray-sync.tsv" ] && awk -F'\t' 'NR > 1 {h += $4; r += $5; k += $3 - 1}
    END {printf "  corpus through Ray: %d entries handed over by the workers, %d handed out to others; %d actor restarts\n", h, r, k}' \
    "$work/run/ray-sync.tsv"
  grep -h '^actor lost' "$work"/run/w*.restarts 2>/dev/null | sort | uniq -c | sed 's/^/  /'
}
