#!/usr/bin/env bash
# The whole test suite, from a fresh Debian machine with the Swift toolchain:
# installs what it needs (idempotently), builds, and runs every test. The run happens inside
# scripts/with-postgres.sh, which starts a throwaway PostgreSQL cluster and sets
# IMPRINT_TEST_POSTGRES_URL, so the Delivery Service suite runs on both SQLite and PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

swift build --build-tests
bash scripts/with-postgres.sh swift test --skip-build
