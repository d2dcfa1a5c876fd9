#!/usr/bin/env bash
# The project's test command (README, "Quick start"): services up, the fast tests, then the real-server
# tests — the payments demo on a managed WildFly (full profile, with its broker) over H2, PostgreSQL (the tests'
# own cluster, with two-phase commit; plus a second WildFly node on the same database, and the fault scenarios)
# and MariaDB (each with a two-node storm), an idempotent message-driven bean on H2 and PostgreSQL; on
# Payara Micro over H2; and on Payara Server over PostgreSQL, with its OpenMQ broker. Under CI=true (the default
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
rm -f target/reliability-report.md
contract_and_load='%regex[.*(PaymentsContractIT|StatusCodesIT|StormIT|PurgeUnderLoadIT).*]'
step "real-server tests: WildFly + H2, an idempotent message-driven bean, and a storm on two nodes sharing an H2 TCP server"
mvn -B verify -Pit-wildfly -Dit.db=h2 -Dit.includes='%regex[.*(PaymentsContractIT|StatusCodesIT|MessagesIT|BusinessMethodsIT|StormIT|PurgeUnderLoadIT).*]' "$@"
step "real-server tests: WildFly + PostgreSQL, two WildFly nodes on it, and the fault scenarios (CI size)"
mvn -B verify -Pit-wildfly -Dit.db=postgresql -Dit.includes='**/*IT.java' "$@"
step "real-server tests: WildFly + MariaDB, and a storm on two nodes"
mvn -B verify -Pit-wildfly -Dit.db=mariadb -Dit.includes="$contract_and_load" "$@"
cat target/reliability-report.md
step "real-server tests: Payara Micro + H2"
mvn -B verify -Pit-payara -Dit.db=h2 "$@"
step "real-server tests: Payara Server + PostgreSQL (configured with asadmin), an idempotent message-driven bean on OpenMQ"
mvn -B verify -Pit-payara-server -Dit.db=postgresql \
  -Dit.includes='%regex[.*(PaymentsContractIT|StatusCodesIT|MessagesIT|BusinessMethodsIT).*]' "$@"
step "all tests passed"
