#!/usr/bin/env bash
# The benchmark of issue 10, in one command (see bench/README.md):
#   bench/run.sh [--commit]
#   BASELINE=<git revision> bench/run.sh    # also the library of that revision, row by row beside today's
# Builds the library and bench/app, creates its own PostgreSQL cluster (port 5435) and a fresh WildFly
# (8080), measures every row (bench/harness.py), writes target/performance.md, and removes the cluster and
# stops the server whatever happens. --commit also copies the report to docs/performance.md.
# Sizes and switches come from the environment: DURATION, WARMUP, REPS, CONNECTIONS, ... (README).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bench="$root/bench"
commit=false
for arg in "$@"; do
  case "$arg" in
    --commit) commit=true ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "bench/run.sh: unknown option '$arg' (--commit, --help)" >&2; exit 2 ;;
  esac
done

export OUT="${OUT:-$root/target/performance.md}"
export BENCH_STARTED="$(date +%s)"
pg_version="${PG_VERSION:-15}"
wildfly_version="${WILDFLY_VERSION:-39.0.1.Final}"
driver="org.postgresql:postgresql:42.7.14"
cluster=idembench
pg_port=5435
# The Redis of the Redis rows, of the benchmark's own: a row stops it to measure the fall-back.
export REDIS_PORT=6391
redis_port=$REDIS_PORT
work="$bench/target/run"
home="$work/wildfly-$wildfly_version"
log() { echo "[bench $(date +%H:%M:%S)] $*" >&2; }
# Maven's output only when it fails (its -q still prints colour codes here).
mvn_q() { mvn -q -B "$@" > "$bench/target/mvn.out" 2>&1 || { cat "$bench/target/mvn.out" >&2; return 1; }; }
listening() { ss -ltnH "( sport = :$1 )" | grep -q .; }

mkdir -p "$bench/target"

# --- tools -------------------------------------------------------------------------------------------
if ! command -v wrk >/dev/null; then
  log "installing wrk from Debian's packages"
  apt-get update -qq && apt-get install -y -qq wrk >/dev/null
fi
for tool in java mvn psql pg_createcluster python3 ss redis-server redis-cli; do
  command -v "$tool" >/dev/null || { echo "bench/run.sh: $tool is missing" >&2; exit 1; }
done
for port in 8080 9990; do
  if listening "$port"; then
    echo "bench/run.sh: something already listens on port $port; the benchmark needs it for its WildFly" >&2
    exit 1
  fi
done

# --- build -------------------------------------------------------------------------------------------
library_built=false
if [ "${BENCH_SKIP_LIBRARY_BUILD:-false}" != true ]; then
  log "building the library (mvn install -DskipTests)"
  (cd "$root" && mvn_q install -DskipTests)
  library_built=true
fi
log "building bench/app"
mvn_q -f "$bench/app/pom.xml" package
# BASELINE=<git revision>: the library as it was there, built from that revision's sources (never installed in
# ~/.m2), in a second copy of the WAR deployed beside the first at /bench-baseline: the harness measures each
# library row against its twin in the same run, one right after the other (see README, "Against a baseline").
baseline_war=""
if [ -n "${BASELINE:-}" ]; then
  baseline_rev="$(git -C "$root" rev-parse --short "$BASELINE^{commit}")"
  baseline_src="$bench/target/baseline-src"
  log "building the library at $baseline_rev (BASELINE=$BASELINE) in $baseline_src"
  baseline_jar="$("$root/scripts/library-at.sh" "$baseline_rev" "$baseline_src")"
  baseline_war="$bench/target/bench-baseline.war"
  python3 - "$bench/app/target/bench.war" "$baseline_jar" "$baseline_war" <<'PY'
import re, sys, zipfile
war, jar, out = sys.argv[1:]
with zipfile.ZipFile(war) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
    replaced = False
    for item in src.infolist():
        if re.fullmatch(r"WEB-INF/lib/idempotency-cdi-[^/]*\.jar", item.filename):
            dst.write(jar, item.filename)
            replaced = True
        elif item.filename == "WEB-INF/jboss-web.xml":
            text = src.read(item).decode()
            dst.writestr(item, text.replace("<context-root>/bench</context-root>",
                                            "<context-root>/bench-baseline</context-root>"))
        else:
            dst.writestr(item, src.read(item))
    if not replaced:
        sys.exit("bench.war holds no WEB-INF/lib/idempotency-cdi-*.jar")
