#!/usr/bin/env bash
# Applies server-config/wildfly to an unpacked WildFly, offline (embedded server):
#   configure.sh <JBOSS_HOME> <h2|postgresql|mariadb> [--demo]
# Environment: DB_URL, DB_USER, DB_PASSWORD (defaults: the machine's services), DB_DRIVER_JAR (for
# postgresql/mariadb), IDEMPOTENCY_SECRET (default: 48 random bytes, base64), HTTP_PORT (for --demo).
# With --demo it also adds the demo's users (alice, bob, carol; password = user name) and service user.
# EXTRA_SYSTEM_PROPERTIES="k=v k=v" adds further server system properties (e.g. a per-endpoint setting).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
home="$1"; db="$2"; demo="${3:-}"
cli="$home/bin/jboss-cli.sh"
props="$(mktemp)"
trap 'rm -f "$props"' EXIT

case "$db" in
  h2)         url="${DB_URL:-jdbc:h2:mem:payments;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000}"; user="${DB_USER:-sa}"; password="${DB_PASSWORD:-sa}" ;;
  postgresql) url="${DB_URL:-jdbc:postgresql://127.0.0.1:5432/test}"; user="${DB_USER:-postgres}"; password="${DB_PASSWORD:-postgres}" ;;
  mariadb)    url="${DB_URL:-jdbc:mariadb://127.0.0.1:3306/test}"; user="${DB_USER:-root}"; password="${DB_PASSWORD:-}" ;;
  *) echo "configure.sh: unknown database '$db' (h2, postgresql, mariadb)" >&2; exit 2 ;;
esac
secret="${IDEMPOTENCY_SECRET:-$(head -c 48 /dev/urandom | base64 -w0)}"
service_password="$(head -c 24 /dev/urandom | base64 -w0 | tr -d '/+=')"
{
  echo "db.url=$url"
  echo "db.user=$user"
  # jboss-cli needs a non-empty value; an empty password is written as a single space and trimmed by the driver.
  echo "db.password=${password:- }"
  echo "db.max-pool=${DB_MAX_POOL:-60}"
  echo "db.driver.jar=${DB_DRIVER_JAR:-}"
  echo "idempotency.secret=$secret"
  echo "demo.service.password=$service_password"
  echo "demo.acquirer.url=http://127.0.0.1:${HTTP_PORT:-8080}/demo/api"
} > "$props"

run() { "$cli" --resolve-parameter-values --properties="$props" --file="$here/$1" >/dev/null; }
run "datasource-$db.cli"
run idempotency.cli
if [ -n "${EXTRA_SYSTEM_PROPERTIES:-}" ]; then
  extra="$(mktemp)"
  {
    echo "embed-server --std-out=discard --server-config=standalone.xml"
    for kv in $EXTRA_SYSTEM_PROPERTIES; do echo "/system-property=${kv%%=*}:add(value=\"${kv#*=}\")"; done
    echo "stop-embedded-server"
  } > "$extra"
  "$cli" --file="$extra" >/dev/null
  rm -f "$extra"
fi
if [ "$demo" = "--demo" ]; then
  run demo.cli
  conf="$home/standalone/configuration"
  hash() { printf '%s' "$1:ApplicationRealm:$2" | md5sum | cut -d' ' -f1; }
  for u in alice bob carol; do
    echo "$u=$(hash "$u" "$u")" >> "$conf/application-users.properties"
    echo "$u=user" >> "$conf/application-roles.properties"
  done
  echo "payments-service=$(hash payments-service "$service_password")" >> "$conf/application-users.properties"
  echo "payments-service=user" >> "$conf/application-roles.properties"
fi
