#!/usr/bin/env bash
# Applies server-config/wildfly to an unpacked WildFly's full profile (standalone-full.xml: with its embedded
# broker), offline (embedded server):
#   configure.sh <JBOSS_HOME> <h2|postgresql|mariadb> [--demo]
# Environment: DB_URL, DB_USER, DB_PASSWORD (defaults: the machine's services), DB_DRIVER_JAR (for
# postgresql/mariadb), IDEMPOTENCY_SECRET (default: 48 random bytes, base64), HTTP_PORT (for --demo).
# With --demo it also adds the demo's users (alice, bob, carol, mallory; password = user name), its operator
# (operator/operator, also in the role idempotency-admin) and service user.
# EXTRA_SYSTEM_PROPERTIES="k=v k=v" adds further server system properties (e.g. a per-endpoint setting).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
home="$1"; db="$2"; demo="${3:-}"
cli="$home/bin/jboss-cli.sh"
props="$(mktemp)"
trap 'rm -f "$props" "$props.out" "$props.cli"' EXIT

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
  echo "db.password=$password"
  echo "db.max-pool=${DB_MAX_POOL:-60}"
  echo "db.driver.jar=${DB_DRIVER_JAR:-}"
  echo "demo.service.password=$service_password"
  echo "demo.acquirer.url=http://127.0.0.1:${HTTP_PORT:-8080}/demo/api"
} > "$props"

# The CLI prints its errors on stdout: keep them, drop the rest. Every script below runs in one embedded server
# (each embed-server start costs 5-10 s), resolving ${db.url} and the like from $props.
body() { grep -v -e '^embed-server' -e '^stop-embedded-server' "$here/$1"; }
{
  echo "embed-server --std-out=discard --server-config=standalone-full.xml"
  body "datasource-$db.cli"
  if [ -n "$password" ]; then
    # Not in the datasource scripts: MariaDB's root has none here, and the CLI refuses an empty value.
    kind=data-source; [ "$db" = postgresql ] && kind=xa-data-source
    echo "/subsystem=datasources/$kind=PaymentsDS:write-attribute(name=password, value=\${db.password})"
  fi
  body idempotency.cli
  body messaging.cli
  body observability.cli
  if [ "$demo" = "--demo" ]; then body demo.cli; fi
  echo "stop-embedded-server"
} > "$props.cli"
"$cli" --resolve-parameter-values --properties="$props" --file="$props.cli" > "$props.out" 2>&1 || { cat "$props.out" >&2; exit 1; }
# The library's secrets never stand in the configuration in clear: each is an encrypted expression
# (${ENC::idempotency:...}) of the Elytron resolver that idempotency.cli adds, which the server decrypts at boot
# with the key of its credential store (standalone/configuration/idempotency-credentials.cs, readable by the
# server's user only). The other settings are plain system properties, added or (demo.faults) overwritten.
declare -A secrets=([idempotency.secret]="$secret")
plain=()
for kv in ${EXTRA_SYSTEM_PROPERTIES:-}; do
  case "${kv%%=*}" in
    idempotency.secret|idempotency.previous-secrets|idempotency.encryption.keys) secrets[${kv%%=*}]="${kv#*=}" ;;
    *) plain+=("$kv") ;;
  esac
done
names=("${!secrets[@]}")
{
  echo "embed-server --std-out=discard --server-config=standalone-full.xml"
  for name in "${names[@]}"; do
    echo "/subsystem=elytron/expression=encryption:create-expression(resolver=idempotency, clear-text=\"${secrets[$name]}\")"
  done
  echo "stop-embedded-server"
} > "$props.cli"
"$cli" --file="$props.cli" > "$props.out" 2>&1 || { cat "$props.out" >&2; exit 1; }
mapfile -t expressions < <(sed -n 's/.*"expression" => "\(\${ENC::[^"]*}\)".*/\1/p' "$props.out")
[ "${#expressions[@]}" -eq "${#names[@]}" ] || { echo "configure.sh: the secrets were not encrypted" >&2; cat "$props.out" >&2; exit 1; }
# Not resolved by the CLI: the values stand in the configuration as given (the server resolves expressions).
set_property() {
  printf 'if (outcome == success) of /system-property=%s:read-resource\n  /system-property=%s:write-attribute(name=value, value="%s")\nelse\n  /system-property=%s:add(value="%s")\nend-if\n' \
    "$1" "$1" "$2" "$1" "$2"
}
{
  echo "embed-server --std-out=discard --server-config=standalone-full.xml"
  for i in "${!names[@]}"; do set_property "${names[$i]}" "${expressions[$i]}"; done
  for kv in ${plain[@]+"${plain[@]}"}; do set_property "${kv%%=*}" "${kv#*=}"; done
  echo "stop-embedded-server"
} > "$props.cli"
"$cli" --file="$props.cli" > "$props.out" 2>&1 || { cat "$props.out" >&2; exit 1; }
if [ "$demo" = "--demo" ]; then
  conf="$home/standalone/configuration"
  hash() { printf '%s' "$1:ApplicationRealm:$2" | md5sum | cut -d' ' -f1; }
  # eve is known to the realm but belongs to no tenant (the demo answers her 403 no-tenant).
  for u in alice bob carol mallory eve; do
    echo "$u=$(hash "$u" "$u")" >> "$conf/application-users.properties"
    echo "$u=user" >> "$conf/application-roles.properties"
  done
  # operator looks after the records through the admin resource (role idempotency-admin, idempotency.admin.role).
  echo "operator=$(hash operator operator)" >> "$conf/application-users.properties"
  echo "operator=user,idempotency-admin" >> "$conf/application-roles.properties"
  echo "payments-service=$(hash payments-service "$service_password")" >> "$conf/application-users.properties"
  echo "payments-service=user" >> "$conf/application-roles.properties"
fi
