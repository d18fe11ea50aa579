#!/usr/bin/env bash
# Downloads, here, the wheels that benchmarks/gpu_check.sh --install adds on the lent GPU machine, whose
# image has PyTorch, nvidia-ml-py, psutil, pluggy and prometheus-client but no network.
#
#   bash benchmarks/gpu_check_wheels.sh [DEST]      # default DEST: build/gpu-check-wheels (ignored by git)
#
# What the headless steps need beyond the image: jsonschema-rs (every reader of a snapshot, profile or
# bench history). The tui_startup step (first frame) also needs Textual and what it needs that the image
# lacks or may hold too old. Left out, as no step needs them: textual-serve (`gpudash web`), bcrypt and PyYAML
# (`serve --web-config` only), tomli (Python < 3.11; the image runs 3.12). setuptools builds gpudash from the
# tree there.
# Each version is the one the project's venv runs (so CI tested it), for CPython 3.12 on x86-64 Linux.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEST=${1:-$ROOT/build/gpu-check-wheels}
PY=${PYTHON:-$ROOT/.venv/bin/python}
NAMES=(jsonschema-rs setuptools textual textual-plotext plotext platformdirs linkify-it-py mdit-py-plugins rich
  markdown-it-py)

pins=()
for name in "${NAMES[@]}"; do
  version=$("$PY" -c 'import sys, importlib.metadata as m; print(m.version(sys.argv[1]))' "$name") || {
    echo "gpu_check_wheels: $name is not installed in $PY: install the project's venv first (README)" >&2
    exit 1
  }
  pins+=("$name==$version")
done

rm -rf "$DEST"
mkdir -p "$DEST"
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$DEST" "${pins[@]}"
echo "gpu_check_wheels: ${#pins[@]} wheels, $(du -sh "$DEST" | cut -f1) in $DEST:"
ls -1 "$DEST"
