#!/usr/bin/env bash
# Before the real-server tests: a fresh database for them (PostgreSQL/MariaDB: idem_it; PostgreSQL on a cluster of
# their own, src-it/it-postgres.sh) and a fresh server.
#   src-it/provision.sh <wildfly|payara|payara-server> <dir> <h2|postgresql|mariadb>
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
server="$1"; dir="$2"; db="$3"
case "$db" in
  postgresql)
    # On the tests' own cluster (5433): it commits in two phases, as a message's XA transaction needs.
    "$root/src-it/it-postgres.sh"
    psql -q -h 127.0.0.1 -p 5433 -U postgres -d postgres -c "DROP DATABASE IF EXISTS idem_it WITH (FORCE)" -c "CREATE DATABASE idem_it"
    export DB_URL="jdbc:postgresql://127.0.0.1:5433/idem_it" ;;
  mariadb)
    mariadb -uroot -h127.0.0.1 -e "DROP DATABASE IF EXISTS idem_it; CREATE DATABASE idem_it"
    export DB_URL="jdbc:mariadb://127.0.0.1:3306/idem_it" ;;
esac
mkdir -p "$(dirname "$dir")"
# A short lease on the payments endpoint, so that a test can let it run out, and a bound on the keys a
# caller may hold there, so that a flood reaches it: configured on the server only.
# Kept next to the server for the tests that start more nodes.
echo "idempotency.endpoints.payments.create.lease=PT3S idempotency.endpoints.payments.create.max-keys-per-endpoint=1500 idempotency.endpoints.payments.commands.lease=PT3S" \
  > "$dir.properties"
export EXTRA_SYSTEM_PROPERTIES="$(cat "$dir.properties")"
# One secret for every node of this run, kept next to the server for the tests that start a second node.
head -c 48 /dev/urandom | base64 -w0 > "$dir.secret"
export IDEMPOTENCY_SECRET="$(cat "$dir.secret")"
case "$server" in
  wildfly)
    "$root/scripts/provision-wildfly.sh" "$dir" "$db" --demo
    # The fault tests' nodes start from a copy of this server, made before it ever runs (WildFlyNode.template):
    # the same configuration, secret and properties, provisioned once per stage instead of twice.
    rm -rf "$dir"-node-template-*
    cp -a "$dir" "$dir-node-template-$db"
    touch "$dir-node-template-$db/.template"
    # The tests' own queue, beside the demo's.
    "$dir"/wildfly-*/bin/jboss-cli.sh --file="$root/src-it/messaging-it.cli" > "$dir.cli.out" 2>&1 \
      || { cat "$dir.cli.out" >&2; exit 1; } ;;
  payara)
    # Payara Micro 6 and the JDBC driver next to what server-config/payara writes; the Arquillian
    # container starts it with these (src-it/resources/arquillian.xml, payara.micro.* properties).
    rm -rf "$dir"
    mkdir -p "$dir/lib"
    mvn -q -B -f "$root/pom.xml" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
      -Dartifact=fish.payara.extras:payara-micro:"${PAYARA_MICRO_VERSION:-6.2025.10}" -DoutputDirectory="$dir" \
      -Dmdep.stripVersion=true
    if [ "$db" = postgresql ]; then
      mvn -q -B -f "$root/pom.xml" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
        -Dartifact=org.postgresql:postgresql:42.7.14 -DoutputDirectory="$dir/lib"
    fi
    "$root/server-config/payara/configure.sh" "$dir" "$db" --demo ;;
  payara-server)
    # Payara Server 6 (the full distribution, with its embedded OpenMQ broker), configured as an operator does:
    # asadmin against the running domain with what server-config/payara writes, the JDBC driver added as a
    # library, then stopped; the Arquillian container (dev.idempotency.it.payara) starts it and deploys.
    rm -rf "$dir"
    mkdir -p "$dir/lib"
    mvn -q -B -f "$root/pom.xml" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:unpack \
      -Dartifact=fish.payara.distributions:payara:6.2025.9:zip -DoutputDirectory="$dir" -Dmdep.overWriteReleases=true
    if [ "$db" = postgresql ]; then
      mvn -q -B -f "$root/pom.xml" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
        -Dartifact=org.postgresql:postgresql:42.7.14 -DoutputDirectory="$dir/lib"
    fi
    "$root/server-config/payara/configure.sh" "$dir" "$db" --demo --server
    grep -v "^#" "$root/src-it/messaging-it.asadmin" >> "$dir/post-boot.asadmin"
    asadmin="$dir/payara6/bin/asadmin"
    "$asadmin" start-domain > "$dir.asadmin.out" 2>&1 || { cat "$dir.asadmin.out" >&2; exit 1; }
    # multimode goes on past a failed command and ends successfully: its output says what failed.
    "$asadmin" multimode --file "$dir/post-boot.asadmin" >> "$dir.asadmin.out" 2>&1 || true
    # The library's secrets as password aliases (server-config/payara/configure.sh --server), as an operator does.
    for alias in "$dir"/aliases/*; do
      "$asadmin" --passwordfile "$alias" create-password-alias "$(basename "$alias")" >> "$dir.asadmin.out" 2>&1 \
        || { cat "$dir.asadmin.out" >&2; exit 1; }
      rm -f "$alias"
    done
    # The tests' domain only: the client compiler alone boots it a quarter faster on 2 cores; they measure no speed.
    "$asadmin" create-jvm-options '-XX\:TieredStopAtLevel=1' >> "$dir.asadmin.out" 2>&1 \
      || { cat "$dir.asadmin.out" >&2; exit 1; }
    "$asadmin" stop-domain >> "$dir.asadmin.out" 2>&1
    if grep -q -E "failed\.|remote failure" "$dir.asadmin.out"; then cat "$dir.asadmin.out" >&2; exit 1; fi ;;
  *) echo "provision: unknown server '$server'" >&2; exit 2 ;;
esac
