#!/usr/bin/env bash
# Unpacks WildFly from Maven Central into a fresh directory and applies server-config/wildfly to it.
#   scripts/provision-wildfly.sh <dir> <h2|postgresql|mariadb> [--demo]
# Prints nothing but errors; the server is <dir>/wildfly-<version>. Environment as configure.sh, plus
# WILDFLY_VERSION (default 39.0.1.Final).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$1"; db="$2"; demo="${3:-}"
version="${WILDFLY_VERSION:-39.0.1.Final}"
mvn_q() { mvn -q -B -f "$root/pom.xml" "$@"; }

rm -rf "$dir"
mkdir -p "$dir"
# The distribution zip without its transitive dependencies (a channel manifest they name is not served).
mvn_q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:unpack -Dartifact="org.wildfly:wildfly-dist:$version:zip" \
  -DoutputDirectory="$dir" -Dmdep.overWriteReleases=true
case "$db" in
  postgresql) driver="org.postgresql:postgresql:42.7.14" ;;
  mariadb) driver="org.mariadb.jdbc:mariadb-java-client:3.5.11" ;;
  h2) driver="" ;;
  *) echo "provision-wildfly: unknown database '$db' (h2, postgresql, mariadb)" >&2; exit 2 ;;
esac
if [ -n "$driver" ]; then
  mvn_q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy -Dartifact="$driver" -DoutputDirectory="$dir/drivers"
  export DB_DRIVER_JAR="$(ls "$dir"/drivers/*.jar)"
fi
"$root/server-config/wildfly/configure.sh" "$dir/wildfly-$version" "$db" $demo
