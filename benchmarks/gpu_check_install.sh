#!/usr/bin/env bash
# gpu_check.sh's install step, for the lent machine (no network): the carried wheels, then gpudash from the
# working tree, into PY's own environment, with no dependency resolution.
#
#   bash benchmarks/gpu_check_install.sh PY WHEELS_DIR ROOT
#
# The wheels come first: setuptools among them builds gpudash (pyproject's `license = "MIT"` needs a newer
# setuptools than some images hold), without build isolation, since nothing can be downloaded there.
# `pip check` runs last and only reports: it tells whether the image's own packages meet gpudash's needs.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: gpu_check_install.sh PY WHEELS_DIR ROOT" >&2; exit 2; }
PY=$1
WHEELS=$2
ROOT=$3

shopt -s nullglob
wheels=("$WHEELS"/*.whl)
shopt -u nullglob
if [ "${#wheels[@]}" -gt 0 ]; then
  echo "installing ${#wheels[@]} carried wheels from $WHEELS"
  "$PY" -m pip install -q --no-index --no-deps --no-cache-dir --upgrade "${wheels[@]}"
else
  echo "no wheels in $WHEELS: installing gpudash alone"
fi
"$PY" -m pip install -q --no-index --no-deps --no-build-isolation --no-cache-dir --force-reinstall "$ROOT"
"$PY" -m pip check || echo "(pip check's findings are reported, not fatal: the steps show what they break)"
cd /
"$PY" -c 'import gpudash, importlib.metadata as m; print("gpudash", m.version("gpudash"), "at", gpudash.__file__)'
"$PY" -m pip list --format=freeze
