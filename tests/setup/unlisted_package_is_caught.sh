#!/usr/bin/env bash
# The dependency check must be able to fail: with libxxhash-dev taken off a
# copy of the list (the row whose absence once broke fresh machines), it must
# exit 1 and name xxhash.h and its package.
#   unlisted_package_is_caught.sh CHECK BUILD_DIR
set -u
check=${1:?check_dependencies.sh}
build=${2:?build folder}
list=$(dirname "$check")/packages.txt
work=$(mktemp -d "${TMPDIR:-/tmp}/qcheck-deps.XXXXXX")
trap 'rm -rf "$work"' EXIT
grep -v '^libxxhash-dev ' "$list" >"$work/packages.txt"
"$check" "$build" "$work/packages.txt" >"$work/log" 2>&1
status=$?
cat "$work/log"
[ $status -eq 77 ] && exit 77
if [ $status -ne 1 ]; then echo "FAIL: the check exited $status without libxxhash-dev, expected 1"; exit 1; fi
if ! grep -q 'NOT LISTED: .*/xxhash.h belongs to the package libxxhash-dev' "$work/log"; then
  echo "FAIL: the check did not name xxhash.h and libxxhash-dev"
  exit 1
fi
echo "PASS: the check names the unlisted package"
