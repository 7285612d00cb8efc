#!/usr/bin/env bash
# Client CPU time per completed request, closed loop on the identity model of
# `tritontop sim`: tritontop's driver against a bare grpc-go loop (the floor)
# and against ghz. Server and client are pinned to different cores, each
# client is timed by /usr/bin/time (user + system CPU of the whole process).
#
#   bench/clientcost/run.sh            # defaults: CONC=8 DUR=10s
#   CONC=16 DUR=20s SERVER_CPU=0 CLIENT_CPU=1 bench/clientcost/run.sh
#   REPS=3 DUR=5s bench/clientcost/run.sh  # 3 interleaved rounds, medians
#   BASELINE=/tmp/old CLIENTS="tritontop-stream" REPS=5 bench/clientcost/run.sh
#
# BASELINE names a source tree of another version (e.g. `git archive REV |
# tar -x -C /tmp/old`): its driver is measured as tritontop-stream-base (and
# tritontop-base) right after this tree's in every round, and the ratios are
# printed per round. CLIENTS picks the clients (default: all of them).
#
# ghz: go install github.com/bojand/ghz/cmd/ghz@v0.93.0 (or GHZ=/path/to/ghz;
# skipped when absent).
set -euo pipefail
cd "$(dirname "$0")/../.."

CONC=${CONC:-8}
DUR=${DUR:-10s}
REPS=${REPS:-1}
PORT=${PORT:-18001}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
GHZ=${GHZ:-$(command -v ghz || echo "$(go env GOPATH)/bin/ghz")}
BASELINE=${BASELINE:-}
CLIENTS=${CLIENTS:-tritontop tritontop-nostats tritontop-stream floor ghz}

tmp=$(mktemp -d)
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/tritontop" ./cmd/tritontop
go build -o "$tmp/floor" ./bench/clientcost/floor
go build -o "$tmp/tritontop-load" ./bench/clientcost/tritontop-load
if [ -n "$BASELINE" ]; then
	(cd "$BASELINE" && go build -o "$tmp/tritontop-load-base" ./bench/clientcost/tritontop-load)
fi

taskset -c "$SERVER_CPU" "$tmp/tritontop" sim --grpc-port "$PORT" --http-port 0 --metrics-port 0 >"$tmp/sim.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
	sleep 0.1
done

# tritontop-load feeds every result to a stats.Collector (histograms, tick,
# window and run summaries, server statistics once per tick), as tritontop
# does; tritontop-nostats runs the same driver and only counts the results,
# which separates the driver's cost from the statistics'.
#
# measure NAME COMMAND...: runs COMMAND on the client core; the command's
# stdout must contain "completed N" (or be ghz's JSON report).
measure() {
	local name=$1
	shift
	/usr/bin/time -f '%U %S' -o "$tmp/time" taskset -c "$CLIENT_CPU" "$@" >"$tmp/out" 2>"$tmp/err" || {
		echo "$name failed:" >&2
		cat "$tmp/err" >&2
		return 1
	}
	python3 - "$name" "$tmp/out" "$tmp/time" "$DUR" <<'PY'
import json, re, sys
name, out, timef, dur = sys.argv[1:]
secs = float(dur.rstrip("s"))
text = open(out).read()
m = re.search(r"completed (\d+)", text)
if m:
    n = int(m.group(1))
else:
    n = json.loads(text)["statusCodeDistribution"].get("OK", 0)
user, sys_ = map(float, open(timef).read().split()[-2:])
cpu = user + sys_
print(f"{name:16s} completed {n:8d}  cpu {cpu:6.2f}s  {1e6 * cpu / max(n, 1):7.2f} µs/request  {n / secs:9.0f} req/s")
with open(out + ".result", "a") as f:
    f.write(f"{name} {1e6 * cpu / max(n, 1)}\n")
PY
	cat "$tmp/out.result" >>"$tmp/results"
	rm -f "$tmp/out.result"
}

