#!/usr/bin/env bash
# The committed seed corpus must be exactly what the generator writes today:
# otherwise a change to the case format or the grid left corpus/ stale (and
# the fuzzers would start from seeds nobody can regenerate).
#
#   check_seeds_current.sh QCHECK_CORPUS_GEN CORPUS_DIR
set -u
gen=${1:?qcheck-corpus-gen}
corpus=${2:?corpus folder}
work=$(mktemp -d "${TMPDIR:-/tmp}/qcheck-corpus.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$gen" "$work" >/dev/null || { echo "FAIL: qcheck-corpus-gen exited $?"; exit 1; }
status=0
for folder in fused_q examples numerics case_decode fused_k; do
  if ! diff -r -q -x 'README*' "$work/$folder" "$corpus/$folder"; then
    echo "FAIL: corpus/$folder differs from the generator's output (above)"
    status=1
  else
    echo "corpus/$folder: $(ls "$work/$folder" | wc -l) files, as generated"
  fi
done
[ $status -eq 0 ] || echo "regenerate with: qcheck-corpus-gen $corpus (then review and commit the change)"
exit $status
