#!/usr/bin/env bash
# The dashboard's CPU cost: the same fixed, modest load against `tritontop
# sim` (a separate process), run once headless and once with the dashboard
# drawn in a 120x40 tmux pane. Each client is timed by /usr/bin/time (user +
# system CPU of the whole process); the difference divided by the run's
# length is what the dashboard costs at its frame rate. Rounds interleave
# the two so that load from other processes hits both alike. Completed
# requests are read from the simulator's metrics around each run, to check
# that both runs did the same work.
#
#   bench/tuicost/run.sh                        # simple model, 200 req/s, 20 s, 2 rounds
#   LOAD='-m resnet50 --concurrency 4' DUR=20s ROUNDS=3 FPS=30 bench/tuicost/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

LOAD=${LOAD:--m simple --request-rate 200}
DUR=${DUR:-20s}
ROUNDS=${ROUNDS:-2}
FPS=${FPS:-10}
GRPC_PORT=${GRPC_PORT:-18101}
HTTP_PORT=${HTTP_PORT:-18100}
METRICS_PORT=${METRICS_PORT:-18102}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}

tmp=$(mktemp -d)
sock="tuicost-$$"
server_pid=
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || true
	if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/tritontop" ./cmd/tritontop

taskset -c "$SERVER_CPU" "$tmp/tritontop" sim --grpc-port "$GRPC_PORT" --http-port "$HTTP_PORT" \
	--metrics-port "$METRICS_PORT" >"$tmp/sim.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$GRPC_PORT") 2>/dev/null; then break; fi
	sleep 0.1
done

metrics_url="http://127.0.0.1:$METRICS_PORT/metrics"
# client runs the load client with the given extra flags; $LOAD is split on
# purpose.
# shellcheck disable=SC2086
client_cmd="taskset -c $CLIENT_CPU $tmp/tritontop -u 127.0.0.1:$GRPC_PORT --metrics-url $metrics_url $LOAD --fps $FPS --duration $DUR"

# successes prints the simulator's count of successful requests, all models.
successes() {
	python3 - "$metrics_url" <<'PY'
import sys, urllib.request
total = 0.0
for line in urllib.request.urlopen(sys.argv[1], timeout=5).read().decode().splitlines():
    if line.startswith("nv_inference_request_success{"):
        total += float(line.rsplit(" ", 1)[1])
print(int(total))
PY
}

# record NAME TIMEFILE BEFORE AFTER appends one result line.
record() {
	read -r user sys_ <"$2"
	echo "$1 $user $sys_ $(($4 - $3))" >>"$tmp/results"
}

echo "load: $LOAD, $DUR each, dashboard at $FPS fps in 120x40 tmux; server on CPU $SERVER_CPU, client on CPU $CLIENT_CPU"
for round in $(seq "$ROUNDS"); do
	before=$(successes)
	/usr/bin/time -f '%U %S' -o "$tmp/headless.time" $client_cmd --headless >"$tmp/headless.out" 2>&1 || {
		echo "headless run failed:" >&2
		cat "$tmp/headless.out" >&2
		exit 1
	}
	record headless "$tmp/headless.time" "$before" "$(successes)"

	before=$(successes)
	rm -f "$tmp/tui.time"
	tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 \
		"/usr/bin/time -f '%U %S' -o $tmp/tui.time $client_cmd 2>$tmp/tui.err; tmux -L $sock wait-for -S done-$round"
	# A look at the pane halfway through shows that the dashboard is drawn.
	sleep "$(python3 -c "print(float('${DUR%s}') / 2)")"
	tmux -L "$sock" capture-pane -p >"$tmp/pane.txt" 2>/dev/null || true
	timeout 120 tmux -L "$sock" wait-for "done-$round"
	if [ ! -s "$tmp/tui.time" ] || [ "$(grep -c . "$tmp/pane.txt")" -lt 10 ]; then
		echo "dashboard run failed:" >&2
		cat "$tmp/tui.err" "$tmp/pane.txt" >&2
		exit 1
	fi
	tail -1 "$tmp/tui.time" >"$tmp/tui.time1"
	record tui "$tmp/tui.time1" "$before" "$(successes)"
	if [ "$round" = 1 ]; then
		echo "--- dashboard halfway through round 1 (first 6 lines) ---"
		head -6 "$tmp/pane.txt"
		echo "---"
	fi
done

python3 - "$tmp/results" "$DUR" "$FPS" <<'PY'
import sys
path, dur, fps = sys.argv[1], float(sys.argv[2].rstrip("s")), int(sys.argv[3])
rows = [l.split() for l in open(path)]
head = [r for r in rows if r[0] == "headless"]
tui = [r for r in rows if r[0] == "tui"]
for i, (h, t) in enumerate(zip(head, tui), 1):
    hc, tc = float(h[1]) + float(h[2]), float(t[1]) + float(t[2])
    print(f"round {i}: headless cpu {hc:5.2f}s ({h[3]} requests)   dashboard cpu {tc:5.2f}s ({t[3]} requests)"
          f"   difference {tc - hc:5.2f}s = {100 * (tc - hc) / dur:4.1f}% of one core"
          f" = {1e3 * (tc - hc) / (dur * fps):.2f} ms per frame")
PY
