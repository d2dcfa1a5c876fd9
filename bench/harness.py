#!/usr/bin/env python3
"""The measuring half of bench/run.sh: runs every row against the WildFly and PostgreSQL cluster that
run.sh started, and writes the markdown report. Standard library only (python3 is on every machine of
this kind); wrk makes the load, psql reads PostgreSQL's statistics, /proc gives CPU time.

Not meant to be called by hand: run.sh passes the server's and the cluster's coordinates in the
environment (BENCH_* variables below) together with the sizes documented in bench/README.md.
"""
import datetime
import http.client
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import time
import urllib.request
import uuid
from dataclasses import dataclass, field, replace

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
HTTP_HOST, HTTP_PORT = "127.0.0.1", 8080
API = "/bench/api"
BODY = '{"name":"bench item","amount":12.50,"currency":"EUR"}'
CLK_TCK = os.sysconf("SC_CLK_TCK")


def env_int(name, default):
    return int(os.environ.get(name, default))


def env_list(name, default):
    return [int(v) for v in os.environ.get(name, default).split()]


DURATION = env_int("DURATION", 15)          # seconds measured per row and repetition
WARMUP = env_int("WARMUP", 3)               # seconds of the same load before each measurement
WARMUP_PASS = env_int("WARMUP_PASS", 8)     # seconds of each kind of load once, before the first repetition
REPS = env_int("REPS", 3)                   # repetitions, interleaved
CONNECTIONS = env_list("CONNECTIONS", "16 64")
SINGLE_CONNECTIONS = env_int("SINGLE_CONNECTIONS", CONNECTIONS[0])  # the caller-keys and table-size rows
THREADS = env_int("THREADS", 2)             # wrk threads
USERS = env_int("USERS", 1000)              # callers new keys are spread over
REPLAY_KEYS = env_int("REPLAY_KEYS", 100)   # keys a replay row cycles through
BASE_RECORDS = env_int("BASE_RECORDS", 10_000)        # other callers' records before every write row
HEAVY_KEYS = env_list("HEAVY_KEYS", "10 100000")       # keys the single caller holds (two rows)
TABLE_RECORDS = env_list("TABLE_RECORDS", "10000 1000000")  # records in the table (two rows)
SETTLE = float(os.environ.get("SETTLE", "0.5"))  # seconds with no request answered = quiet; and for ended backends
ONLY = [r for r in os.environ.get("ROWS", "").replace(",", " ").split() if r]
OUT = os.environ.get("OUT", os.path.join(ROOT, "target", "performance.md"))

PG_PORT = os.environ.get("BENCH_PG_PORT", "5435")
PG_DB = os.environ.get("BENCH_PG_DB", "bench")
PG_ROLE = os.environ.get("BENCH_PG_ROLE", "bench")
PG_DATA = os.environ["BENCH_PG_DATA"]
PG_LOG = os.environ["BENCH_PG_LOG"]
SERVER_PIDFILE = os.environ["BENCH_SERVER_PIDFILE"]
SERVER_LOG = os.environ["BENCH_SERVER_LOG"]
SERVER_HOME = os.environ.get("BENCH_SERVER_HOME", "")
LIBRARY_BUILT = os.environ.get("BENCH_LIBRARY_BUILT", "true") == "true"
MANAGEMENT_URL = "http://127.0.0.1:9990/management"
LIBRARY_TABLE = "idempotency_record"  # as bench/prefill.sql knows it
REFERENCE_TABLE = "bench_ref_record"
HEAVY_USER = "heavy"
RUN_NONCE = uuid.uuid4().hex[:8]
# run.sh's BASELINE: the revision whose library the second WAR (/bench-baseline) carries; every library row then
# has a twin there, measured right after it (before it in every other repetition).
BASELINE = os.environ.get("BENCH_BASELINE", "")
BASELINE_API = "/bench-baseline/api"
CONTEXTS = ["/bench"] + (["/bench-baseline"] if BASELINE else [])


def log(message):
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------- rows

@dataclass
class Row:
    id: str                 # stable name, used by ROWS=... and in the raw results
    label: str              # what the report calls it
    path: str
    conns: int
    keys: str = "none"      # none | new | replay
    method: str = "POST"
    user: str = ""          # one caller for every request instead of USERS callers
    warm_user: str = ""     # the caller of the warm-up when it must not add keys to `user`
    table: str = ""         # the record table whose tuple counters the row reports
    reset: dict = None      # prefill.sql variables, or None: the row writes nothing
    redis_down: bool = False  # the benchmark's Redis is shut down for the row (the fall-back to the database)
    results: list = field(default_factory=list)


def rows():
    out = []
    reset = {"records": BASE_RECORDS, "heavy_keys": 0}
    for c in CONNECTIONS:
        out += [
            Row(f"ping-{c}", "GET ping", f"{API}/ping", c, method="GET"),
            Row(f"plain-{c}", "plain @Transactional POST", f"{API}/plain", c, reset=reset),
            Row(f"reference-first-{c}", "reference, first execution", f"{API}/reference", c, keys="new",
                table=REFERENCE_TABLE, reset=reset),
            Row(f"reference-replay-{c}", "reference, one-SELECT replay", f"{API}/reference/replay", c,
                keys="replay", table=REFERENCE_TABLE, reset=reset),
            Row(f"idempotent-first-{c}", "@Idempotent, first execution", f"{API}/idempotent", c, keys="new",
                table=LIBRARY_TABLE, reset=reset),
            Row(f"idempotent-replay-{c}", "@Idempotent, replay", f"{API}/idempotent", c, keys="replay",
                table=LIBRARY_TABLE, reset=reset),
            Row(f"in-transaction-first-{c}", "@Idempotent(claim = IN_TRANSACTION), first execution",
                f"{API}/idempotent/in-transaction", c, keys="new", table=LIBRARY_TABLE, reset=reset),
            Row(f"redis-replay-{c}", "@Idempotent, replay from Redis", f"{API}/idempotent/cached", c, keys="replay",
                table=LIBRARY_TABLE, reset=reset),
            Row(f"redis-down-replay-{c}", "@Idempotent, replay with its Redis shut down", f"{API}/idempotent/cached", c,
                keys="replay", table=LIBRARY_TABLE, reset=reset, redis_down=True),
        ]
    for n in HEAVY_KEYS:
        out.append(Row(f"caller-keys-{n}", f"@Idempotent first, one caller holding {n:,} keys", f"{API}/heavy",
                       SINGLE_CONNECTIONS, keys="new", user=HEAVY_USER, warm_user="heavy-warmup",
                       table=LIBRARY_TABLE, reset={"records": BASE_RECORDS, "heavy_keys": n}))
    for n in TABLE_RECORDS:
        out.append(Row(f"table-records-{n}", f"@Idempotent first, {n:,} records in the table", f"{API}/idempotent",
                       SINGLE_CONNECTIONS, keys="new", table=LIBRARY_TABLE, reset={"records": n, "heavy_keys": 0}))
    if ONLY:
        out = [r for r in out if any(r.id == o or r.id.startswith(o + "-") for o in ONLY)]
    if BASELINE:
        with_twins = []
        for r in out:
            with_twins.append(r)
            if is_library_row(r):
                with_twins.append(replace(r, id=f"baseline-{r.id}", label=f"{r.label} [baseline {BASELINE}]",
                                          path=BASELINE_API + r.path[len(API):], results=[]))
        out = with_twins
    return out


