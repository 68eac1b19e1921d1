#!/usr/bin/env bash
# Every qcheck-* tool follows tools/common/cli.h: --help prints a usage line
# on stdout with exit 0, --version prints "NAME VERSION" with exit 0, and an
# unknown option gets one line naming it and the usage on stderr, exit 2.
# usage: tools_cli_test.sh VERSION TOOL...
set -u
version=$1
shift
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
for tool in "$@"; do
  name=$(basename "$tool")
  out=$("$tool" --help 2>/dev/null); rc=$?
  [ $rc -eq 0 ] || fail "$name --help: exit $rc"
  [[ "$out" == usage:\ $name* ]] || fail "$name --help: stdout does not start with 'usage: $name': ${out:0:80}"
  out=$("$tool" --version 2>/dev/null); rc=$?
  [ $rc -eq 0 ] || fail "$name --version: exit $rc"
  [ "$out" = "$name $version" ] || fail "$name --version: '$out', not '$name $version'"
  err=$("$tool" --no-such-option 2>&1 >/dev/null); rc=$?
  [ $rc -eq 2 ] || fail "$name --no-such-option: exit $rc, not 2"
  first=$(printf '%s\n' "$err" | head -1)
  [ "$first" = "$name: unknown option --no-such-option" ] || fail "$name --no-such-option: first line '$first'"
  printf '%s\n' "$err" | sed -n 2p | grep -q "^usage: $name" || fail "$name --no-such-option: no usage after the line"
  echo "checked $name"
done
[ $# -gt 0 ] || fail "no tool given"
exit $((failures > 0))
