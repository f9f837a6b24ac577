#!/bin/bash
# Generates base/ours/theirs history streams: one item, then N updates on each of two branches.
# usage: merge-history-inputs.sh <pm binary> <out dir> <N>
set -e
PM=$1; OUT=$2; N=${3:-1000}
rm -rf "$OUT"; mkdir -p "$OUT"
W=$(mktemp -d)
cd "$W"
export PM_SEED=perf PM_AUTHOR=perf PM_CLOCK_TICK_MS=0 HOME=$W
t() { printf '2026-09-%02dT%02d:%02d:%02d.000Z' $((1 + $1 / 86400)) $(($1 / 3600 % 24)) $(($1 / 60 % 60)) $(($1 % 60)); }
PM_CLOCK=$(t 0) $PM init --defaults >/dev/null 2>&1
PM_CLOCK=$(t 1) $PM create --type Task --title "Perf item" --id pm-p1 >/dev/null 2>&1
H=.agents/pm/history/pm-p1.jsonl
cp $H "$OUT/base.jsonl"
cp -a .agents .agents.base
for side in ours theirs; do
  rm -rf .agents; cp -a .agents.base .agents
  off=$([ $side = ours ] && echo 10 || echo 11)
  for i in $(seq 1 $N); do
    if [ $side = ours ]; then
      PM_CLOCK=$(t $((off + 2 * i))) $PM update pm-p1 --priority $((i % 5)) >/dev/null 2>&1
    else
      PM_CLOCK=$(t $((off + 2 * i))) $PM update pm-p1 --title "Title $i" >/dev/null 2>&1
    fi
  done
  cp $H "$OUT/$side.jsonl"
done
wc -l "$OUT"/*.jsonl
