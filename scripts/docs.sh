#!/usr/bin/env bash
# Builds the DocC documentation of every library product (swift-docc-plugin) and fails on
# any documentation warning: a link to a symbol that does not exist, a parameter left
# undocumented next to documented ones. Archives land in .build/plugins/Swift-DocC/outputs/.
# Run by scripts/test.sh after the tests; on its own: bash scripts/docs.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# The targets of the library products, as Package.swift declares them.
targets="$(swift package dump-package | python3 -c '
import json, sys
package = json.load(sys.stdin)
print(" ".join(t for p in package["products"] if "library" in p["type"] for t in p["targets"]))')"
args=()
for target in ${targets}; do args+=(--target "${target}"); done
swift package generate-documentation "${args[@]}" --warnings-as-errors
