#!/usr/bin/env bash
# check_dependencies.sh BUILD_DIR [PACKAGE_LIST]
#
# Proves tools/setup/packages.txt complete for a finished build: every file
# outside the source and build trees that the build used (each header in the
# compilers' dependency files, each library on a link line, the compilers) must
# (and, where the Python tests are built, the interpreter and each module
# they import) be installed by a package on the list or by a package those
# depend on. A
# missing row cannot then hide behind a machine that happens to have the
# package: the file is found, its owner (dpkg -S) is not on the list, and the
# check names both. Files that no package owns count as missing too, except
# the CUDA toolkit under /usr/local/cuda (not a Debian package; optional).
#
# Exit 0 when complete, 1 with one line per unlisted file, 77 (ctest's skip)
# where dpkg is absent (not a Debian system).
set -uo pipefail

build=${1:?usage: check_dependencies.sh BUILD_DIR [PACKAGE_LIST]}
here=$(cd "$(dirname "$0")" && pwd)
list=${2:-$here/packages.txt}
source_dir=$(cd "$here/../.." && pwd)
build=$(cd "$build" && pwd)

if ! command -v dpkg >/dev/null 2>&1 || ! command -v apt-cache >/dev/null 2>&1; then
  echo "SKIP: dpkg and apt-cache are needed (not a Debian system)"
  exit 77
fi

# Every package the list brings: its rows and their dependencies, recursively.
mapfile -t listed < <(awk '!/^#/ && NF {print $1}' "$list" | sort -u)
declare -A brought=()
while read -r p; do
  p=${p#<}; p=${p%>}; p=${p%%:*}
  [ -n "$p" ] && brought[$p]=1
done < <(apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts \
           --no-breaks --no-replaces --no-enhances "${listed[@]}" 2>/dev/null |
         awk '/^[^ ]/ {print $1} /Depends:/ {print $NF}')
for p in "${listed[@]}"; do brought[$p]=1; done

# The files the build used.
used=$(mktemp)
trap 'rm -f "$used"' EXIT
{
  find "$build" -name '*.o.d' -exec cat {} + | tr ' \\' '\n\n' | sed 's/:$//' | grep '^/'
  find "$build" -name link.txt -exec grep -ho '/[^ ]*\.\(a\|so[.0-9]*\)' {} +
  sed -n 's/^CMAKE_\(C\|CXX\|CUDA\)_COMPILER:[A-Z]*=\(.*\)$/\2/p' "$build/CMakeCache.txt"
  # The Python package's tests: the interpreter and every module the
  # package and its tests import (found in their import lines), but for the
  # package itself, the optional ones (torch, triton, ml_dtypes: used
  # only where installed, never by CI) and the tests' own pinned ones from
  # the Python registry (xmlschema: python/tests/requirements.txt).
  if grep -q '^QCHECK_PYTHON_TESTS:BOOL=ON' "$build/CMakeCache.txt"; then
    python=$(sed -n 's/^QCHECK_PYTHON3:FILEPATH=//p' "$build/CMakeCache.txt")
    echo "$python"
    grep -rhoE '^\s*(import|from) [A-Za-z_][A-Za-z0-9_]*' "$source_dir/python" --include='*.py' | awk '{print $2}' |
      sort -u | grep -vx -e qcheck -e torch -e triton -e ml_dtypes -e xmlschema | while read -r module; do
      "$python" -c "import $module; print(getattr($module, '__file__', '') or '')" 2>/dev/null
    done
  fi
} | grep -v -e "^$source_dir/" -e "^$build/" -e '^/usr/local/cuda' | sort -u >"$used"

# One dpkg -S for all files ("package[, package]: path" per line): dpkg knows
# a file by the path its package installed, which may be the link or its
# target (merged /usr), so both are asked.
declare -A owner_of=()
mapfile -t files < <(while read -r f; do [ -e "$f" ] && echo "$f"; done <"$used")
mapfile -t real < <(for f in "${files[@]}"; do realpath "$f"; done)
while IFS= read -r line; do
  owner_of[${line#*: }]=${line%%: *}
done < <(dpkg -S "${files[@]}" "${real[@]}" 2>/dev/null)

checked=0 problems=0
declare -A owners=()
for i in "${!files[@]}"; do
  file=${files[$i]}
  checked=$((checked + 1))
  owner=${owner_of[$file]:-${owner_of[${real[$i]}]:-}}
  package=${owner%%,*}
  package=${package%%:*}
  if [ -z "$owner" ]; then
    echo "NOT LISTED: $file is installed by no Debian package"
    problems=$((problems + 1))
  elif [ -z "${brought[$package]:-}" ]; then
    echo "NOT LISTED: $file belongs to the package $package, which $list does not bring"
    problems=$((problems + 1))
  else
    owners[$package]=$(( ${owners[$package]:-0} + 1 ))
  fi
done

summary=""
for p in $(printf '%s\n' "${!owners[@]}" | sort); do summary+=" $p:${owners[$p]}"; done
echo "check_dependencies: $checked files the build in $build used; owners (files):$summary"
if [ $problems -ne 0 ]; then
  echo "FAIL: $problems files come from packages missing from $list: add a row for each package"
  exit 1
fi
echo "every file comes from a package $list brings (${#listed[@]} rows)"
