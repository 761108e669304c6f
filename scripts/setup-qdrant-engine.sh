#!/usr/bin/env bash
# Creates .venv-qdrant (the Python environment of the Qdrant test engine, see
# test/qdrant/engine/) and installs its pinned requirements. Idempotent: does nothing
# when the venv exists and was built from the current requirements file.
#   bash scripts/setup-qdrant-engine.sh          # PYTHON=python3.12 to choose the interpreter
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo_root/.venv-qdrant"
requirements="$repo_root/test/qdrant/engine/requirements.txt"
stamp="$venv/.requirements.sha256"

python="${PYTHON:-}"
if [ -z "$python" ]; then
  for candidate in python3.11 python3.12 python3.13 python3.10 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then python="$candidate"; break; fi
  done
fi
if [ -z "$python" ]; then
  echo "setup-qdrant-engine: no python3 found (need Python 3.10 or newer)" >&2
  exit 1
fi

wanted="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] \
  && "$venv/bin/python" -c 'import qdrant_edge, jsonschema' >/dev/null 2>&1; then
  echo "setup-qdrant-engine: $venv is up to date"
  exit 0
fi

echo "setup-qdrant-engine: building $venv with $("$python" --version 2>&1)"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
"$venv/bin/python" -c 'import qdrant_edge, qdrant_client, jsonschema'
echo "$wanted" > "$stamp"
echo "setup-qdrant-engine: ready ($venv)"
