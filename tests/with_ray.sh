#!/usr/bin/env bash
# Runs a Python test script with Ray, for the tests of the Ray campaign
# (tests/fuzz_smoke/ray_campaign_test.py) and of the Python door's workers on
# Ray (python/tests/ray/ray_door.py), called by ctest. Ray is an optional extra
# of qcheck, never a need of the core: it is taken from the Python registry
# into a virtual environment of the build's own (RAY_ENV, made once, with the
# system's packages: numpy, pytest), unless the python3 on PATH has it.
#
#   with_ray.sh RAY_ENV SCRIPT [ARGS...]
set -euo pipefail
env_dir=$1; shift
# (from /: a folder named ray in the current one, as Ray's own /tmp/ray, imports as an empty package)
has_ray() { (cd / && "$1" -c 'import ray; ray.remote' 2>/dev/null); }
ray_version=2.60.0  # the version the campaign's figures were measured with (tools/fuzz_campaign/README.md)
if has_ray python3; then
  python=python3
else
  python=$env_dir/bin/python
  if ! has_ray "$python"; then
    echo "with_ray: installing ray==$ray_version into $env_dir (once)"
    rm -rf "$env_dir"
    /usr/bin/python3 -m venv --system-site-packages "$env_dir"
    "$env_dir/bin/pip" install -q "ray==$ray_version" ||
      { echo "FAIL: ray==$ray_version could not be installed from the Python registry into $env_dir"; exit 1; }
  fi
fi
exec "$python" "$@"
