# Shared set-up of the bench scripts that run ahp-opa and OPA servers side
# by side; sourced, not run. Needs $root, $ahp_port and $opa_port.

# ahp-opa reads every AHP_OPA_* variable as configuration (a token, a
# policy): start it from a clean slate.
for v in $(compgen -e | grep '^AHP_OPA_' || true); do unset "$v"; done

# work holds the binaries and logs; pids are the servers to stop on exit.
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	stop_daemons
	wait 2>/dev/null || true
	rm -rf "$work"
}
# stop_daemons ends the decision daemons ahp-opa-hook started for this run:
# the processes holding a file of $work/run open (their life lock).
stop_daemons() {
	local fd pid
	for fd in /proc/[0-9]*/fd/*; do
		case $(readlink "$fd" 2>/dev/null) in
		"$work"/run/*)
			pid=${fd#/proc/}
			kill "${pid%%/*}" 2>/dev/null || true
			;;
		esac
	done
}
trap cleanup EXIT

for port in "$ahp_port" "$opa_port"; do
	if curl -s -o /dev/null "http://127.0.0.1:$port/"; then
		echo "port $port is taken; set AHP_PORT/OPA_PORT" >&2
		exit 1
	fi
done

# ready waits at most 20 s for url to answer 200, and shows the servers'
# logs when it does not.
ready() { # url
	for _ in $(seq 200); do
		curl -sf -o /dev/null "$1" && return 0
		sleep 0.1
	done
	echo "not ready: $1" >&2
	cat "$work"/*.log >&2
	return 1
}

opa_version=$(cd "$root" && go list -m -f '{{.Version}}' github.com/open-policy-agent/opa)
