#!/usr/bin/env bash
# Two GPU bundles measured side by side on one host: the same commands from
# each, alternating, so that a change in the host's speed (other tenants,
# clocks) hits both. For "before and after" figures of a change.
#
#   side_by_side.sh OLD NEW OUT [single] [campaign MINUTES] [door SECONDS]
#
#   single     one fused_q_fuzzer on cuda-blocked at usual sizes, 30 s from an
#              empty corpus, seed 1, --phase-times; ROUNDS rounds (default 2: old, new,
#              old, new)
#   campaign   QCHECK_CASE_SIZE=usual DIR/qcheck fuzz MINUTES, old then new
#   door       python3 -m qcheck fuzz production_adapter:adapter --workers 1
#              --case-size usual --device cuda for SECONDS, from each bundle's
#              python/ (the host's python3 has torch and Triton), old then new
#
# Each run's whole output goes to OUT/<part>-<old|new>[-round].log; the lines
# that carry the figures are printed as they come.
set -uo pipefail
[[ $# -ge 4 ]] || { sed -n '6,15p' "$0"; exit 2; }
old=$(cd "$1" && pwd); new=$(cd "$2" && pwd); out=$3; shift 3
mkdir -p "$out"
status=0

single() {  # NAME BUNDLE ROUND
  local log="$out/single-$1-$3.log" corpus
  corpus=$(mktemp -d)
  LD_LIBRARY_PATH="$2/lib" "$2/bin/fused_q_fuzzer" "$corpus" -seed=1 -max_total_time=30 -len_control=0 \
    --backend=cuda-blocked --case-size=usual --phase-times >"$log" 2>&1 || status=1
  rm -rf "$corpus"
  echo "== single $1 round $3"
  grep -E "^Done [0-9]+ runs" "$log" | tail -1
  sed -n '/^phase times over/,/all phases/p' "$log" | tail -40
}

campaign() {  # NAME BUNDLE MINUTES
  local log="$out/campaign-$1.log"
  (cd "$2" && QCHECK_CASE_SIZE=usual QCHECK_FUZZ_WORK_DIR="$out/campaign-$1" ./qcheck fuzz "$3") >"$log" 2>&1 ||
    status=1
  echo "== campaign $1 ($3 min)"
  grep -iE "exec/s in all|fused_q.*exec/s|restarts|finding" "$log" | tail -8
}

door() {  # NAME BUNDLE SECONDS
  local log="$out/door-$1.log" work
  work=$(mktemp -d)
  (cd "$work" && PYTHONPATH="$2/python:$2/python/examples" python3 -m qcheck fuzz production_adapter:adapter \
    --workers 1 --case-size usual --device cuda --minutes "$(awk "BEGIN{print $3/60}")" \
    --findings "$work/findings") >"$log" 2>&1 || status=1
  rm -rf "$work"
  echo "== door $1 ($3 s)"
  grep -iE "exec/s|us/exec|allocator|phases|finding" "$log" | tail -10
}

while [[ $# -gt 0 ]]; do
  case $1 in
    single) for round in $(seq "${ROUNDS:-2}"); do single old "$old" $round; single new "$new" $round; done; shift ;;
    campaign) campaign old "$old" "$2"; campaign new "$new" "$2"; shift 2 ;;
    door) door old "$old" "$2"; door new "$new" "$2"; shift 2 ;;
    *) echo "side_by_side.sh: unknown part '$1' (single, campaign MINUTES, door SECONDS)" >&2; exit 2 ;;
  esac
done
exit $status
