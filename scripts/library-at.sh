#!/bin/sh
# scripts/library-at.sh <git revision> <directory>: builds the library as it was at that revision, from its sources
# (git archive into <directory>, mvn package without tests; never installed in ~/.m2, where today's library is), and
# prints the path of its jar. Used by the benchmark's BASELINE and by the upgrade test's node of the previous release.
set -eu
rev="$(git -C "$(dirname "$0")/.." rev-parse --short "$1^{commit}")"
dir="$2"
rm -rf "$dir" && mkdir -p "$dir"
git -C "$(dirname "$0")/.." archive "$rev" | tar -x -C "$dir"
(cd "$dir" && mvn -B -q package -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true >&2)
ls "$dir"/target/idempotency-cdi-*.jar | grep -v -e '-sources' -e '-javadoc' -e '/original-' | head -n1
