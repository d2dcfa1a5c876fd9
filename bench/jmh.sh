#!/usr/bin/env bash
# JMH for the library's core (bench/jmh): the fingerprint of a 1 KB and a 64 KB JSON body, with the
# allocation per fingerprint (-prof gc: gc.alloc.rate.norm, bytes per operation).
#   bench/jmh.sh [more JMH options]
# Builds the library (mvn install -DskipTests; BENCH_SKIP_LIBRARY_BUILD=true uses the installed jar) and
# bench/jmh. Sizes: JMH_FORKS (2), JMH_WARMUP (10 iterations), JMH_ITERATIONS (5), of JMH_SECONDS (1 s)
# each: about 70 s (on 2 cores the JIT takes most of the 10 s of warm-up). Writes target/jmh.txt and
# target/jmh.json (bench/run.sh puts them in its report).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$root/target" "$root/bench/target"
mvn_q() { mvn -q -B "$@" > "$root/bench/target/mvn-jmh.out" 2>&1 || { cat "$root/bench/target/mvn-jmh.out" >&2; return 1; }; }
if [ "${BENCH_SKIP_LIBRARY_BUILD:-false}" != true ]; then
  (cd "$root" && mvn_q install -DskipTests)
fi
mvn_q -f "$root/bench/jmh/pom.xml" package
s="${JMH_SECONDS:-1}"
java -jar "$root/bench/jmh/target/benchmarks.jar" FingerprintBenchmark -prof gc \
  -f "${JMH_FORKS:-2}" -wi "${JMH_WARMUP:-10}" -i "${JMH_ITERATIONS:-5}" -w "${s}s" -r "${s}s" \
  -rf json -rff "$root/target/jmh.json" "$@" | tee "$root/target/jmh.txt"
