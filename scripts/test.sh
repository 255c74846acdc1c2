#!/usr/bin/env bash
# The whole test suite, from a fresh Debian machine with the Swift toolchain:
# installs what it needs (idempotently), builds, and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

# The mls-rs interop peer (Tests/ImprintMLSInteropTests) runs from .venv-peers;
# create it (idempotent) so those tests never skip here.
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3 python3-venv >/dev/null
fi
bash Benchmarks/peers/setup.sh >/dev/null

swift build --build-tests
swift test --skip-build