def is_library_row(row):
    """A row whose endpoint the library serves (the others, ping, plain and the reference, need no twin)."""
    return row.path.startswith(f"{API}/idempotent") or row.path.startswith(f"{API}/heavy")


# ------------------------------------------------------------------------------------------ database

def psql(sql, db="postgres", variables=None, file=None):
    """Rows of the last statement, each a list of strings (superuser postgres, never the application's role)."""
    cmd = ["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", PG_PORT, "-U", "postgres",
           "-d", db, "-F", "\x1f", "-R", "\x1e"]
    for k, v in (variables or {}).items():
        cmd += ["-v", f"{k}={v}"]
    cmd += ["-f", file] if file else ["-c", sql]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"psql failed: {done.stderr.strip()}")
    return [r.strip("\n").split("\x1f") for r in done.stdout.split("\x1e") if r.strip()]


def reset_tables(variables):
    """prefill.sql, then VACUUM ANALYZE and a CHECKPOINT, so every row starts from the same state."""
    started = time.time()
    for attempt in range(3):
        try:
            psql(None, db=PG_DB, variables={**variables, "heavy_user": HEAVY_USER, "ref_records": BASE_RECORDS},
                 file=os.path.join(BENCH, "prefill.sql"))
            break
        except RuntimeError as e:
            # A request still in flight may hold one table that TRUNCATE wants while wanting another.
            if "deadlock detected" not in str(e) or attempt == 2:
                raise
            quiesce()
    psql("VACUUM ANALYZE", db=PG_DB)
    psql("CHECKPOINT")
    return time.time() - started


def database_counters(reset_statements):
    """Commits, rollbacks, WAL position and the application role's statements (run from database postgres,
    so that these queries never count in the benchmark database's own counters)."""
    mine = f"s.dbid = d.datid AND s.userid = (SELECT oid FROM pg_roles WHERE rolname = '{PG_ROLE}')"
    sql = (("SELECT pg_stat_statements_reset();" if reset_statements else "")
           + f"""SELECT d.xact_commit, d.xact_rollback, pg_current_wal_lsn() - '0/0'::pg_lsn,
                 (SELECT coalesce(sum(s.calls), 0) FROM pg_stat_statements s WHERE {mine}),
                 (SELECT coalesce(sum(s.calls), 0) FROM pg_stat_statements s WHERE {mine} AND upper(s.query) = 'COMMIT'),
                 (SELECT coalesce(sum(s.calls), 0) FROM pg_stat_statements s WHERE {mine} AND upper(s.query) = 'ROLLBACK')
               FROM pg_stat_database d WHERE d.datname = '{PG_DB}'""")
    r = psql(sql)[-1]
    return {"commits": int(r[0]), "rollbacks": int(r[1]), "wal": int(float(r[2])), "statements": int(r[3]),
            "commit_statements": int(r[4]), "rollback_statements": int(r[5])}


def top_statements(limit=12):
    return [(int(c), float(t), q) for c, t, q in psql(
        f"""SELECT s.calls, s.total_exec_time, regexp_replace(s.query, '\\s+', ' ', 'g') FROM pg_stat_statements s
            WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = '{PG_DB}')
              AND s.userid = (SELECT oid FROM pg_roles WHERE rolname = '{PG_ROLE}')
            ORDER BY s.calls DESC, s.query LIMIT {limit}""")]


def table_counters():
    rows_ = psql(f"""SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del, n_dead_tup, n_live_tup
                     FROM pg_stat_user_tables""", db=PG_DB)
    return {r[0]: {"ins": int(r[1]), "upd": int(r[2]), "hot": int(r[3]), "del": int(r[4]), "dead": int(r[5]),
                   "live": int(r[6])} for r in rows_}


# -------------------------------------------------------------------------------------------- CPU

def ticks(pid, children_too=False):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is field 3 (state): utime 14, stime 15, cutime 16, cstime 17
    t = int(fields[11]) + int(fields[12])
    if children_too:
        t += int(fields[13]) + int(fields[14])
    return t


def postgres_ticks(postmaster):
    """CPU of the whole cluster: the postmaster, every live child (backends, walwriter, autovacuum...), and
    the children that ended (the postmaster's cutime/cstime once it has reaped them)."""
    total = ticks(postmaster, children_too=True)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                rest = f.read().rsplit(")", 1)[1].split()
            if int(rest[1]) == postmaster:
                total += int(rest[11]) + int(rest[12])
        except (FileNotFoundError, ProcessLookupError, IndexError):
            pass
    return total


def machine_busy_ticks():
    """All CPUs' non-idle time (/proc/stat), to tell how much of it went to processes outside the benchmark."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    # user, nice, system and steal (another guest's turn is lost time too); not irq and softirq, where the
    # kernel carries the benchmark's own loopback traffic; guest time is inside user.
    return values[0] + values[1] + values[2] + values[7]


def children_cpu_seconds():
    """CPU of this harness's ended children (wrk, while it is the only one running)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def server_pid():
    with open(SERVER_PIDFILE) as f:
        return int(f.read().strip())


