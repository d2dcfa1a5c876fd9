#!/usr/bin/env bash
# The project's test command (README, "Quick start"): services up, then every test Maven's verify phase
# runs. Under CI=true (the default here) no test may skip for want of a database.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/services.sh
export CI="${CI:-true}"
mvn -B verify "$@"
