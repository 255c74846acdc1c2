#!/usr/bin/env bash
# Installs the Debian packages Imprint builds and tests with. Idempotent: packages
# already present are left alone, and apt is only touched when something is missing.
set -euo pipefail

# chromium and chromium-driver (and firefox-esr, driven over Marionette) run the reviewer-snapshot
# viewer tests (Tests/ImprintSnapshotTests); tar and zstd the archive interop suite (BundleArchiveTests).
# gdb prints the test process's threads when a run outlives its deadline (scripts/test-watchdog.sh).
packages=(libzstd-dev libarchive-dev zlib1g-dev pkg-config libsqlite3-dev postgresql chromium chromium-driver firefox-esr tar zstd gdb)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if [ "${#missing[@]}" -gt 0 ]; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    echo "installing: ${missing[*]}" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
