#!/usr/bin/env bash
# The project's test command (README, "Quick start"): services up, the fast tests, then the real-server
# tests — the payments demo on a managed WildFly over H2, PostgreSQL (plus a second WildFly node on the
# same database) and MariaDB, and on Payara Micro over H2 and PostgreSQL. Under CI=true (the default
# here) no test may skip for want of a database; any failure stops the run with a non-zero exit.
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
step "real-server tests: WildFly + H2"
mvn -B verify -Pit-wildfly -Dit.db=h2 "$@"
step "real-server tests: WildFly + PostgreSQL, two WildFly nodes on it, and the fault scenarios (CI size)"
rm -f target/reliability-report.md
mvn -B verify -Pit-wildfly -Dit.db=postgresql -Dit.includes='**/*IT.java' "$@"
cat target/reliability-report.md
step "real-server tests: WildFly + MariaDB"
mvn -B verify -Pit-wildfly -Dit.db=mariadb "$@"
for db in h2 postgresql; do
  step "real-server tests: Payara Micro + $db"
  mvn -B verify -Pit-payara -Dit.db="$db" "$@"
done
step "all tests passed"
