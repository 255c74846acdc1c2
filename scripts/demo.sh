#!/usr/bin/env bash
# The main job on the embedded default: `imprint demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift run -c release imprint demo "$@"
