#!/usr/bin/env bash
# The wheel as a user gets it: built (make_wheel.sh), installed into a fresh
# virtual environment (Debian's numpy and pytest seen through
# --system-site-packages; only the tests' own pinned xmlschema and elementpath
# are fetched, python/tests/requirements.txt), and the package's tests run
# against it from outside the source tree: no PYTHONPATH, no QCHECK_LIBRARY.
# Checks first that the installed package loads its own library, that the
# console scripts run the wheel's tools, and that pytest found the plugin
# through its entry point. Part of `./qcheck test` (README's test command).
# usage: tools/wheel/test_wheel.sh BUILD_DIR   (the plain build: its example plugins for the tests)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:?usage: test_wheel.sh BUILD_DIR}" && pwd)
say() { printf 'test_wheel: %s\n' "$*"; }
fail() { say "FAIL: $*"; exit 1; }

"$repo/tools/wheel/make_wheel.sh" "$repo/build/wheel-dist"
wheel=$(ls "$repo"/build/wheel-dist/qcheck-*.whl)
venv=$repo/build/wheel-venv
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/pip" install -q --no-index --no-deps "$wheel"
# The tests' own pinned dependencies (python/tests/requirements.txt: xmlschema
# for the JUnit schema), as a user adds them to the environment: the wheels
# with_test_deps.sh fetched once from the Python registry.
"$repo/tests/with_test_deps.sh" "$build/test-deps" true
"$venv/bin/pip" install -q --no-index --find-links "${QCHECK_TEST_WHEELS:-$build/test-deps/wheels}" \
  -r "$repo/python/tests/requirements.txt"
work=$(mktemp -d "${TMPDIR:-/tmp}/qcheck-wheel-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
run() { env -u PYTHONPATH -u QCHECK_LIBRARY "$@"; }

site=$(run "$venv/bin/python" -c 'import qcheck, os; print(os.path.dirname(qcheck.__file__))')
lib=$(run "$venv/bin/python" -c 'import qcheck; print(qcheck.library_path)')
[[ "$lib" == "$site"/* ]] || fail "the installed package loaded $lib, not its own library under $site"
version=$(run "$venv/bin/python" -c 'import qcheck; print(qcheck.__version__)')
for tool in qcheck-replay qcheck-minimize qcheck-case qcheck-check; do
  [ "$(run "$venv/bin/$tool" --version)" = "$tool $version" ] || fail "$venv/bin/$tool --version"
done
run "$venv/bin/python" -m pytest --version >/dev/null 2>&1 || fail "pytest is not importable in the virtual environment"
plugins=$(run "$venv/bin/python" -m pytest --trace-config --co -q -p no:cacheprovider "$repo/python/tests/test_case.py" 2>&1)
[[ "$plugins" == *"registered: <module 'qcheck.pytest_plugin' from '$site/pytest_plugin.py'>"* ]] ||
  fail "pytest did not load qcheck.pytest_plugin through its pytest11 entry point"
say "installed $(basename "$wheel") into $venv: library $lib, version $version, tools and pytest11 entry point ok"

run env QCHECK_TESTS_INSTALLED=1 QCHECK_PLUGIN_DIR="$build/capi/plugins" \
  QCHECK_CASE_TOOL="$venv/bin/qcheck-case" QCHECK_CHECK_TOOL="$venv/bin/qcheck-check" PYTHONDONTWRITEBYTECODE=1 \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider "$repo/python/tests"
