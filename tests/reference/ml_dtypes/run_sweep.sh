#!/usr/bin/env bash
# ctest reference.ml_dtypes_sweep: sweep.py under the pinned ml_dtypes of
# requirements.txt, installed by tests/with_test_deps.sh into DEPS_DIR.
# Where ml_dtypes cannot be installed (no network and no wheel fetched
# before, or a machine whose wheel requirements.txt does not pin) the test is
# skipped, exit 77, and says why; once installed, anything else that goes
# wrong (ml_dtypes not importable with this numpy, a mismatch) is a failure.
#
#   run_sweep.sh WITH_TEST_DEPS DEPS_DIR PYTHON LIBRARY [SWEEP ARGS...]
set -uo pipefail
if [ $# -lt 4 ]; then
  echo "usage: run_sweep.sh WITH_TEST_DEPS DEPS_DIR PYTHON LIBRARY [SWEEP ARGS...]" >&2
  exit 2
fi
with_deps=$1 deps=$2 python=$3 library=$4
shift 4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
requirements=$here/requirements.txt
if ! "$with_deps" --requirements "$requirements" "$deps" true; then
  echo "SKIPPED: ml_dtypes could not be installed from $requirements into $deps (see with_test_deps above);" \
       "the cross-check of numerics/e4m3fnuz and numerics/e2m1 against it did not run"
  exit 77
fi
exec "$with_deps" --requirements "$requirements" "$deps" "$python" "$here/sweep.py" --library "$library" "$@"