echo "closed loop, concurrency $CONC, $DUR each, $REPS round(s); server on CPU $SERVER_CPU, client on CPU $CLIENT_CPU"
# A short warm-up so that the first measurement does not pay for the
# server's start.
taskset -c "$CLIENT_CPU" "$tmp/floor" -u "127.0.0.1:$PORT" -concurrency "$CONC" -d 1s >/dev/null
data=$(python3 -c 'import base64,json; print(json.dumps({"model_name":"identity","inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,16]}],"raw_input_contents":[base64.b64encode(bytes(64)).decode()]}))')
# Rounds interleave the clients so that a burst of load from other processes
# on a shared machine hits all of them alike; ratios are taken per round.
wants() { [[ " $CLIENTS " == *" $1 "* ]]; }
# withBase NAME ARGS...: measures this tree's driver as NAME and, with a
# BASELINE, the baseline's as NAME-base, in turn first on alternate rounds.
withBase() {
	local name=$1
	shift
	if [ -n "$BASELINE" ] && [ $((round % 2)) = 0 ]; then
		measure "$name-base" "$tmp/tritontop-load-base" "$@"
	fi
	measure "$name" "$tmp/tritontop-load" "$@"
	if [ -n "$BASELINE" ] && [ $((round % 2)) = 1 ]; then
		measure "$name-base" "$tmp/tritontop-load-base" "$@"
	fi
}
for round in $(seq "$REPS"); do
	[ "$REPS" -gt 1 ] && echo "round $round"
	if wants tritontop; then
		withBase tritontop -u "127.0.0.1:$PORT" -concurrency "$CONC" -d "$DUR"
	fi
	if wants tritontop-nostats; then
		measure tritontop-nostats "$tmp/tritontop-load" -stats=false -u "127.0.0.1:$PORT" -concurrency "$CONC" -d "$DUR"
	fi
	if wants tritontop-stream; then
		withBase tritontop-stream -streaming -u "127.0.0.1:$PORT" -concurrency "$CONC" -d "$DUR"
	fi
	if wants floor; then
		measure floor "$tmp/floor" -u "127.0.0.1:$PORT" -concurrency "$CONC" -d "$DUR"
	fi
	if wants ghz && [ -x "$GHZ" ]; then
		measure ghz "$GHZ" --insecure --proto triton/proto/grpc_service.proto --import-paths triton/proto \
			--call inference.GRPCInferenceService/ModelInfer -c "$CONC" --connections 1 -z "$DUR" \
			-d "$data" --format json "127.0.0.1:$PORT"
	elif wants ghz && [ "$round" = 1 ]; then
		echo "ghz not found at $GHZ: skipped"
	fi
	echo "end-of-round" >>"$tmp/results"
done
python3 - "$tmp/results" <<'PY'
import statistics, sys
rounds, cur = [], {}
for line in open(sys.argv[1]):
    if line.strip() == "end-of-round":
        rounds.append(cur)
        cur = {}
        continue
    k, v = line.split()
    cur[k] = float(v)

def ratio(a, b):
    vals = [r[a] / r[b] for r in rounds if a in r and b in r]
    return statistics.median(vals) if vals else None

def has(r, *keys):
    return all(k in r for k in keys)

for r in rounds:
    parts = []
    if has(r, "tritontop", "floor"):
        parts.append(f"tritontop/floor {r['tritontop'] / r['floor']:.2f}x")
    if has(r, "tritontop", "ghz"):
        parts.append(f"tritontop/ghz {r['tritontop'] / r['ghz']:.2f}x")
    if has(r, "tritontop-nostats", "floor"):
        parts.append(f"nostats/floor {r['tritontop-nostats'] / r['floor']:.2f}x")
    if has(r, "tritontop", "tritontop-nostats"):
        parts.append(f"statistics add {r['tritontop'] - r['tritontop-nostats']:.2f} µs/request")
    if has(r, "tritontop", "tritontop-base"):
        parts.append(f"tritontop/base {r['tritontop'] / r['tritontop-base']:.3f}x")
    if has(r, "tritontop-stream", "tritontop-stream-base"):
        parts.append(f"stream/stream-base {r['tritontop-stream'] / r['tritontop-stream-base']:.3f}x")
    print("   ".join(parts))
if len(rounds) > 1:
    print("median over rounds: " + "  ".join(
        f"{k} {statistics.median(r[k] for r in rounds):.2f} µs" for k in rounds[0]))
    pairs = [("tritontop/floor", "tritontop", "floor"), ("tritontop/ghz", "tritontop", "ghz"),
             ("tritontop/base", "tritontop", "tritontop-base"),
             ("stream/stream-base", "tritontop-stream", "tritontop-stream-base")]
    meds = [f"{name} {ratio(a, b):.3f}x" for name, a, b in pairs if ratio(a, b) is not None]
    print("median ratios: " + "   ".join(meds))
PY