def postmaster_pid():
    with open(os.path.join(PG_DATA, "postmaster.pid")) as f:
        return int(f.readline().strip())


def flush_pool():
    """Closes the DataSource's connections, so that their backends end and publish their statistics.

    A PostgreSQL backend publishes its counters (pg_stat_database, pg_stat_user_tables) at most once a
    second, and one that goes idle within that second waits up to 10 s more: read right after a load,
    the counters would miss its last second, and the next row would inherit it. A backend that ends
    publishes at once. The next row opens its connections again: a few ms and 3-4 statements each
    (`SET application_name`, `select current_schema()`...), some 0.005 statements per request in a row of
    15 s. Through the management HTTP API (run.sh adds the user), a jboss-cli start would take seconds."""
    passwords = urllib.request.HTTPPasswordMgrWithDefaultRealm()
    passwords.add_password(None, MANAGEMENT_URL, os.environ["BENCH_MGMT_USER"], os.environ["BENCH_MGMT_PASSWORD"])
    opener = urllib.request.build_opener(urllib.request.HTTPDigestAuthHandler(passwords))
    operation = {"operation": "flush-all-connection-in-pool",
                 "address": [{"subsystem": "datasources"}, {"xa-data-source": "PaymentsDS"}]}
    request = urllib.request.Request(MANAGEMENT_URL, data=json.dumps(operation).encode(),
                                     headers={"Content-Type": "application/json"})
    answer = json.loads(opener.open(request, timeout=60).read())
    if answer.get("outcome") != "success":
        raise RuntimeError(f"flushing the pool failed: {answer}")
    time.sleep(SETTLE)


def quiesce():
    """Waits until the server answers no more requests (those wrk left in flight when it stopped)."""
    last, stable_since, deadline = answered(), time.time(), time.time() + 60
    while time.time() < deadline:
        time.sleep(0.1)
        now = answered()
        if now != last:
            last, stable_since = now, time.time()
        elif time.time() - stable_since >= SETTLE:
            return
    raise RuntimeError("the server kept answering requests for 60 s after the load stopped")


def answered():
    """Requests the server has answered (bench/app's RequestCounter, of both WARs when there is a baseline)."""
    total = 0
    for context in CONTEXTS:
        conn = http.client.HTTPConnection(HTTP_HOST, HTTP_PORT, timeout=30)
        try:
            conn.request("GET", f"{context}/answered")
            response = conn.getresponse()
            total += int(response.read().decode())
        finally:
            conn.close()
    return total


# ------------------------------------------------------------------------------------------- logs

def log_size(path):
    try:
        return os.path.getsize(path)
    except FileNotFoundError:
        return 0


