#!/usr/bin/env bash
# The campaign on a Ray cluster (ray_campaign_test.py says what it checks),
# called by ctest (label fuzz-smoke). Ray is an optional extra of qcheck, never
# a need of the core: this test takes it from the Python registry into a
# virtual environment of the build's own (RAY_ENV, made once), unless the
# python3 on PATH already has it.
#
#   ray_campaign_test.sh RAY_ENV CAMPAIGN FUSED_Q_FUZZER NUMERICS_FUZZER CASE_DECODE_FUZZER REPLAY DICT CORPUS MINIMIZE
set -euo pipefail
env_dir=$1; shift
ray_version=2.60.0  # the version the campaign's figures were measured with (tools/fuzz_campaign/README.md)
if python3 -c 'import ray' 2>/dev/null; then
  python=python3
else
  python=$env_dir/bin/python
  if ! "$python" -c 'import ray' 2>/dev/null; then
    echo "ray_campaign_test: installing ray==$ray_version into $env_dir (once)"
    rm -rf "$env_dir"
    /usr/bin/python3 -m venv --system-site-packages "$env_dir"
    "$env_dir/bin/pip" install -q "ray==$ray_version" ||
      { echo "FAIL: ray==$ray_version could not be installed from the Python registry into $env_dir"; exit 1; }
  fi
fi
exec "$python" "$(dirname "$0")/ray_campaign_test.py" "$@"
