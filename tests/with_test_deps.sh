#!/usr/bin/env bash
# Runs a command with the Python tests' own dependencies importable: the
# pinned wheels of python/tests/requirements.txt (xmlschema and elementpath,
# pure Python, for the JUnit schema check; qcheck itself never imports them),
# installed once into DEPS_DIR/site, which goes first on PYTHONPATH.
#
# The wheels come from the folder QCHECK_TEST_WHEELS names where it is set
# (the GPU bundle's python/test-wheels: that host has pip but no network;
# its python3 -m pip installs them), else from the Python registry into
# DEPS_DIR/wheels, fetched by the pip of a virtual environment of its own
# (DEPS_DIR/pip-env: Debian's python3 comes without pip). Either way pip
# checks each wheel against its pinned hash.
#
# Called by ctest (python.pytest, mutants.junit_report,
# fuzz_smoke.campaign.faults), tools/wheel/test_wheel.sh, make_bundle.sh (for
# the wheels it carries) and the GPU gate (run_gpu_gate.sh).
#
# --requirements FILE installs another pinned set instead, for a test that
# needs more than python/tests does (ctest reference.ml_dtypes_sweep:
# tests/reference/ml_dtypes/requirements.txt, into a DEPS_DIR of its own: the
# site of a DEPS_DIR is made from one requirements file).
#
#   with_test_deps.sh [--requirements FILE] DEPS_DIR COMMAND [ARGS...]
set -euo pipefail
say() { printf 'with_test_deps: %s\n' "$*" >&2; }
requirements=
if [ "${1:-}" = --requirements ]; then
  [ $# -ge 2 ] && [ -f "$2" ] || { say "--requirements needs a file (got '${2:-}')"; exit 2; }
  requirements=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
  shift 2
fi
if [ $# -lt 2 ]; then
  echo "usage: with_test_deps.sh [--requirements FILE] DEPS_DIR COMMAND [ARGS...]" >&2
  exit 2
fi
deps=$1; shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# In the repository this script is in tests/; in the GPU bundle, at its top beside python/.
if [ -z "$requirements" ]; then
  for candidate in "$here/../python/tests/requirements.txt" "$here/python/tests/requirements.txt"; do
    [ -f "$candidate" ] && { requirements=$(cd "$(dirname "$candidate")" && pwd)/requirements.txt; break; }
  done
  [ -n "$requirements" ] || { say "no python/tests/requirements.txt beside $here"; exit 2; }
fi
mkdir -p "$deps"
deps=$(cd "$deps" && pwd)
site=$deps/site

# One installer at a time (ctest may start two tests that need it at once);
# a site made from other pins is made again, and so is one whose fetched
# wheels are gone (make_bundle.sh copies them).
exec 9>"$deps/lock"
flock 9
export PIP_ROOT_USER_ACTION=ignore  # (CI and the GPU host run as root: pip's warning says nothing here)
fetched() { [ -n "${QCHECK_TEST_WHEELS:-}" ] || compgen -G "$deps/wheels/*.whl" >/dev/null; }
if ! cmp -s "$requirements" "$site/requirements.txt" || ! fetched; then
  wheels=${QCHECK_TEST_WHEELS:-}
  if [ -n "$wheels" ]; then
    [ -d "$wheels" ] || { say "QCHECK_TEST_WHEELS=$wheels is not a folder"; exit 2; }
    python3 -m pip --version >/dev/null 2>&1 ||
      { say "python3 -m pip is needed to install the wheels of $wheels"; exit 2; }
    pip=(python3 -m pip)
  else
    wheels=$deps/wheels
    if [ ! -x "$deps/pip-env/bin/pip" ]; then
      rm -rf "$deps/pip-env"
      /usr/bin/python3 -m venv "$deps/pip-env" ||
        { say "cannot make a virtual environment for pip in $deps/pip-env"; exit 1; }
    fi
    pip=("$deps/pip-env/bin/pip")
    say "fetching the wheels of $requirements from the Python registry into $wheels"
    rm -rf "$wheels"  # (only the pinned ones: make_bundle.sh carries this folder)
    "${pip[@]}" download -q --disable-pip-version-check --no-deps --only-binary=:all: -d "$wheels" -r "$requirements" ||
      { say "could not fetch them (no network? QCHECK_TEST_WHEELS names a folder that has them)"; exit 1; }
  fi
  rm -rf "$site"
  "${pip[@]}" install -q --disable-pip-version-check --no-index --no-deps --find-links "$wheels" --target "$site" \
    -r "$requirements" || { say "could not install the wheels of $wheels into $site"; exit 1; }
  cp "$requirements" "$site/requirements.txt"  # written last: a half-made site is made again
fi
exec 9>&-

export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
exec "$@"