def log_slice(path, start):
    """The text a log gained since byte offset start (from the beginning if it was rotated meanwhile)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            if f.tell() < start:
                start = 0
            f.seek(start)
            return f.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return ""


POOL_STALL = re.compile(r"IJ000453|Unable to acquire JDBC Connection")
SERVER_LOG_AT_START = 0  # set by main()


# ------------------------------------------------------------------------------------------- HTTP

def post(conn, path, key, user):
    headers = {"Content-Type": "application/json", "X-Bench-User": user}
    if key:
        headers["Idempotency-Key"] = key
    conn.request("POST", path, body=BODY.encode(), headers=headers)
    response = conn.getresponse()
    response.read()
    return response.status, response.getheader("Idempotent-Replayed")


def prepare_replay_keys(row, nonce):
    """Creates the keys a replay row sends again, and checks that a second send is answered as a replay."""
    conn = http.client.HTTPConnection(HTTP_HOST, HTTP_PORT, timeout=30)
    try:
        for i in range(REPLAY_KEYS):
            status, _ = post(conn, row.path, f"{nonce}-{i}", f"u{i % USERS}")
            if status != 201:
                raise RuntimeError(f"{row.id}: creating replay key {i} answered {status}")
        status, replayed = post(conn, row.path, f"{nonce}-0", "u0")
        return f"{status}, Idempotent-Replayed: {replayed}"
    finally:
        conn.close()


def smoke_check():
    """One request per endpoint, so that a broken deployment fails before the long part."""
    conn = http.client.HTTPConnection(HTTP_HOST, HTTP_PORT, timeout=30)
    try:
        conn.request("GET", f"{API}/ping")
        r = conn.getresponse()
        r.read()
        answers = {"ping": r.status}
        for name, path in (("plain", "plain"), ("reference", "reference"), ("idempotent", "idempotent"),
                           ("heavy", "heavy")):
            answers[name] = post(conn, f"{API}/{path}", f"check-{RUN_NONCE}-{name}", "check")[0]
        answers["idempotent again"] = post(conn, f"{API}/idempotent", f"check-{RUN_NONCE}-idempotent", "check")
        if BASELINE:
            answers["baseline idempotent"] = post(conn, f"{BASELINE_API}/idempotent",
                                                  f"check-{RUN_NONCE}-baseline", "check")[0]
            answers["baseline idempotent again"] = post(conn, f"{BASELINE_API}/idempotent",
                                                        f"check-{RUN_NONCE}-baseline", "check")
    finally:
        conn.close()
    log(f"one request each: {answers}")
    bad = {k: v for k, v in answers.items() if (v[0] if isinstance(v, tuple) else v) not in (200, 201)}
    if bad:
        raise RuntimeError(f"endpoints answered {bad}; see {SERVER_LOG}")


# -------------------------------------------------------------------------------------------- wrk

def wrk(row, seconds, nonce, user=""):
    env = dict(os.environ, BENCH_METHOD=row.method, BENCH_PATH=row.path, BENCH_BODY=BODY if row.method == "POST" else "",
               BENCH_KEYS=row.keys, BENCH_USERS=str(USERS), BENCH_USER=user, BENCH_NONCE=nonce,
               BENCH_REPLAY_KEYS=str(REPLAY_KEYS))
    cmd = ["wrk", f"-t{min(THREADS, row.conns)}", f"-c{row.conns}", f"-d{seconds}s", "--timeout", "10s",
           "-s", os.path.join(BENCH, "wrk", "bench.lua"), f"http://{HTTP_HOST}:{HTTP_PORT}"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if os.environ.get("BENCH_STATUSES") == "1":
        # The diagnosis of bench.lua: what the non-2xx answers were (status and body), at most 20 of them.
        for line in [l for l in done.stdout.splitlines() if not l.startswith("BENCH-RESULT ")][:20]:
            log(f"{row.id}: {line}")
    for line in done.stdout.splitlines():
        if line.startswith("BENCH-RESULT "):
            return json.loads(line[len("BENCH-RESULT "):])
    raise RuntimeError(f"wrk printed no result ({done.returncode}): {done.stdout}{done.stderr}")


# -------------------------------------------------------------------------------------------- row

REDIS_PORT = os.environ.get("REDIS_PORT", "6391")


def redis(up):
    """Starts the benchmark's Redis (empty) or shuts it down, and waits until it answers or is gone."""
    if up:
        subprocess.run(["redis-server", "--port", REDIS_PORT, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                        "--daemonize", "yes"], check=True, stdout=subprocess.DEVNULL)
    else:
        subprocess.run(["redis-cli", "-p", REDIS_PORT, "shutdown", "nosave"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    for _ in range(200):
        ping = subprocess.run(["redis-cli", "-p", REDIS_PORT, "ping"], capture_output=True, text=True)
        if (ping.stdout.strip() == "PONG") == up:
            return
        time.sleep(0.05)
    raise RuntimeError(f"Redis on {REDIS_PORT} did not {'start' if up else 'stop'}")


def run_row(row, rep, measure=True, warmup=None):
    if row.redis_down:
        redis(False)
        try:
            return run_row_now(row, rep, measure, warmup)
        finally:
            redis(True)
    return run_row_now(row, rep, measure, warmup)


def run_row_now(row, rep, measure=True, warmup=None):
    nonce = f"{RUN_NONCE}-{row.id}-{rep}"
    result = {"rep": rep}
    if row.reset is not None:
        result["reset_s"] = round(reset_tables(row.reset), 1)
    if row.keys == "replay":
        result["replay_check"] = prepare_replay_keys(row, nonce)
    warmup = WARMUP if warmup is None else warmup
    if warmup > 0:
        warm_nonce = nonce if row.keys == "replay" else nonce + "-w"
        wrk(row, warmup, warm_nonce, row.warm_user or row.user)
        quiesce()
    if not measure:
        return None
    # Order matters: the bench database's own counters are read outside [db_before, db_after] (the
    # harness's queries there are transactions too); the CPU window is the load's, until the server has
    # answered the requests still in flight when wrk stopped.
    flush_pool()
    tables_before = table_counters()
    db_before = database_counters(reset_statements=True)
    server_log_at, pg_log_at = log_size(SERVER_LOG), log_size(PG_LOG)
    jvm, postmaster = server_pid(), postmaster_pid()
    answered_before = answered()
    cpu_before = (ticks(jvm), postgres_ticks(postmaster), machine_busy_ticks(), children_cpu_seconds(), time.time())
    w = wrk(row, DURATION, nonce, row.user)
    quiesce()
    cpu_after = (ticks(jvm), postgres_ticks(postmaster), machine_busy_ticks(), children_cpu_seconds(), time.time())
    answered_after = answered()
    server_log, pg_log = log_slice(SERVER_LOG, server_log_at), log_slice(PG_LOG, pg_log_at)
    flush_pool()
    db_after = database_counters(reset_statements=False)
    statements = top_statements()
    tables_after = table_counters()

    # Per request = per request the server answered in the window (wrk's count leaves out those in flight).
    n = max(answered_after - answered_before, 1)
    result.update({
        "requests": w["requests"],
        "answered": n,
        "rps": w["requests"] / (w["duration_us"] / 1e6),
        "p50_ms": w["p50_us"] / 1000, "p99_ms": w["p99_us"] / 1000,
        "non2xx": w["non2xx"], "socket_errors": w["connect"] + w["read"] + w["write"] + w["timeout"],
        "server_cpu_ms": (cpu_after[0] - cpu_before[0]) * 1000 / CLK_TCK / n,
        "db_cpu_ms": (cpu_after[1] - cpu_before[1]) * 1000 / CLK_TCK / n,
        "wrk_cpu_ms": (cpu_after[3] - cpu_before[3]) * 1000 / n,
        # The machine's CPU that went neither to WildFly, PostgreSQL nor wrk, as a share of all its CPUs
        # over the window: other work on the machine, which moves every number of the row.
        "other_cpu": max(0.0, ((cpu_after[2] - cpu_before[2]) - (cpu_after[0] - cpu_before[0])
                               - (cpu_after[1] - cpu_before[1])) / CLK_TCK - (cpu_after[3] - cpu_before[3]))
                     / ((cpu_after[4] - cpu_before[4]) * os.cpu_count()),
        "commits": (db_after["commits"] - db_before["commits"]) / n,
        "rollbacks": (db_after["rollbacks"] - db_before["rollbacks"]) / n,
        "statements": (db_after["statements"] - db_before["statements"]) / n,
        # pg_stat_statements was reset at db_before: its COMMIT and ROLLBACK counts are the row's own.
        "commit_statements": db_after["commit_statements"] / n,
        "rollback_statements": db_after["rollback_statements"] / n,
        "wal_bytes": (db_after["wal"] - db_before["wal"]) / n,
        "pg_log_errors": pg_log.count("ERROR:") / n,
        "server_log_errors": len(re.findall(r" ERROR \[", server_log)),
        "pool_stalls": len(POOL_STALL.findall(server_log)),
        "top_statements": [(round(c / n, 3), round(t * 1000 / c, 1) if c else 0.0, q) for c, t, q in statements],
    })
    result["tables"] = {}
    for name, after in sorted(tables_after.items()):
        before = tables_before.get(name, dict.fromkeys(after, 0))
        d = {k: (after[k] - before[k]) / n for k in ("ins", "upd", "hot", "del", "dead")}
        if any(d.values()):
            result["tables"][name] = d
    if row.table:
        before, after = tables_before.get(row.table), tables_after.get(row.table)
        if before and after:
            d = {k: after[k] - before[k] for k in ("ins", "upd", "hot", "del", "dead")}
            result["table"] = {"ins": d["ins"] / n, "upd": d["upd"] / n, "hot_upd": d["hot"] / n,
                               "dead": d["dead"] / n, "hot_share": d["hot"] / d["upd"] if d["upd"] else None,
                               "live_after": after["live"]}
    return result


# ----------------------------------------------------------------------------------------- report

def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, digits=2):
    if value is None:
        return "–"
    if isinstance(value, float) and digits == 0:
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}"


