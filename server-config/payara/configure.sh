#!/usr/bin/env bash
# Writes what Payara needs from server-config/payara into <dir>, placeholders filled in:
#   configure.sh <dir> <h2|postgresql> [--demo] [--server]
# Produces <dir>/post-boot.asadmin (asadmin commands: datasource, and with --demo the users' realm),
# <dir>/system.properties (the library's settings, and the demo's) and with --demo <dir>/keyfile; with --server
# the secrets (idempotency.secret, previous-secrets, encryption.keys) go to <dir>/aliases instead, one password
# file per password alias to create.
# Payara Micro: --postbootcommandfile <dir>/post-boot.asadmin --systemproperties <dir>/system.properties.
# Payara Server (--server): asadmin multimode --file <dir>/post-boot.asadmin against the running domain; the
# file then also sets every line of system.properties (create-system-properties), in the quoting asadmin's
# own command line needs (':' and '=' in a value escaped), the JDBC driver goes first (add-library), and the
# HTTP threads (server.asadmin) and the broker's handling of rolled-back messages (messaging.asadmin) are added.
# Environment: DB_URL, DB_USER, DB_PASSWORD, DB_MAX_POOL, IDEMPOTENCY_SECRET, HTTP_PORT,
# EXTRA_SYSTEM_PROPERTIES="k=v k=v".
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="$1"; db="$2"; shift 2
demo=""; server=""
for option in "$@"; do
  case "$option" in
    --demo) demo="--demo" ;;
    --server) server="--server" ;;
    *) echo "configure.sh: unknown option '$option' (--demo, --server)" >&2; exit 2 ;;
  esac
done
mkdir -p "$dir"
case "$db" in
  h2)         url="${DB_URL:-jdbc:h2:mem:payments;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000}"; user="${DB_USER:-sa}"; password="${DB_PASSWORD:-sa}" ;;
  postgresql) url="${DB_URL:-jdbc:postgresql://127.0.0.1:5432/test}"; user="${DB_USER:-postgres}"; password="${DB_PASSWORD:-postgres}" ;;
  *) echo "configure.sh: unknown database '$db' (h2, postgresql)" >&2; exit 2 ;;
esac
secret="${IDEMPOTENCY_SECRET:-$(head -c 48 /dev/urandom | base64 -w0)}"
# asadmin's value escapes: a backslash before ':' and '=' (Payara Server's command line drops the quotes that
# Payara Micro's post-boot file keeps around a value).
escape() { printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/:/\\:/g' -e 's/=/\\=/g'; }
fill() {
  if [ -n "$server" ]; then
    sed -e 's|--property \([^ ]*\)url="@DB_URL@"|--property "\1url=@DB_URL_ESCAPED@"|' "$1"
  else
    cat "$1"
  fi | sed -e "s|@DB_URL_ESCAPED@|$(escape "$url" | sed 's/[\\&|]/\\&/g')|g" -e "s|@DB_URL@|$url|g" -e "s|@DB_USER@|$user|g" -e "s|@DB_PASSWORD@|$password|g" \
      -e "s|@DB_MAX_POOL@|${DB_MAX_POOL:-60}|g" -e "s|@IDEMPOTENCY_SECRET@|$secret|g" -e "s|@KEYFILE@|$dir/keyfile|g"
}
fill "$here/datasource-$db.asadmin" | grep -v '^#' > "$dir/post-boot.asadmin"
fill "$here/idempotency.properties" | grep -v '^#' > "$dir/system.properties"
for kv in ${EXTRA_SYSTEM_PROPERTIES:-}; do echo "$kv" >> "$dir/system.properties"; done

# A file realm entry: {SSHA256} = SHA-256 over password + 8-byte salt, hashed 100 times, then salt appended.
ssha256() {
  local salt digest
  salt="$(head -c 8 /dev/urandom | xxd -p)"
  digest="$( (printf '%s' "$1"; printf '%s' "$salt" | xxd -r -p) | openssl dgst -sha256 -binary | xxd -p -c 256)"
  for _ in $(seq 2 100); do digest="$(printf '%s' "$digest" | xxd -r -p | openssl dgst -sha256 -binary | xxd -p -c 256)"; done
  printf '{SSHA256}%s' "$(printf '%s%s' "$digest" "$salt" | xxd -r -p | base64 -w0)"
}
if [ "$demo" = "--demo" ]; then
  fill "$here/demo-users.asadmin" | grep -v '^#' >> "$dir/post-boot.asadmin"
  service_password="$(head -c 24 /dev/urandom | base64 -w0 | tr -d '/+=')"
  : > "$dir/keyfile"
  # eve is known to the realm but belongs to no tenant (the demo answers her 403 no-tenant).
  for u in alice bob carol mallory eve; do echo "$u;$(ssha256 "$u");user" >> "$dir/keyfile"; done
  # operator looks after the records through the admin resource (group idempotency-admin, mapped to the role).
  echo "operator;$(ssha256 operator);user,idempotency-admin" >> "$dir/keyfile"
  echo "payments-service;$(ssha256 "$service_password");user" >> "$dir/keyfile"
  echo "demo.service.password=$service_password" >> "$dir/system.properties"
  echo "demo.acquirer.url=http://127.0.0.1:${HTTP_PORT:-8080}/demo/api" >> "$dir/system.properties"
  # The demo's fault headers (X-Demo-*) act on this server: for trying the library out and for the tests.
  echo "demo.faults=true" >> "$dir/system.properties"
  # POST /payments/async answers 202 with the Location of its own status resource (PaymentTaskOperations).
  echo "idempotency.endpoints.payments.async.status-path=payments/operations" >> "$dir/system.properties"
  # Users may have 5 operations in flight; the payments service calls the acquirer for all of them.
  echo "idempotency.endpoints.acquirer.charges.max-in-flight-per-principal=0" >> "$dir/system.properties"
fi
if [ -n "$server" ]; then
  # Payara Server keeps the library's secrets in its password alias store, which its MicroProfile Config reads as
  # a config source (alias name = setting name, ordinal 105): one file per secret in <dir>/aliases, for
  # "asadmin --passwordfile <file> create-password-alias <name>" (then delete the file); never in domain.xml.
  rm -rf "$dir/aliases"
  mkdir -m 700 "$dir/aliases"
  grep -E '^idempotency\.(secret|previous-secrets|encryption\.keys)=' "$dir/system.properties" | while IFS= read -r line; do
    (umask 077; printf 'AS_ADMIN_ALIASPASSWORD=%s\n' "${line#*=}" > "$dir/aliases/${line%%=*}")
  done
  grep -v -E '^idempotency\.(secret|previous-secrets|encryption\.keys)=' "$dir/system.properties" > "$dir/system.properties.plain" || true
  mv "$dir/system.properties.plain" "$dir/system.properties"
  # One file for asadmin multimode: the driver, the resources, then every setting as a system property.
  {
    for jar in "$dir"/lib/*.jar; do if [ -e "$jar" ]; then echo "add-library $jar"; fi; done
    cat "$dir/post-boot.asadmin"
    grep -h -v '^#' "$here/server.asadmin" "$here/messaging.asadmin"
    while IFS= read -r line; do
      if [ -n "$line" ]; then echo "create-system-properties \"${line%%=*}=$(escape "${line#*=}")\""; fi
    done < "$dir/system.properties"
  } > "$dir/post-boot.asadmin.server"
  mv "$dir/post-boot.asadmin.server" "$dir/post-boot.asadmin"
fi