PY
  export BENCH_BASELINE="$baseline_rev"
fi
# The core's microbenchmarks first, while nothing else of the benchmark runs.
rm -f "$root/target/jmh.json"
if [ "${JMH:-true}" = true ]; then
  log "JMH: bench/jmh.sh (target/jmh.txt)"
  BENCH_SKIP_LIBRARY_BUILD=true "$bench/jmh.sh" > "$bench/target/jmh.out" 2>&1 || { tail -40 "$bench/target/jmh.out" >&2; exit 1; }
  export BENCH_JMH_JSON="$root/target/jmh.json"
fi

# --- cleanup, whatever happens from here on ------------------------------------------------------------
server_started=false
cleanup() {
  local rc=$?
  set +e
  if [ "$server_started" = true ]; then
    log "stopping WildFly"
    "$home/bin/jboss-cli.sh" -c --controller=127.0.0.1:9990 --command=:shutdown >/dev/null 2>&1
    if [ -f "$work/wildfly.pid" ]; then
      pid="$(cat "$work/wildfly.pid")"
      for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
      kill "$pid" 2>/dev/null
    fi
  fi
  mkdir -p "$work/logs"
  [ -f "$home/standalone/log/server.log" ] && cp "$home/standalone/log/server.log" "$work/logs/"
  [ -n "${pg_log:-}" ] && [ -f "$pg_log" ] && cp "$pg_log" "$work/logs/postgresql.log"
  redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1
  log "dropping the PostgreSQL cluster $pg_version/$cluster (logs kept in $work/logs)"
  pg_dropcluster "$pg_version" "$cluster" --stop >/dev/null 2>&1
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- Redis: a server of our own (no persistence), for the endpoint bench.cached ----------------------------
if listening "$redis_port"; then
  echo "bench/run.sh: port $redis_port is taken; the benchmark starts its own Redis there" >&2
  exit 1
fi
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
  --logfile "$bench/target/redis.log"

# --- PostgreSQL: a cluster of our own ------------------------------------------------------------------
log "creating PostgreSQL $pg_version cluster $cluster on port $pg_port"
pg_dropcluster "$pg_version" "$cluster" --stop >/dev/null 2>&1 || true
if listening "$pg_port"; then
  echo "bench/run.sh: port $pg_port is taken by something else than an old $cluster cluster" >&2
  exit 1
fi
# Trust on localhost, like the machine's shared cluster (and the fault suite's DedicatedPostgres).
pg_createcluster "$pg_version" "$cluster" --port "$pg_port" -o shared_preload_libraries=pg_stat_statements \
  -- --auth-local=trust --auth-host=trust >/dev/null
pg_ctlcluster --skip-systemctl-redirect "$pg_version" "$cluster" start
read -r pg_data pg_log < <(pg_lsclusters -h "$pg_version" "$cluster" | awk '{print $6, $7}')
pg() { psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pg_port" "$@"; }
pg -U postgres -d postgres -c "CREATE ROLE bench LOGIN" -c "CREATE DATABASE bench OWNER bench" \
  -c "CREATE EXTENSION pg_stat_statements"
pg -U bench -d bench -f "$bench/schema.sql"

# --- WildFly: unpacked from Maven Central, configured offline ------------------------------------------
log "provisioning WildFly $wildfly_version into $work"
rm -rf "$work" && mkdir -p "$work/drivers"
# The distribution zip without its transitive dependencies (FACTS: a channel manifest they name is not served).
mvn_q -f "$bench/app/pom.xml" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:unpack \
  -Dartifact="org.wildfly:wildfly-dist:$wildfly_version:zip" -DoutputDirectory="$work" -Dmdep.overWriteReleases=true
mvn_q -f "$bench/app/pom.xml" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
  -Dartifact="$driver" -DoutputDirectory="$work/drivers"
props="$work/cli.properties"
{
  echo "db.url=jdbc:postgresql://127.0.0.1:$pg_port/bench"
  echo "db.user=bench"
  echo "db.max-pool=20"
  echo "db.driver.jar=$(ls "$work"/drivers/*.jar)"
  echo "idempotency.secret=$(head -c 48 /dev/urandom | od -An -tx1 | tr -d ' \n')"
} > "$props"
cli() {
  "$home/bin/jboss-cli.sh" --resolve-parameter-values --properties="$props" --file="$1" > "$work/cli.out" 2>&1 \
    || { cat "$work/cli.out" >&2; exit 1; }
}
# The project's own XA DataSource definition, then the benchmark's settings.
cli "$root/server-config/wildfly/datasource-postgresql.cli"
cli "$bench/wildfly.cli"
cp "$bench/app/target/bench.war" "$home/standalone/deployments/"
# A management user, so that the harness can flush the pool between rows over HTTP (harness.py: flush_pool).
export BENCH_MGMT_USER=bench-admin BENCH_MGMT_PASSWORD="Bench-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')-1"
"$home/bin/add-user.sh" -s -u "$BENCH_MGMT_USER" -p "$BENCH_MGMT_PASSWORD" > "$work/add-user.out" 2>&1 \
  || { cat "$work/add-user.out" >&2; exit 1; }

log "starting WildFly"
server_started=true
# BENCH_JFR=<file>: the server records a JFR profile of the whole run there (written when it stops), with stacks
# 256 frames deep: at JFR's default of 64 a request's library frames are cut off below JDBC and Narayana.
jfr_options=""
[ -n "${BENCH_JFR:-}" ] && jfr_options="-XX:FlightRecorderOptions=stackdepth=256 -XX:StartFlightRecording=settings=profile,filename=$BENCH_JFR,dumponexit=true"
JDK_JAVA_OPTIONS="$jfr_options" LAUNCH_JBOSS_IN_BACKGROUND=1 JBOSS_PIDFILE="$work/wildfly.pid" \
  "$home/bin/standalone.sh" -c standalone-full.xml -b 127.0.0.1 -bmanagement 127.0.0.1 > "$work/wildfly.out" 2>&1 &
for _ in $(seq 1 180); do
  [ -f "$home/standalone/deployments/bench.war.deployed" ] && break
  if [ -f "$home/standalone/deployments/bench.war.failed" ]; then
    cat "$home/standalone/deployments/bench.war.failed" >&2
    exit 1
  fi
  sleep 1
done
[ -f "$home/standalone/deployments/bench.war.deployed" ] || { echo "bench/run.sh: bench.war not deployed after 180 s" >&2; exit 1; }
if [ -n "$baseline_war" ]; then
  # Only once bench.war is up: two deployments creating the library's tables at the same moment collide in
  # PostgreSQL's catalog (CREATE TABLE IF NOT EXISTS is not safe against a concurrent one).
  cp "$baseline_war" "$home/standalone/deployments/"
  for _ in $(seq 1 120); do
    [ -f "$home/standalone/deployments/bench-baseline.war.deployed" ] && break
    [ -f "$home/standalone/deployments/bench-baseline.war.failed" ] && { cat "$home/standalone/deployments/bench-baseline.war.failed" >&2; exit 1; }
    sleep 1
  done
  [ -f "$home/standalone/deployments/bench-baseline.war.deployed" ] || { echo "bench/run.sh: bench-baseline.war not deployed" >&2; exit 1; }
fi
for _ in $(seq 1 30); do [ -f "$work/wildfly.pid" ] && break; sleep 1; done

# --- measure -------------------------------------------------------------------------------------------
export BENCH_LIBRARY_BUILT="$library_built" BENCH_PG_PORT="$pg_port" BENCH_PG_DATA="$pg_data" BENCH_PG_LOG="$pg_log" \
  BENCH_SERVER_PIDFILE="$work/wildfly.pid" BENCH_SERVER_LOG="$home/standalone/log/server.log" BENCH_SERVER_HOME="$home"
if [ "${BENCH_HOLD:-false}" = true ]; then
  log "holding: http://127.0.0.1:8080/bench/api, psql -h 127.0.0.1 -p $pg_port -U postgres -d bench; Ctrl-C cleans up"
  while true; do sleep 3600 & wait $!; done
fi
python3 "$bench/harness.py" > "$work/report.out"
if [ "$commit" = true ]; then
  cp "$OUT" "$root/docs/performance.md"
  log "copied to docs/performance.md"
fi
log "done: $OUT"
