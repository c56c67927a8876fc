#!/usr/bin/env bash
# hook-http-vs-ahp.sh: one ahp-opa serve --http, the built-in library,
# driven with the same tool call two ways: as an AHP hooks/intercept request
# on POST /ahp and as a Claude Code PreToolUse payload on POST
# /hooks/claude-code. Every request is a new event (new id, new
# tool_use_id), so no answer comes from the retry cache. Prints requests/s,
# p50/p99 and server CPU per request side by side, and hook/ahp-opa
# throughput.
#
#   bench/hook-http-vs-ahp.sh [ahp-loadgen flags]   e.g. -duration 10s -rounds 5
#
# Environment: AHP_PORT (18183).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
port=${AHP_PORT:-18183}
for v in $(compgen -e | grep '^AHP_OPA_' || true); do unset "$v"; done

work=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$root" && go build -o "$work/ahp-opa" ./cmd/ahp-opa && go build -o "$work/ahp-loadgen" ./cmd/ahp-loadgen)
"$work/ahp-opa" serve --http "127.0.0.1:$port" --log-level warn \
	--eval-timeout 30s --http-queue-wait 30s 2>"$work/ahp-opa.log" &
pid=$!
for _ in $(seq 200); do
	curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" && break
	sleep 0.1
done
curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" || { cat "$work/ahp-opa.log" >&2; exit 1; }

"$work/ahp-loadgen" -ahp "http://127.0.0.1:$port/ahp" -hook "http://127.0.0.1:$port/hooks/claude-code" \
	-ahp-pid "$pid" "$@"