def machine():
    def first_line(cmd):
        try:
            p = subprocess.run(cmd, capture_output=True, text=True)
            return (p.stdout + p.stderr).strip().splitlines()[0]
        except (OSError, IndexError):
            return "?"
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    with open("/proc/meminfo") as f:
        mem_gib = int(f.readline().split()[1]) / 1024 / 1024
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.strip().splitlines()
    commit = first_line(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "src", "pom.xml"],
                           capture_output=True, text=True).stdout.strip()
    return {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "cpu": f"{os.cpu_count()} cores (nproc {first_line(['nproc'])}), {cpu}",
        "memory": f"{mem_gib:.0f} GiB",
        "kernel": f"{platform.system()} {platform.release()}",
        "java": " / ".join(java[:2]),
        "postgresql": psql("SELECT version()")[0][0],
        "wildfly": os.path.basename(SERVER_HOME.rstrip("/")) or "?",
        "wrk": first_line(["wrk", "-v"]).split(" Copyright")[0],
        "library": (f"commit {commit}{' + uncommitted changes in src/ or pom.xml' if dirty else ''}" if LIBRARY_BUILT
                    else f"the jar installed before the run (BENCH_SKIP_LIBRARY_BUILD); work tree at {commit}"),
    }


def server_settings():
    """The library's settings as bench/wildfly.cli sets them (the secret hidden)."""
    out = []
    with open(os.path.join(BENCH, "wildfly.cli")) as f:
        for line in f:
            m = re.match(r"/system-property=([^:]+):add\(value=(.*)\)\s*$", line.strip())
            if m:
                out.append(f"`{m.group(1)}={'(random, 48 bytes)' if m.group(1).endswith('secret') else m.group(2)}`")
    return out


def total_minutes():
    """Since run.sh started (builds, JMH, provisioning included)."""
    return (time.time() - float(os.environ.get("BENCH_STARTED", time.time()))) / 60


def jmh_section():
    """bench/jmh.sh's results, when run.sh ran it before the server started (JMH=true)."""
    path = os.environ.get("BENCH_JMH_JSON", "")
    if not path or not os.path.exists(path):
        return []
    with open(path) as f:
        results = json.load(f)
    lines = ["## Core (JMH)", "",
             "`bench/jmh.sh`, run before the server started: the request fingerprint (canonical JSON + "
             "HMAC-SHA-256) of a JSON body, with `-prof gc`.", "",
             "| benchmark | body | time per op | allocated per op |", "|---|---:|---:|---:|"]
    for r in results:
        name = ".".join(r["benchmark"].rsplit(".", 2)[-2:])
        size = int(r.get("params", {}).get("bodyBytes", 0))
        primary = r["primaryMetric"]
        error = primary["scoreError"] if isinstance(primary["scoreError"], (int, float)) else float("nan")
        error_text = "" if error != error else f" ± {error:,.1f}"  # NaN with a single iteration
        alloc = r.get("secondaryMetrics", {}).get("gc.alloc.rate.norm")
        alloc_text = f"{alloc['score']:,.0f} B" if alloc else "–"
        lines.append(f"| {name} | {size / 1024:.0f} KiB | {primary['score']:,.1f}{error_text} {primary['scoreUnit']} "
                     f"| {alloc_text} |")
    return lines + [""]


