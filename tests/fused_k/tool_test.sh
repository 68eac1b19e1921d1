#!/usr/bin/env bash
# qcheck-fused-k end to end: a drawn case passes on the correct model and
# fails on a planted bug; the minimizer makes it smaller and it still fails
# the same way (and passes on the correct model); an invalid case is refused
# with a line naming the field (exit 2).
set -u
tool=${1:?qcheck-fused-k}
work=$(mktemp -d "${TMPDIR:-/tmp}/qcheck-fused-k-tool.XXXXXX")
trap 'rm -rf "$work"' EXIT
bug=cpu-model-bug-nvfp4-nibbles-swapped
status=0
check() {  # expected-exit description command...
  local want=$1 what=$2; shift 2
  "$@" >"$work/out" 2>&1
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"; cat "$work/out"; status=1
  else
    echo "ok: $what (exit $got): $(head -c 300 "$work/out" | head -n 1)"
  fi
}

# Seed 4 draws a launch with an nvfp4_ds_mla cache (its JSON names the format).
"$tool" draw 4 >"$work/case.json" || { echo "FAIL: draw"; exit 1; }
grep -q '"mla_format": "nvfp4_ds_mla"' "$work/case.json" || { echo "FAIL: seed 4 is not nvfp4_ds_mla"; cat "$work/case.json"; exit 1; }
check 0 "the drawn case on the correct model" "$tool" check "$work/case.json"
check 1 "the drawn case on $bug" "$tool" check "$work/case.json" --backend=$bug
check 0 "minimize on $bug" "$tool" minimize "$work/case.json" --backend=$bug --out "$work/small.json"
check 1 "the minimized case on $bug" "$tool" check "$work/small.json" --backend=$bug
check 0 "the minimized case on the correct model" "$tool" check "$work/small.json"
# What must be left of it: one token, the KV role alone.
for want in '"num_tokens": 1' '"index_k": false' '"kv": true' '"q_norm": false' '"topk_fill": false' \
            '"mla_format": "nvfp4_ds_mla"' '"mla_block_size": 1'; do
  grep -q "$want" "$work/small.json" || { echo "FAIL: the minimized case lacks $want:"; cat "$work/small.json"; status=1; }
done
sed 's/"index_dim": [0-9]*/"index_dim": 513/' "$work/case.json" >"$work/bad.json"
check 2 "an index_dim past 512" "$tool" check "$work/bad.json"
grep -q 'index_dim = 513 is outside \[1, 512\]' "$work/out" || { echo "FAIL: the refusal does not name the field"; status=1; }
check 2 "an unknown backend" "$tool" check "$work/case.json" --backend=tpu
exit $status
