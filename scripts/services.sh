#!/usr/bin/env bash
# Makes sure the services the tests talk to are up: PostgreSQL on 127.0.0.1:5432 (trust auth, database
# test), MariaDB on 127.0.0.1:3306 (root, empty password, database test) and Redis on 127.0.0.1:6379.
# Starts a stopped one with the machine's own command; installs a missing one from Debian's packages, and
# Galera (galera-4, rsync) for the tests' own clusters.
set -euo pipefail

need_install=()
command -v pg_ctlcluster >/dev/null || need_install+=(postgresql)
command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || need_install+=(mariadb-server)
command -v redis-server >/dev/null || need_install+=(redis-server)
# The Galera tests start clusters of their own from these (the shared MariaDB stays as it is).
[ -e /usr/lib/galera/libgalera_smm.so ] || need_install+=(galera-4)
command -v rsync >/dev/null || need_install+=(rsync)
if [ ${#need_install[@]} -gt 0 ]; then
  echo "services: installing ${need_install[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_install[@]}"
fi

wait_for() { # name, check command...
  local name=$1; shift
  for _ in $(seq 1 60); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  echo "services: $name did not come up" >&2
  return 1
}

if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  echo "services: starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start
  wait_for PostgreSQL pg_isready -q -h 127.0.0.1 -p 5432
fi
if ! psql -h 127.0.0.1 -U postgres -tAc "select 1 from pg_database where datname='test'" | grep -q 1; then
  psql -h 127.0.0.1 -U postgres -c "create database test" >/dev/null
fi

if ! mariadb-admin -uroot -h127.0.0.1 ping >/dev/null 2>&1; then
  echo "services: starting MariaDB"
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
  wait_for MariaDB mariadb-admin -uroot -h127.0.0.1 ping
fi
mariadb -uroot -h127.0.0.1 -e "create database if not exists test"

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "services: starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis \
    --logfile /var/log/redis/ci.log
  wait_for Redis redis-cli -h 127.0.0.1 -p 6379 ping
fi
echo "services: PostgreSQL, MariaDB and Redis are up"
