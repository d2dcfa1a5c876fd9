#!/usr/bin/env bash
# Flakiness, measured (issue 31): the fast tests N times in a row, each run with a seed of its own for the
# property checks (Samples: -Didempotency.test.seed), then the fault suite's CI-size scenarios M times on WildFly +
# PostgreSQL; prints, per test, how many runs it failed in, and the seeds. Exit 1 when any test failed.
#   scripts/flakiness.sh [N (5)] [M (2)]      M=0 runs the fast tests only.
# Each run's reports are kept under target/flakiness/<kind>-<i>/. Needs what scripts/test.sh needs (run it once).
set -euo pipefail
cd "$(dirname "$0")/.."
fast_runs="${1:-5}"
scenario_runs="${2:-2}"
out=target/flakiness
rm -rf "$out"; mkdir -p "$out"
export CI="${CI:-true}"
scripts/services.sh
log() { echo "[flakiness $(date +%H:%M:%S)] $*" >&2; }

for i in $(seq 1 "$fast_runs"); do
  seed=$(od -An -N8 -td8 /dev/urandom | tr -d ' ')
  log "fast tests, run $i of $fast_runs, seed $seed"
  echo "fast-$i seed $seed" >> "$out/seeds.txt"
  mvn -B -o test -Didempotency.test.seed="$seed" -Dsurefire.failIfNoSpecifiedTests=false \
    -Dmaven.test.failure.ignore=true > "$out/fast-$i.log" 2>&1 || true
  cp -r target/surefire-reports "$out/fast-$i"
done
if [ "$scenario_runs" -gt 0 ]; then
  # The real-server tests need the demo WAR and the library it was built with.
  mvn -B -q -o install -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true
  mvn -B -q -o -f examples/payments/pom.xml package
fi
for i in $(seq 1 "$scenario_runs"); do
  log "fault scenarios (CI size), run $i of $scenario_runs"
  # Only this run's reports: failsafe keeps those of earlier runs of other classes in the same directory.
  rm -rf target/failsafe-reports/wildfly-postgresql
  mvn -B -o verify -Pit-wildfly -Dit.db=postgresql -Dmaven.javadoc.skip=true -Dmaven.source.skip=true \
    -Dit.includes='%regex[.*(FaultScenariosIT|DatabaseFaultsIT).*]' -Dmaven.test.failure.ignore=true \
    > "$out/scenarios-$i.log" 2>&1 || true
  cp -r target/failsafe-reports/wildfly-postgresql "$out/scenarios-$i"
done

python3 - "$out" <<'PY'
import glob, os, sys, xml.etree.ElementTree as ET
from collections import defaultdict
out = sys.argv[1]
runs = sorted(d for d in glob.glob(os.path.join(out, "*-*")) if os.path.isdir(d))
failed, seen = defaultdict(list), defaultdict(int)
for run in runs:
    for report in glob.glob(os.path.join(run, "TEST-*.xml")):
        for case in ET.parse(report).getroot().iter("testcase"):
            name = f"{case.get('classname')}.{case.get('name')}"
            seen[name] += 1
            if case.find("failure") is not None or case.find("error") is not None:
                failed[name].append(os.path.basename(run))
print(f"\n{len(runs)} runs ({', '.join(os.path.basename(r) for r in runs)}), {len(seen)} tests, "
      f"{sum(seen.values())} executions, {sum(len(v) for v in failed.values())} failures")
for name, where in sorted(failed.items()):
    print(f"  FAILED {len(where)}x  {name}  ({', '.join(where)})")
if any(not glob.glob(os.path.join(r, "TEST-*.xml")) for r in runs):
    print("  some run left no report: see its log in " + out)
    sys.exit(1)
sys.exit(1 if failed else 0)
PY
