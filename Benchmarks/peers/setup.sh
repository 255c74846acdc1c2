#!/usr/bin/env bash
# Creates (idempotently) the peer-comparison venv at <repo>/.venv-peers and
# installs the pinned peer libraries. Prints the venv's python path.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="$ROOT/.venv-peers"
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV" >&2
fi
PKGS=(loro==1.17.1 pycrdt==0.14.13 agentvault-mls-rs-uniffi==0.1.1 selenium==4.27.1 marionette-driver==3.7.1 pycrdt-websocket==0.16.5 pycrdt-store==0.1.5 websockets==17.4)
if ! "$VENV/bin/python" -m pip show loro pycrdt agentvault-mls-rs-uniffi selenium marionette-driver pycrdt-websocket pycrdt-store websockets >/dev/null 2>&1 \
   || ! "$VENV/bin/python" - "${PKGS[@]}" <<'PYEOF'
import sys
from importlib.metadata import version
sys.exit(0 if all(version(n) == v for n, v in (p.split("==") for p in sys.argv[1:])) else 1)
PYEOF
then
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PKGS[@]}" >&2
fi
echo "$VENV/bin/python"
