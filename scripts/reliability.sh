#!/usr/bin/env bash
# The fault suite at full size (src-it/java/dev/idempotency/reliability): two WildFly nodes on PostgreSQL,
# crashed, paused and resumed by the tests, a recorded history and an SQL checker; the storm also on
# MariaDB and H2. Writes target/reliability-report.md. scripts/test.sh runs the same scenarios at CI size.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/services.sh
export CI="${CI:-true}"
rm -f target/reliability-report.md
mvn -B -q install -DskipTests
mvn -B -q -f examples/payments/pom.xml package
mvn -B verify -Pit-wildfly -Dit.db=postgresql -Dit.includes='**/reliability/*IT.java' -Dreliability.scale=full "$@"
for db in mariadb h2; do
  mvn -B verify -Pit-wildfly -Dit.db="$db" -Dit.includes='%regex[.*(StormIT|PurgeUnderLoadIT).*]' -Dreliability.scale=full "$@"
done
echo "report: target/reliability-report.md"
