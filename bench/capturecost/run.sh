#!/usr/bin/env bash
# Measures what tritontop capture adds to each request: the client's p99
# latency (from the schedule) direct and through the proxy, and the proxy
# process's CPU per request, at each rate given (default 1000 and 5000
# requests/s) for DURATION (default 10s), against the simulator's simple
# model. Usage: bench/capturecost/run.sh [BINARY] [RATE...]
set -euo pipefail
bin=${1:-/tmp/tritontop}; shift || true
rates=${*:-1000 5000}
duration=${DURATION:-10s}
dir=$(mktemp -d)
hz=$(getconf CLK_TCK)
"$bin" sim --grpc-port 0 --http-port 0 --metrics-port 0 >"$dir/sim.log" 2>&1 &
sim=$!
trap 'kill $sim ${cap:-} 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 50); do grep -q ready "$dir/sim.log" && break; sleep 0.1; done
up=$(awk '/^gRPC/ {print $2}' "$dir/sim.log")
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
p99() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); r=s["client"]; print(r["requests"], r.get("scheduled", r["latency"])["p99_ns"]/1e3, r["latency"]["p99_ns"]/1e3)' "$1"; }
for rate in $rates; do
  "$bin" -m simple -u "$up" --request-rate "$rate" --duration "$duration" --headless --json >"$dir/direct.json" 2>/dev/null
  read -r n0 sched0 send0 < <(p99 "$dir/direct.json")
  rm -f "$dir/cap.jsonl"
  "$bin" capture --listen 127.0.0.1:0 --upstream "$up" -o "$dir/cap.jsonl" >"$dir/cap.log" 2>&1 &
  cap=$!
  for _ in $(seq 50); do grep -q capturing "$dir/cap.log" && break; sleep 0.1; done
  via=$(sed -n 's/^capturing grpc traffic: \([^ ]*\) .*/\1/p' "$dir/cap.log")
  c0=$(cpu $cap)
  "$bin" -m simple -u "$via" --request-rate "$rate" --duration "$duration" --headless --json >"$dir/via.json" 2>/dev/null
  c1=$(cpu $cap)
  kill -INT $cap; wait $cap || true; cap=
  read -r n1 sched1 send1 < <(p99 "$dir/via.json")
  python3 -c "
import sys
rate,n0,s0,d0,n1,s1,d1,c,hz=sys.argv[1:]
n1=int(n1); cpu_us=float(c)/float(hz)*1e6
print(f'rate {rate}/s: direct {n0} requests p99 {float(d0):.0f} µs from send ({float(s0):.0f} from schedule); '
      f'via proxy {n1} requests p99 {float(d1):.0f} µs ({float(s1):.0f}); added p99 {float(d1)-float(d0):.0f} µs; '
      f'proxy CPU {cpu_us/max(n1,1):.1f} µs per request')
" "$rate" "$n0" "$sched0" "$send0" "$n1" "$sched1" "$send1" "$((c1-c0))" "$hz"
done
