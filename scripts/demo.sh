#!/usr/bin/env bash
# Builds the library and the payments demo, provisions WildFly 39 from Maven Central (once), configures it
# with server-config/wildfly, deploys the demo and serves http://127.0.0.1:8080/demo/api until Ctrl-C.
#   scripts/demo.sh                      embedded H2 (in memory)
#   DEMO_DB=postgresql scripts/demo.sh   the machine's PostgreSQL; DEMO_DB_URL, DEMO_DB_USER, DEMO_DB_PASSWORD
#                                        override jdbc:postgresql://127.0.0.1:5432/test as postgres
#   DEMO_REDIS=redis://127.0.0.1:6379 scripts/demo.sh   finished payments also kept in and replayed from Redis
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
WILDFLY_VERSION=39.0.1.Final
db="${DEMO_DB:-h2}"
port="${DEMO_HTTP_PORT:-8080}"
server_dir="$root/target/demo-server/$db"
home="$server_dir/wildfly-$WILDFLY_VERSION"
mvn_q() { mvn -q -B "$@"; }

# The library and the demo WAR, rebuilt only when a source changed.
jar="$HOME/.m2/repository/dev/idempotency/idempotency-cdi/0.1.0-SNAPSHOT/idempotency-cdi-0.1.0-SNAPSHOT.jar"
if [ ! -f "$jar" ] || [ -n "$(find pom.xml src/main -newer "$jar" -print -quit)" ]; then
  echo "demo: building the library"
  mvn_q install -DskipTests
fi
war="examples/payments/target/demo.war"
if [ ! -f "$war" ] || [ -n "$(find examples/payments/pom.xml examples/payments/src "$jar" -newer "$war" -print -quit)" ]; then
  echo "demo: building the payments demo"
  mvn_q -f examples/payments/pom.xml package
fi

# WildFly, unpacked from Maven Central once per database variant, and configured offline.
if [ ! -x "$home/bin/standalone.sh" ]; then
  echo "demo: provisioning WildFly $WILDFLY_VERSION ($db)"
  DB_URL="${DEMO_DB_URL:-}" DB_USER="${DEMO_DB_USER:-}" DB_PASSWORD="${DEMO_DB_PASSWORD:-}" HTTP_PORT="$port" \
    WILDFLY_VERSION="$WILDFLY_VERSION" scripts/provision-wildfly.sh "$server_dir" "$db" --demo
fi
cp "$war" "$home/standalone/deployments/demo.war"

base="http://127.0.0.1:$port/demo/api"
(
  for _ in $(seq 1 120); do
    if [ -f "$home/standalone/deployments/demo.war.deployed" ]; then
      cat <<MSG

  The payments demo is ready: $base   (users alice/alice, bob/bob in tenant acme; carol/carol, mallory/mallory in globex)
  Try it (run it twice: the second answer is the replay, with Idempotent-Replayed: true):

    curl -i -u alice:alice -H 'Content-Type: application/json' -H 'Idempotency-Key: order-A-1-try' \\
         -d '{"merchantOrderNo":"A-1","amount":100.00,"currency":"EUR"}' $base/payments

  Stop with Ctrl-C.
MSG
      exit 0
    fi
    if [ -f "$home/standalone/deployments/demo.war.failed" ]; then
      echo "demo: the deployment failed:" >&2
      cat "$home/standalone/deployments/demo.war.failed" >&2
      exit 1
    fi
    sleep 1
  done
) &
redis=()
[ -n "${DEMO_REDIS:-}" ] && redis=("-Didempotency.redis.url=$DEMO_REDIS")
exec "$home/bin/standalone.sh" -c standalone-full.xml -b 127.0.0.1 -Djboss.http.port="$port" \
  -Djboss.bind.address.management=127.0.0.1 "${redis[@]}"
