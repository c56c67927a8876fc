#!/usr/bin/env bash
# Per tool call cost of a native hook, side by side in one run, on distinct
# events (the command differs on every call):
#   warm    ahp-opa-hook claude-code, answered by an already running daemon
#   nodaemon ahp-opa hook claude-code --no-daemon (loads and compiles per call)
#   opa     stock `opa eval` per event on the same policy
# Usage: bench/hook-vs-opa.sh [CALLS_PER_ROUND] [ROUNDS]
# Needs stock opa on PATH or in $OPA (build it from the module proxy at the
# go.mod version: GOBIN=/tmp/bin go install github.com/open-policy-agent/opa@VERSION).
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-20}; rounds=${2:-3}
opa=${OPA:-$(command -v opa)}
policy=${POLICY:-bench/reference}
query=${QUERY:-data.ahp.tool.before.reference.deny}

work=$(mktemp -d); trap 'pkill -f "$work/bin/ahp-opa daemon" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/run"; chmod 700 "$work/run"
go build -o "$work/bin/ahp-opa" ./cmd/ahp-opa
go build -o "$work/bin/ahp-opa-hook" ./cmd/ahp-opa-hook
export XDG_RUNTIME_DIR="$work/run"

payload() { # a Claude Code PreToolUse payload whose command differs per call
  printf '{"session_id":"s1","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git log -n %d --oneline src/f%d.go"},"tool_use_id":"t%d"}' "$1" "$1" "$1"
}
event() { # the AHP event the adapter maps that payload to, for opa eval
  printf '{"id":"e%d","type":"tool.before","source":"urn:ahp-opa:agent:claude-code","session":{"id":"s1","cwd":"/repo","workspaceRoots":["/repo"]},"tool":{"name":"Bash","kind":"shell","input":{"command":"git log -n %d --oneline src/f%d.go"}}}' "$1" "$1" "$1"
}
ms() { echo $(( ($(date +%s%N) - $1) / 1000 )); }   # elapsed µs since $1 ns

payload 0 | "$work/bin/ahp-opa-hook" claude-code --policy "$policy" >/dev/null   # start the daemon
n=0
for r in $(seq "$rounds"); do
  : >"$work/warm.$r"; : >"$work/nodaemon.$r"; : >"$work/opa.$r"
  for i in $(seq "$calls"); do
    n=$((n+1))
    payload $n >"$work/p.json"; event $n >"$work/e.json"
    t=$(date +%s%N); "$work/bin/ahp-opa-hook" claude-code --policy "$policy" <"$work/p.json" >/dev/null; ms $t >>"$work/warm.$r"
    t=$(date +%s%N); "$work/bin/ahp-opa" hook claude-code --no-daemon --policy "$policy" <"$work/p.json" >/dev/null; ms $t >>"$work/nodaemon.$r"
    t=$(date +%s%N); "$opa" eval -d "$policy" -i "$work/e.json" "$query" >/dev/null; ms $t >>"$work/opa.$r"
  done
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf 'round  warm-hook-p50  no-daemon-p50  opa-eval-p50  warm/opa\n'
for r in $(seq "$rounds"); do
  w=$(median "$work/warm.$r"); d=$(median "$work/nodaemon.$r"); o=$(median "$work/opa.$r")
  printf '%5d  %10d µs  %10d µs  %9d µs  %.3f×\n' "$r" "$w" "$d" "$o" "$(echo "$w / $o" | bc -l)"
done