def report(all_rows, info, started, elapsed):
    by_id = {r.id: r for r in all_rows}

    def m(row_id, key):
        r = by_id.get(row_id)
        return med([x.get(key) for x in r.results]) if r and r.results else None

    lines = [
        "# idempotency-cdi performance",
        "",
        f"Run of `bench/run.sh` on {info['date']}: {total_minutes():.0f} min in all, of which {elapsed / 60:.1f} min "
        f"of rows (from {started}).",
        "",
        "| machine | |", "|---|---|",
        f"| CPU | {info['cpu']} |", f"| memory | {info['memory']} |", f"| kernel | {info['kernel']} |",
        f"| Java | {info['java']} |", f"| PostgreSQL | {info['postgresql']} (own cluster, port {PG_PORT}) |",
        f"| server | {info['wildfly']}, XA DataSource, max pool 20 |", f"| load | {info['wrk']}, {THREADS} threads |",
        f"| library | {info['library']} |",
        "",
        f"Sizes: DURATION={DURATION} s measured per row after WARMUP={WARMUP} s, REPS={REPS} (interleaved: every "
        f"row once, then again), CONNECTIONS={' '.join(map(str, CONNECTIONS))}, single-caller and table-size rows at "
        f"{SINGLE_CONNECTIONS}; new keys spread over USERS={USERS} callers; replays cycle through REPLAY_KEYS={REPLAY_KEYS} "
        f"keys; every write row starts from BASE_RECORDS={BASE_RECORDS:,} other callers' records (bench/prefill.sql).",
        "",
        "Library settings: shipped defaults except " + ", ".join(server_settings()) + ".",
        "",
        "## Rows",
        "",
        "Medians over the repetitions (req/s: median, min–max). CPU is the WildFly JVM's and all of the cluster's "
        "processes' user+system time per request; other CPU is the largest share of the machine's CPUs that went to "
        "none of WildFly, PostgreSQL and wrk during a repetition (other work on the machine: it moves every number); commits and rollbacks from `pg_stat_database`, statements from "
        "`pg_stat_statements` (the application's role only), WAL from `pg_current_wal_lsn()`, PG errors are "
        "`ERROR:` lines of the cluster's log; the tuple columns are the row's record table "
        f"(`{REFERENCE_TABLE}` for the reference, `{LIBRARY_TABLE}` for @Idempotent), per request.",
        "",
        "| row | conns | req/s | p50 ms | p99 ms | non-2xx | sock err | server CPU ms/req | DB CPU ms/req | other CPU "
        "| commits/req | rollbacks/req | statements/req | WAL B/req | PG errors/req | inserts/req | updates/req "
        "| HOT share | dead tuples/req |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in all_rows:
        if not r.results:
            continue
        res = r.results
        rps = [x["rps"] for x in res]
        t = [x.get("table") for x in res if x.get("table")]
        tm = (lambda k: med([x[k] for x in t])) if t else (lambda k: None)
        hot = tm("hot_share")
        lines.append(
            f"| {r.label} | {r.conns} | {fmt(med(rps), 0)} ({fmt(min(rps), 0)}–{fmt(max(rps), 0)}) "
            f"| {fmt(med([x['p50_ms'] for x in res]))} | {fmt(med([x['p99_ms'] for x in res]))} "
            f"| {sum(x['non2xx'] for x in res)} | {sum(x['socket_errors'] for x in res)} "
            f"| {fmt(med([x['server_cpu_ms'] for x in res]), 3)} | {fmt(med([x['db_cpu_ms'] for x in res]), 3)} "
            f"| {max(x.get('other_cpu', 0) for x in res):.0%} "
            f"| {fmt(med([x['commits'] for x in res]))} | {fmt(med([x['rollbacks'] for x in res]))} "
            f"| {fmt(med([x['statements'] for x in res]))} | {fmt(med([x['wal_bytes'] for x in res]), 0)} "
            f"| {fmt(med([x['pg_log_errors'] for x in res]))} | {fmt(tm('ins'))} | {fmt(tm('upd'))} "
            f"| {'–' if hot is None else f'{hot:.0%}'} | {fmt(tm('dead'))} |")

    # Ratios the issue names, from the medians of this run (and the range of the per-repetition ratios).
    def ratio(a, b, key="rps"):
        ra, rb = by_id.get(a), by_id.get(b)
        if not ra or not rb or not ra.results or not rb.results:
            return None, None, None
        per_rep = [x[key] / y[key] for x, y in zip(ra.results, rb.results) if y[key]]
        return m(a, key) / m(b, key), min(per_rep), max(per_rep)

    checks = []

    def ratio_line(name, a, b, target):
        value, low, high = ratio(a, b)
        if value is None:
            return
        if target is None:
            lines.append(f"| {name} | {value:.2f} ({low:.2f}–{high:.2f}) | – | |")
            return
        ok = value >= target
        checks.append(ok)
        lines.append(f"| {name} | {value:.2f} ({low:.2f}–{high:.2f}) | ≥ {target} | {'met' if ok else 'MISSED'} |")

    lines += ["", "## Targets (issues 10 and 14)", "",
              "Ratios of the medians; in brackets the range of the ratio within each repetition.", "",
              "| ratio | value | target | |", "|---|---:|---:|---|"]
    for c in CONNECTIONS:
        ratio_line(f"@Idempotent first / reference first, {c} connections", f"idempotent-first-{c}",
                   f"reference-first-{c}", 0.95)
    c0 = CONNECTIONS[0]
    p_idem, p_ref = m(f"idempotent-first-{c0}", "p50_ms"), m(f"reference-first-{c0}", "p50_ms")
    if p_idem is not None and p_ref is not None:
        ok = p_idem - p_ref <= 1.0
        checks.append(ok)
        lines.append(f"| p50 @Idempotent first − reference first, {c0} connections | {p_idem - p_ref:+.2f} ms "
                     f"| ≤ +1 ms | {'met' if ok else 'MISSED'} |")
    for c in CONNECTIONS:
        ratio_line(f"@Idempotent replay / reference replay, {c} connections", f"idempotent-replay-{c}",
                   f"reference-replay-{c}", 0.9)
    for c in CONNECTIONS:
        ratio_line(f"@Idempotent(claim = IN_TRANSACTION) first / plain POST, {c} connections (issue 14)",
                   f"in-transaction-first-{c}", f"plain-{c}", 0.85)
    for c in CONNECTIONS:
        ratio_line(f"@Idempotent first (two commits) / plain POST, {c} connections (for comparison)",
                   f"idempotent-first-{c}", f"plain-{c}", None)
    for c in CONNECTIONS:
        ratio_line(f"replay from Redis / @Idempotent replay (one SELECT), {c} connections (issue 14)",
                   f"redis-replay-{c}", f"idempotent-replay-{c}", 2.0)
        ratio_line(f"replay from Redis / GET ping, {c} connections (issue 14)", f"redis-replay-{c}", f"ping-{c}", 0.35)
        value, low, high = ratio(f"redis-down-replay-{c}", f"idempotent-replay-{c}")
        if value is not None:
            ok = 0.9 <= value <= 1.1
            checks.append(ok)
            lines.append(f"| replay with Redis shut down / @Idempotent replay, {c} connections (issue 14) "
                         f"| {value:.2f} ({low:.2f}–{high:.2f}) | 0.9–1.1 | {'met' if ok else 'MISSED'} |")
    if len(HEAVY_KEYS) == 2:
        ratio_line(f"caller with {HEAVY_KEYS[1]:,} keys / caller with {HEAVY_KEYS[0]:,} keys",
                   f"caller-keys-{HEAVY_KEYS[1]}", f"caller-keys-{HEAVY_KEYS[0]}", 0.9)
    if len(TABLE_RECORDS) == 2:
        ratio_line(f"{TABLE_RECORDS[1]:,} records / {TABLE_RECORDS[0]:,} records in the table",
                   f"table-records-{TABLE_RECORDS[1]}", f"table-records-{TABLE_RECORDS[0]}", 0.9)
    failures = [(r.label, r.conns, sum(x["non2xx"] + x["socket_errors"] for x in r.results))
                for r in all_rows if r.results and sum(x["non2xx"] + x["socket_errors"] for x in r.results)]
    ok = not failures
    checks.append(ok)
    lines.append(f"| non-2xx and socket errors, every row | {sum(f[2] for f in failures)} | 0 | "
                 f"{'met' if ok else 'MISSED: ' + '; '.join(f'{l} at {c}: {n}' for l, c, n in failures)} |")
    stalls = len(POOL_STALL.findall(log_slice(SERVER_LOG, SERVER_LOG_AT_START)))  # warm-ups too
    ok = stalls == 0
    checks.append(ok)
    lines.append(f"| pool stalls (IJ000453 / \"Unable to acquire JDBC Connection\" in the server log, whole run) "
                 f"| {stalls} | 0 "
                 f"| {'met' if ok else 'MISSED'} |")

    if BASELINE:
        lines += baseline_section(all_rows, by_id, m, ratio)

    # The per-request costs item 2 of the issue asks for, next to the reference's.
    lines += ["", "First execution against the reference (item 2 of the issue), medians; commits count every "
              "transaction (`pg_stat_database`), an autocommit statement's too, COMMIT statements only the explicit "
              "ones:", "",
              "| connections | commits/req (ref) | COMMIT statements/req (ref) | statements/req (ref) | WAL B/req (ref) "
              "| HOT share of updates (ref) |",
              "|---:|---|---|---|---|---|"]
    for c in CONNECTIONS:
        a, b = by_id.get(f"idempotent-first-{c}"), by_id.get(f"reference-first-{c}")
        if not a or not b or not a.results or not b.results:
            continue

        def hot(row):
            return med([x["table"]["hot_share"] for x in row.results if x.get("table")])

        ha, hb = hot(a), hot(b)
        lines.append(f"| {c} | {fmt(m(a.id, 'commits'))} ({fmt(m(b.id, 'commits'))}) "
                     f"| {fmt(m(a.id, 'commit_statements'))} ({fmt(m(b.id, 'commit_statements'))}) "
                     f"| {fmt(m(a.id, 'statements'))} ({fmt(m(b.id, 'statements'))}) "
                     f"| {fmt(m(a.id, 'wal_bytes'), 0)} ({fmt(m(b.id, 'wal_bytes'), 0)}) "
                     f"| {'–' if ha is None else f'{ha:.0%}'} ({'–' if hb is None else f'{hb:.0%}'}) |")

    checks_line = f"{sum(checks)} of {len(checks)} targets met."
    lines[lines.index("## Targets (issues 10 and 14)") + 1:lines.index("## Targets (issues 10 and 14)") + 1] = ["", checks_line]

    # What each row sent to the database, from its last repetition.
    lines += ["", "## Statements per request", "",
              "The application role's statements in the last repetition of each row (`pg_stat_statements`, "
              "calls per request, mean execution time per call inside the server, normalized text, most frequent first), and the tuple counters of every table "
              "that changed (`pg_stat_user_tables`; dead tuples can drop when autovacuum or page pruning runs).", ""]
    for r in all_rows:
        if not r.results:
            continue
        last = r.results[-1]
        lines += [f"<details><summary>{r.label}, {r.conns} connections: {last['statements']:.2f} statements/req"
                  f"</summary>", "", "| calls/req | µs/call | statement |", "|---:|---:|---|"]
        for entry in last["top_statements"]:
            calls, micros, query = entry if len(entry) == 3 else (entry[0], None, entry[1])
            q = query if len(query) <= 160 else query[:157] + "..."
            lines.append(f"| {calls:.3f} | {'–' if micros is None else f'{micros:.0f}'} | `{q.replace('|', '¦')}` |")
        if last.get("tables"):
            lines += ["", "| table | inserts/req | updates/req | HOT updates/req | deletes/req | dead tuples/req |",
                      "|---|---:|---:|---:|---:|---:|"]
            for name, d in last["tables"].items():
                lines.append(f"| {name} | {d['ins']:.3f} | {d['upd']:.3f} | {d['hot']:.3f} | {d['del']:.3f} "
                             f"| {d['dead']:.3f} |")
        lines += ["", "</details>", ""]

    lines += jmh_section()

    notes = []
    replay_checks = {f"{r.label}, {r.conns}": x.get("replay_check") for r in all_rows for x in r.results
                     if x.get("replay_check")}
    if replay_checks:
        notes.append("Replay rows: before each, the harness created its keys and sent one of them again: "
                     + "; ".join(sorted({f'{k}: {v}' for k, v in replay_checks.items()})) + ".")
    same = (f"idempotent-first-{CONNECTIONS[0]}", f"table-records-{BASE_RECORDS}")
    if SINGLE_CONNECTIONS == CONNECTIONS[0] and all(by_id.get(r) and by_id[r].results for r in same):
        value, low, high = ratio(same[1], same[0])
        notes.append(f"Noise: the rows `{same[0]}` and `{same[1]}` are the same load at different places of the "
                     f"sequence; their ratio is {value:.2f} ({low:.2f}–{high:.2f} within the repetitions). Ratios "
                     f"closer to 1 than that distance are within this run's noise.")
    disturbed = [f"{r.id} ({max(x.get('other_cpu', 0) for x in r.results):.0%})" for r in all_rows
                 if r.results and max(x.get("other_cpu", 0) for x in r.results) > 0.10]
    if disturbed:
        notes.append("Other processes used more than 10% of the machine's CPU during: " + ", ".join(disturbed)
                     + ". Run again on a quiet machine before trusting these rows.")
    resets = [x.get("reset_s") for r in all_rows for x in r.results if x.get("reset_s") is not None]
    if resets:
        notes.append(f"Table resets (prefill.sql + VACUUM ANALYZE + CHECKPOINT) took {min(resets):.1f}–{max(resets):.1f} s.")
    errors = sum(x["server_log_errors"] for r in all_rows for x in r.results)
    notes.append(f"Server log: {errors} ERROR lines during measurements; WFLYRS0018 (RESTEasy switched to Jackson) "
                 f"{'logged' if 'WFLYRS0018' in log_slice(SERVER_LOG, 0) else 'not logged'}.")
    lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    return "\n".join(lines)


def target_ratios():
    """The ratios of the targets as (name, numerator row, denominator row)."""
    out = []
    for c in CONNECTIONS:
        out += [(f"@Idempotent first / reference first, {c}", f"idempotent-first-{c}", f"reference-first-{c}"),
                (f"@Idempotent replay / reference replay, {c}", f"idempotent-replay-{c}", f"reference-replay-{c}"),
                (f"IN_TRANSACTION first / plain POST, {c}", f"in-transaction-first-{c}", f"plain-{c}"),
                (f"@Idempotent first / plain POST, {c}", f"idempotent-first-{c}", f"plain-{c}"),
                (f"Redis replay / @Idempotent replay, {c}", f"redis-replay-{c}", f"idempotent-replay-{c}"),
                (f"Redis replay / GET ping, {c}", f"redis-replay-{c}", f"ping-{c}"),
                (f"replay, Redis shut down / @Idempotent replay, {c}", f"redis-down-replay-{c}",
                 f"idempotent-replay-{c}")]
    if len(HEAVY_KEYS) == 2:
        out.append((f"caller with {HEAVY_KEYS[1]:,} keys / {HEAVY_KEYS[0]:,} keys", f"caller-keys-{HEAVY_KEYS[1]}",
                    f"caller-keys-{HEAVY_KEYS[0]}"))
    if len(TABLE_RECORDS) == 2:
        out.append((f"{TABLE_RECORDS[1]:,} records / {TABLE_RECORDS[0]:,} records", f"table-records-{TABLE_RECORDS[1]}",
                    f"table-records-{TABLE_RECORDS[0]}"))
    return out


def baseline_section(all_rows, by_id, m, ratio):
    """Today's library next to the baseline's, row by row and ratio by ratio, from this one run."""
    lines = ["", f"## Against the baseline ({BASELINE})", "",
             f"The library of revision {BASELINE} (run.sh's BASELINE), built from its sources into a second copy of "
             "the WAR (`/bench-baseline`), on the same server, database and Redis. Each of its rows ran right after "
             "today's, right before it in every other repetition. Ratios of the medians; in brackets the range of "
             "the same ratio within each repetition.", "",
             "| row | conns | req/s today | req/s baseline | today / baseline | server CPU ms/req today (baseline) "
             "| p50 ms today (baseline) | statements/req today (baseline) | commits/req today (baseline) |",
             "|---|---:|---:|---:|---|---|---|---|---|"]
    for r in all_rows:
        twin = by_id.get(f"baseline-{r.id}")
        if not twin or not r.results or not twin.results:
            continue
        value, low, high = ratio(r.id, twin.id)
        lines.append(f"| {r.label} | {r.conns} | {fmt(m(r.id, 'rps'), 0)} | {fmt(m(twin.id, 'rps'), 0)} "
                     f"| {value:.2f} ({low:.2f}–{high:.2f}) "
                     f"| {fmt(m(r.id, 'server_cpu_ms'), 3)} ({fmt(m(twin.id, 'server_cpu_ms'), 3)}) "
                     f"| {fmt(m(r.id, 'p50_ms'))} ({fmt(m(twin.id, 'p50_ms'))}) "
                     f"| {fmt(m(r.id, 'statements'))} ({fmt(m(twin.id, 'statements'))}) "
                     f"| {fmt(m(r.id, 'commits'))} ({fmt(m(twin.id, 'commits'))}) |")
    lines += ["", "The targets' ratios with today's library and with the baseline's (ping, plain and the reference are "
              "no library code: both use today's WAR's rows as denominators):", "",
              "| ratio | today | baseline | today − baseline |", "|---|---:|---:|---:|"]
    for name, a, b in target_ratios():
        twin_b = f"baseline-{b}" if by_id.get(f"baseline-{b}") else b
        today, _, _ = ratio(a, b)
        base, _, _ = ratio(f"baseline-{a}", twin_b)
        if today is None or base is None:
            continue
        lines.append(f"| {name} | {today:.2f} | {base:.2f} | {today - base:+.2f} |")
    return lines


def repetition_order(all_rows, rep):
    """Each library row with its baseline twin right after it, or right before it in even repetitions: a drift of
    the machine's speed during a pair favours neither."""
    order = list(all_rows)
    if rep % 2 == 0:
        for i in range(len(order) - 1):
            if order[i + 1].id == f"baseline-{order[i].id}":
                order[i], order[i + 1] = order[i + 1], order[i]
    return order


def main():
    all_rows = rows()
    if not all_rows:
        sys.exit(f"ROWS={os.environ.get('ROWS')} selects no row")
    # Besides the load: a table reset, replay keys, two pool flushes and the statistics, ~4 s a row; the
    # 10^6-record prefill ~50 s per repetition; the warm-up pass.
    per_row = WARMUP + DURATION + 4
    estimate = (len(all_rows) * REPS * per_row + 50 * REPS * sum(n >= 1_000_000 for n in TABLE_RECORDS)
                + 8 * (WARMUP_PASS + 3))
    log(f"{len(all_rows)} rows x {REPS} repetitions, about {estimate / 60:.0f} min; nonce {RUN_NONCE}")
    started = datetime.datetime.now().strftime("%H:%M")
    t0 = time.time()
    info = machine()
    global SERVER_LOG_AT_START
    SERVER_LOG_AT_START = log_size(SERVER_LOG)
    smoke_check()
    # One pass of each kind of load first, so that the first measured rows do not pay for the JIT (on 2
    # busy cores, C2 needs some 10 s of a load before the server's code stops getting faster).
    seen = set()
    for row in all_rows:
        kind = re.sub(r"-\d+$", "", row.id)
        if kind not in seen and (not row.reset or row.reset.get("records", 0) <= BASE_RECORDS):
            seen.add(kind)
            log(f"warm-up {row.id}")
            run_row(row, 0, measure=False, warmup=WARMUP_PASS)
    for rep in range(1, REPS + 1):
        for row in repetition_order(all_rows, rep):
            result = run_row(row, rep)
            row.results.append(result)
            log(f"rep {rep} {row.id}: {result['rps']:,.0f} req/s, p50 {result['p50_ms']:.2f} ms, "
                f"p99 {result['p99_ms']:.2f} ms, non-2xx {result['non2xx']}, sock err {result['socket_errors']}, "
                f"{result['statements']:.1f} stmt/req, {result['commits']:.2f} commits/req")
    elapsed = time.time() - t0
    text = report(all_rows, info, started, elapsed)
    os.makedirs(os.path.dirname(os.path.abspath(OUT)), exist_ok=True)
    with open(OUT, "w") as f:
        f.write(text)
    raw = os.path.splitext(OUT)[0] + ".json"
    with open(raw, "w") as f:
        json.dump({"machine": info, "rows": [{"id": r.id, "label": r.label, "conns": r.conns, "results": r.results}
                                             for r in all_rows]}, f, indent=1)
    log(f"report: {OUT} (raw numbers: {raw})")
    print(text)


if __name__ == "__main__":
    main()
