#!/usr/bin/env bash
# Times the README's test command as a new user meets it, three times:
# each a fresh clone of this repository beside it (so that ../shared is
# where the interop tests look), an empty Go build cache, the README's first
# command (headless for 3 s, to build what it builds), then `go test ./...`.
#   bash bench/suite-time.sh LABEL [HOGS]
# HOGS CPU hogs (sh -c 'while :; do :; done') run beside all three, killed
# by their process ids when the script ends. Prints a line per run; the
# runs' output is left in /tmp/suite-time-LABEL.
set -u
label=$1; hogs=${2:-0}
src=$(cd "$(dirname "$0")/.." && pwd)
d=/tmp/suite-time-$label; c=$(dirname "$src")/suite-time-clone-$label
rm -rf "$d"; mkdir -p "$d"
pids=()
for _ in $(seq "$hogs"); do sh -c 'while :; do :; done' & pids+=($!); done
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$c"' EXIT
for i in 1 2 3; do
  cd "$src" && rm -rf "$c" "$d/cache" && git clone -q "$src" "$c" && cd "$c" || exit 1
  export GOCACHE=$d/cache
  timeout 300 go run ./cmd/tritontop demo --headless --duration 3s >"$d/demo$i.out" 2>&1
  s=$(date +%s.%N)
  go test ./... >"$d/test$i.out" 2>&1; rc=$?
  e=$(date +%s.%N)
  slowest=$(awk '$1=="ok"{print $3, $2}' "$d/test$i.out" | sort -rn | head -1)
  echo "run $i: rc=$rc, $(echo "$e - $s" | bc) s; slowest package: $slowest; load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$d/times"
done
