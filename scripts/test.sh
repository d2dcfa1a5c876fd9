#!/usr/bin/env bash
# The project's test command (README, "Quick start"): services up, the fast tests, then the real-server
# tests — the payments demo on a managed WildFly over H2, PostgreSQL and MariaDB. Under CI=true (the
# default here) no test may skip for want of a database; any failure stops the run with a non-zero exit.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/services.sh
export CI="${CI:-true}"
started=$(date +%s)
step() { echo; echo "== $* ($(( $(date +%s) - started ))s)"; }

step "fast tests, and the library installed for the demo"
mvn -B install "$@"
step "the payments demo WAR"
mvn -B -q -f examples/payments/pom.xml package
for db in h2 postgresql mariadb; do
  step "real-server tests: WildFly + $db"
  mvn -B verify -Pit-wildfly -Dit.db="$db" "$@"
done
step "all tests passed"
