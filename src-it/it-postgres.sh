#!/usr/bin/env bash
# The real-server tests' PostgreSQL: a cluster of their own on port 5433 (the machine's shared one on 5432 stays as
# it is), with two-phase commit, which a message listener's XA transaction needs (the broker's branch and the
# datasource's; the shared cluster has max_prepared_transactions = 0 and refuses PREPARE TRANSACTION), and room for
# two WildFly nodes' pools. Created once, started if stopped; prints nothing but errors.
set -euo pipefail
name=idemit
port=5433
version="$(ls /usr/lib/postgresql | grep -E '^[0-9]+$' | sort -n | tail -1)"
if ! pg_lsclusters -h | awk -v n="$name" '$2 == n { found = 1 } END { exit !found }'; then
  pg_createcluster "$version" "$name" --port "$port" -- --auth-local=trust --auth-host=trust > /dev/null
  pg_conftool "$version" "$name" set max_prepared_transactions 64
  pg_conftool "$version" "$name" set max_connections 300
fi
if ! pg_isready -q -h 127.0.0.1 -p "$port"; then
  pg_ctlcluster "$version" "$name" start
fi
for _ in $(seq 1 30); do
  pg_isready -q -h 127.0.0.1 -p "$port" && exit 0
  sleep 1
done
echo "it-postgres: the cluster on port $port did not start" >&2
exit 1
