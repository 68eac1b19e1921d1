#!/usr/bin/env bash
# The goldens: what qcheck does, printed as text (print_goldens.cc) and the C
# API's exported symbols (nm), compared with tests/goldens/expected, which was
# taken before fused_q moved into ops/fused_q. A difference is a change in
# what qcheck does: the move must make none.
#
#   check_goldens.sh PRINTER LIBQCHECK CORPUS_DIR EXPECTED_DIR [--update]
#
# --update writes the current output over EXPECTED_DIR (then review the diff
# and commit it with the change that explains it).
set -u
printer=${1:?qcheck_goldens_print}
lib=${2:?libqcheck.so}
corpus=${3:?corpus folder}
expected=${4:?expected folder}
work=$(mktemp -d "${TMPDIR:-/tmp}/qcheck-goldens.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$printer" "$work" "$corpus" || { echo "FAIL: $printer exited $?"; exit 1; }
nm -D --defined-only "$lib" | awk '$3 ~ /^qcheck_/ {print $2, $3}' | sort >"$work/capi_symbols.txt"
[ -s "$work/capi_symbols.txt" ] || { echo "FAIL: no qcheck_ symbol exported by $lib"; exit 1; }

if [ "${5:-}" = "--update" ]; then
  mkdir -p "$expected" && cp "$work"/*.txt "$expected/" && echo "goldens written to $expected" && exit 0
fi
status=0
for f in "$work"/*.txt "$expected"/*.txt; do
  name=$(basename "$f")
  if [ ! -e "$expected/$name" ] || [ ! -e "$work/$name" ]; then
    echo "FAIL: $name is in only one of the output and $expected"
    status=1
  fi
done
for f in "$work"/*.txt; do
  name=$(basename "$f")
  [ -e "$expected/$name" ] || continue
  if cmp -s "$f" "$expected/$name"; then
    echo "$name: $(wc -l <"$f") lines, unchanged"
  else
    echo "FAIL: $name differs from the golden (- golden, + now):"
    diff -u "$expected/$name" "$f" | head -40
    status=1
  fi
done
[ $status -eq 0 ] || echo "if the change is meant: $0 $printer $lib $corpus $expected --update"
exit $status
