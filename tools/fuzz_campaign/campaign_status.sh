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
