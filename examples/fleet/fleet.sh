#!/usr/bin/env bash
# Starts a local fleet: redis-server, three ahp-opa replicas sharing session
# state through it, and haproxy in front on 127.0.0.1:8700. `fleet.sh stop`
# tears it down; pids and logs are in ./run.
#
# Needs redis-server and haproxy (Debian: apt-get install redis-server
# haproxy) and ahp-opa on PATH (or AHP_OPA=/path/to/ahp-opa).
set -euo pipefail
cd "$(dirname "$0")"
run=run
ahp_opa=${AHP_OPA:-ahp-opa}

stop() {
  for f in "$run"/*.pid; do
    [ -e "$f" ] || continue
    pid=$(cat "$f")
    # Each pid is one this script started; SIGTERM lets a replica drain.
    kill "$pid" 2>/dev/null && echo "stopped $(basename "$f" .pid) ($pid)"
    rm -f "$f"
  done
}

start() {
  mkdir -p "$run"
  redis-server --port 8710 --bind 127.0.0.1 --save '' --appendonly no --dir "$run" \
    --logfile redis.log --daemonize no &
  echo $! > "$run/redis.pid"
  for k in 1 2 3; do
    "$ahp_opa" serve --config "replica$k.yaml" 2> "$run/replica$k.log" &
    echo $! > "$run/replica$k.pid"
  done
  for k in 1 2 3; do
    for _ in $(seq 100); do
      curl -fsS "http://127.0.0.1:870$k/readyz" >/dev/null 2>&1 && break
      sleep 0.1
    done
  done
  haproxy -db -f haproxy.cfg > "$run/haproxy.log" 2>&1 &
  echo $! > "$run/haproxy.pid"
  echo "fleet up: POST AHP messages to http://127.0.0.1:8700/ahp; '$0 stop' tears it down"
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 [start|stop]" >&2; exit 2 ;;
esac
