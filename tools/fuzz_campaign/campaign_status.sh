# campaign_status.sh: what a campaign's workers report while they run, read
# from its work folder. Sourced by run_campaign.sh (its progress line and
# summary) and by tests/fuzz_smoke/campaign_test.sh (which watches a run).

# worker_executions WORK I: the inputs worker I has run so far, over all its
# rounds (each round's status file, WORK/status/wI.rN, says "executions N").
worker_executions() {
  local total=0 f n
  for f in "$1"/status/w"$2".r*; do
    [ -f "$f" ] || continue
    n=$(awk '$1 == "executions" {print $2}' "$f" 2>/dev/null)
    total=$((total + ${n:-0}))
  done
  echo $total
}

# memory_figures WORK: "RETRIED NOTES": the fused_q runs that ran out of device
# memory and passed alone, and the cases that needed more than the device has
# even alone (fuzz/targets/status_file.h), over every worker and round.
memory_figures() {
  cat "$1"/status/w* 2>/dev/null | awk '$1 == "memory_retried" {r += $2} $1 == "memory_notes" {n += $2}
    END {printf "%d %d\n", r, n}'
}

# memory_waiting WORK: the workers waiting for their turn in the GPU ledger now
# (a status file written in the last 10 s with a "waiting" line).
memory_waiting() {
  find "$1"/status -type f -newermt '-10 seconds' -exec grep -l '^waiting ' {} + 2>/dev/null | wc -l
}
