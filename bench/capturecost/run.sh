#!/usr/bin/env bash
# Measures what tritontop capture adds to each request, against the
# simulator's simple model (tritontop sim in its own process): at each rate
# given (default 1000 and 5000 requests/s), for DURATION each (default 10s),
# ROUNDS times (default 2), a run straight to the simulator and a run through
# a fresh `tritontop capture` process, one after the other. It prints a
# Markdown table: per run the requests sent, the rate achieved, the client's
# p50 and p99 latency from the send and the p99 from the schedule (open loop:
# a late send counts), and for the proxied run the p99 added (via minus the
# direct run just before), the proxy's CPU per request (user + system from
# /proc, the proxy process alone) and the requests its capture holds (which
# must equal those sent: it never drops a call).
#
# Usage: bench/capturecost/run.sh [BINARY] [RATE...]
set -euo pipefail
bin=${1:-/tmp/tritontop}; shift || true
rates=${*:-1000 5000}
duration=${DURATION:-10s}
rounds=${ROUNDS:-2}
dir=$(mktemp -d)
hz=$(getconf CLK_TCK)
"$bin" sim --grpc-port 0 --http-port 0 --metrics-port 0 >"$dir/sim.log" 2>&1 &
sim=$!
cap=
trap 'kill $sim ${cap:-} 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 100); do grep -q ready "$dir/sim.log" && break; sleep 0.1; done
up=$(awk '/^gRPC/ {print $2}' "$dir/sim.log")
[ -n "$up" ] || { echo "capturecost: the simulator did not start: $(cat "$dir/sim.log")" >&2; exit 1; }
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
# summary FILE: requests, achieved req/s, p50 and p99 from the send, p99
# from the schedule (µs).
summary() {
  python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["client"]
lat, sch = c["latency"], c.get("scheduled_latency") or c["latency"]
print(c["requests"], "%.0f" % c["requests_per_s"], "%.0f" % (lat["p50_ns"] / 1e3), "%.0f" % (lat["p99_ns"] / 1e3), "%.0f" % (sch["p99_ns"] / 1e3))
' "$1"
}
load() { "$bin" -m simple -u "$1" --request-rate "$2" --duration "$duration" --headless --json >"$3" 2>"$3.err"; }

echo "host: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at $(date -u +%H:%M:%S) UTC; $duration a run"
echo
echo "| target req/s | round | path | sent | achieved req/s | p50 µs | p99 µs | p99 from schedule µs | added p99 µs | proxy CPU µs/req | captured |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for rate in $rates; do
  for round in $(seq "$rounds"); do
    load "$up" "$rate" "$dir/direct.json"
    read -r n0 a0 p50d p99d s99d < <(summary "$dir/direct.json")
    echo "| $rate | $round | direct | $n0 | $a0 | $p50d | $p99d | $s99d | | | |"
    rm -f "$dir/cap.jsonl"
    "$bin" capture --listen 127.0.0.1:0 --upstream "$up" -o "$dir/cap.jsonl" >"$dir/cap.log" 2>&1 &
    cap=$!
    for _ in $(seq 100); do grep -q capturing "$dir/cap.log" && break; sleep 0.1; done
    via=$(sed -n 's/^capturing grpc traffic: \([^ ]*\) .*/\1/p' "$dir/cap.log")
    [ -n "$via" ] || { echo "capturecost: the proxy did not start: $(cat "$dir/cap.log")" >&2; exit 1; }
    c0=$(cpu $cap)
    load "$via" "$rate" "$dir/via.json"
    c1=$(cpu $cap)
    kill -INT $cap; wait $cap || true; cap=
    read -r n1 a1 p50v p99v s99v < <(summary "$dir/via.json")
    captured=$(python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    if line.strip():
        n += "model" in json.loads(line)
print(n)
' "$dir/cap.jsonl")
    cpu_us=$(python3 -c 'import sys; c, hz, n = map(float, sys.argv[1:]); print("%.1f" % (c / hz * 1e6 / max(n, 1)))' "$((c1 - c0))" "$hz" "$n1")
    echo "| $rate | $round | via proxy | $n1 | $a1 | $p50v | $p99v | $s99v | $((p99v - p99d)) | $cpu_us | $captured |"
  done
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg) at $(date -u +%H:%M:%S) UTC"
