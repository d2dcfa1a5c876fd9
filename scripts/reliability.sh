#!/usr/bin/env bash
# The fault suite at full size (src-it/java/dev/idempotency/reliability): two WildFly nodes on PostgreSQL,
# crashed, paused and resumed by the tests, a recorded history and an SQL checker; the storm also on
# MariaDB (and on a MariaDB Galera Cluster of the test's own, with a node killed and one cut off) and H2. Writes target/reliability-report.md. scripts/test.sh runs the same scenarios at CI size.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/services.sh
export CI="${CI:-true}"
rm -f target/reliability-report.md
mvn -B -q install -DskipTests
mvn -B -q -f examples/payments/pom.xml package
mvn -B verify -Pit-wildfly -Dit.db=postgresql -Dit.includes='**/reliability/*IT.java' -Dit.excludes='%regex[.*(GaleraFaultsIT|PayaraServerCrashIT).*]' -Dreliability.scale=full "$@"
# On MariaDB also the Galera scenarios (a three-node cluster of the test's own, GaleraFaultsIT).
mvn -B verify -Pit-wildfly -Dit.db=mariadb -Dit.includes='%regex[.*(StormIT|PurgeUnderLoadIT|GaleraFaultsIT).*]' \
  -Dreliability.scale=full "$@"
mvn -B verify -Pit-wildfly -Dit.db=h2 -Dit.includes='%regex[.*(StormIT|PurgeUnderLoadIT).*]' -Dreliability.scale=full "$@"
echo "report: target/reliability-report.md"
