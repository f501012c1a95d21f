#!/usr/bin/env bash
# Session 28's A/B calls: `ab_rows.sh LIST ROUNDS [SANITIZE_LIST]` runs scripts/ab.sh run-bin LIST
# ROUNDS with the packed binaries (.ab/bin), puts every round's rows into one file ($OUT/rows.csv:
# binary_round,<kbench CSV row>; $OUT/header.csv), since only a few files come back, and then, given
# SANITIZE_LIST, runs memcheck and racecheck on it with the first binary.
source "$(dirname "$0")/../session25/common.sh"
list=$1 rounds=$2 sanitize=${3:-}
scripts/ab.sh run-bin "$list" "$rounds" >/dev/null
for f in "$OUT"/ab/ab_*.csv; do b=$(basename "$f" .csv); tail -n +2 "$f" | sed "s/^/${b#ab_},/"; done >"$OUT/rows.csv"
head -1 "$(ls "$OUT"/ab/ab_*_1.csv | head -1)" >"$OUT/header.csv"
grep -h "Backends" "$OUT"/ab/*.log | sort | uniq -c
rm -rf "$OUT/ab"
if [ -n "$sanitize" ]; then
  first=$(ls /tmp/kbench-ab-bin/* | head -1)
  for tool in memcheck racecheck; do
    timeout 200 compute-sanitizer --tool $tool --print-limit 10 "$first" --testlist "$sanitize" >"$OUT/$tool.log" 2>&1
    echo "$tool exit $?: $(grep -E 'SUMMARY|Backends' "$OUT/$tool.log" | tr '\n' ' ')"
  done
fi
echo "end: $(smi)"
