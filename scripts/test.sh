#!/usr/bin/env bash
# The project's test command (README, "Quick start"): services up, the fast tests, then the real-server
# tests — the payments demo on a managed WildFly (full profile, with its broker) over H2, PostgreSQL (the tests'
# own cluster, with two-phase commit; plus a second WildFly node on the same database, and the fault scenarios)
# and MariaDB (each with a two-node storm), an idempotent message-driven bean on H2 and PostgreSQL; on
# Payara Server over PostgreSQL, with its OpenMQ broker (the demo keeps its outcomes in the machine's Redis, database 3, on every server); and, on Java 25 with the library jar built on Java 17,
# WildFly over MariaDB (and over a three-node MariaDB Galera Cluster of the tests' own) and Payara Micro 7 (Jakarta EE 11) over H2. Under CI=true (the default here) no test may
# skip for want of a database; any failure stops the run with a non-zero exit.
set -euo pipefail
cd "$(dirname "$0")/.."
# The newer JDK the Jakarta EE 11 server needs (Payara 7: Java 21 or later), beside the machine's Java 17.
jdk25="${JDK25_HOME:-$(ls -d /usr/lib/jvm/temurin-25-jdk* 2>/dev/null | head -n1)}"
if [ ! -x "$jdk25/bin/java" ]; then
  echo "scripts/test.sh: no JDK 25 (looked for /usr/lib/jvm/temurin-25-jdk*; set JDK25_HOME)" >&2
  exit 1
fi
export CI="${CI:-true}"
started=$(date +%s)
# Each stage's name and start, for the table printed at the end (also when a stage fails).
stages=(); stage_starts=()
step() {
  echo; echo "== $* ($(( $(date +%s) - started ))s)"
  stages+=("$*"); stage_starts+=("$(date +%s)")
}
stage_table() {
  local rc=$? now i end
  now=$(date +%s)
  echo; echo "== stage durations (exit $rc)"
  for i in "${!stages[@]}"; do
    end=${stage_starts[$((i + 1))]:-$now}
    printf '%6ds  %s\n' "$(( end - stage_starts[i] ))" "${stages[$i]}"
  done
  printf '%6ds  %s\n' "$(( now - started ))" "in all ($(( (now - started) / 60 )) min $(( (now - started) % 60 )) s)"
}
trap stage_table EXIT
step "services: PostgreSQL, MariaDB, Redis up"
scripts/services.sh

step "fast tests, and the library installed for the demo"
mvn -B install "$@"
step "the payments demo WAR"
mvn -B -q -f examples/payments/pom.xml package
# The jar as built on Java 17, for the runs on Java 25 (whose own build would compile it again).
java17_library="$PWD/target/it-library-java17.jar"
cp target/idempotency-cdi-*-SNAPSHOT.jar "$java17_library"
# The real-server stages build the jar again (the tests deploy it) but need neither its javadoc nor its sources.
it=(-Dmaven.javadoc.skip=true -Dmaven.source.skip=true)
rm -f target/reliability-report.md
step "real-server tests: WildFly + H2, an idempotent message-driven bean, and a storm on two nodes sharing an H2 TCP server"
mvn -B verify "${it[@]}" -Pit-wildfly -Dit.db=h2 -Dit.includes='%regex[.*(PaymentsContractIT|StatusCodesIT|MessagesIT|BusinessMethodsIT|StormIT|PurgeUnderLoadIT).*]' "$@"
step "real-server tests: WildFly + PostgreSQL, two WildFly nodes on it, and the fault scenarios (CI size)"
mvn -B verify "${it[@]}" -Pit-wildfly -Dit.db=postgresql -Dit.includes='**/*IT.java' -Dit.excludes='%regex[.*(GaleraFaultsIT|PayaraServerCrashIT).*]' "$@"
step "real-server tests: WildFly on Java 25 + MariaDB (the library built on Java 17), a storm on two nodes, and on a Galera cluster"
JAVA_HOME="$jdk25" mvn -B verify "${it[@]}" -Pit-wildfly -Dit.db=mariadb -Dit.library="$java17_library" \
  -Dit.includes='%regex[.*(PaymentsContractIT|StatusCodesIT|StormIT|PurgeUnderLoadIT|GaleraFaultsIT).*]' "$@"
cat target/reliability-report.md
step "real-server tests: Payara Micro 7 (Jakarta EE 11) on Java 25 + H2 (the library built on Java 17)"
PAYARA_MICRO_VERSION=7.2026.11 JAVA_HOME="$jdk25" mvn -B verify "${it[@]}" -Pit-payara -Dit.db=h2 \
  -Dit.library="$java17_library" "$@"
step "real-server tests: Payara Server + PostgreSQL (configured with asadmin), an idempotent message-driven bean on OpenMQ, kill -9 inside asynchronous tasks"
mvn -B verify "${it[@]}" -Pit-payara-server -Dit.db=postgresql \
  -Dit.includes='%regex[.*(PaymentsContractIT|StatusCodesIT|MessagesIT|BusinessMethodsIT|PayaraServerCrashIT).*]' "$@"
step "all tests passed"
