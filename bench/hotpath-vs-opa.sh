#!/usr/bin/env bash
# hotpath-vs-opa.sh: ahp-opa against stock OPA on the same machine in one
# run, on distinct events (the shell command differs on every request), and
# the ratios of issue 24, on two reference policies: bench/reference (28
# rules calling helper functions) and bench/plain (25 regular expressions
# iterated with `some name, pattern in patterns`, and one object.get):
#
#   (a) stdio p50, one request outstanding       vs the OPA REST server, 1 conn
#   (b) HTTP server CPU per decision, 8 conns    vs the OPA REST server
#       (with p99 and req/s)
#   (c) per_event p50 as `registration` gives it vs `opa eval` per event
#   (d) the same with the built-in library       vs `opa eval` per event
#
# OPA gets the raw event (neither reference policy reads input.ahp). (d)
# runs ahp-opa's whole built-in library against OPA on the reference
# policy. per_event starts ahp-opa with the command its registration gives
# a per_event harness by default: ahp-opa-hook, the client of the warm
# decision daemon, which the warm-up starts. The rows marked "in-process"
# run `registration --no-client` (serve --stdio, compiling the policy at
# every start) for comparison.
#
#   bench/hotpath-vs-opa.sh [ahp-loadgen flags]   e.g. -duration 3s -warmup 1s -rounds 3
#
# Environment: AHP_OPA (an ahp-opa binary to measure instead of building
# this tree, e.g. an older build; ahp-opa-hook must be beside it), OPA
# (stock opa; default /tmp/bin/opa, else built from the module proxy at the
# version go.mod requires), AHP_PORT (18181) and OPA_PORT (18182) for the
# reference policy, the next ports but one for the plain policy. Needs curl
# and jq.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
ahp_port=${AHP_PORT:-18181}
opa_port=${OPA_PORT:-18182}
plain_ahp_port=$((ahp_port + 2))
plain_opa_port=$((opa_port + 2))
ref=$root/bench/reference
plain=$root/bench/plain
ref_query=ahp/tool/before/reference/deny
plain_query=ahp/tool/before/plain/deny

ahp_bin=${AHP_OPA:-}
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
(cd "$root" && go build -o "$work/ahp-loadgen" ./cmd/ahp-loadgen)
if [ -z "$ahp_bin" ]; then
	echo "building ahp-opa and ahp-opa-hook ..." >&2
	(cd "$root" && go build -o "$work/ahp-opa" ./cmd/ahp-opa && go build -o "$work/ahp-opa-hook" ./cmd/ahp-opa-hook)
	ahp_bin=$work/ahp-opa
fi
opa=${OPA:-/tmp/bin/opa}
if [ ! -x "$opa" ]; then
	echo "building OPA $opa_version (module proxy) ..." >&2
	(cd "$work" && GOFLAGS= GOBIN="$work" go install "github.com/open-policy-agent/opa@$opa_version")
	opa=$work/opa
fi
if [ "$("$opa" version | sed -n 's/^Version: //p')" != "${opa_version#v}" ]; then
	echo "$opa is not OPA $opa_version" >&2
	exit 1
fi

for port in "$plain_ahp_port" "$plain_opa_port"; do
	if curl -s -o /dev/null "http://127.0.0.1:$port/"; then
		echo "port $port is taken; set AHP_PORT/OPA_PORT" >&2
		exit 1
	fi
done

# The per_event command line a harness gets from the registration. The
# client takes its settings from a config file; its daemons live in
# $work/run (lib.sh stops them).
mkdir -m 700 "$work/run"
export XDG_RUNTIME_DIR=$work/run
printf 'log_level: warn\neval_timeout: 30s\n' >"$work/client.yaml"
per_event() { # registration flags -- serve arguments
	"$ahp_bin" registration --lifecycle per_event --failure-policy fail-closed "$@" 2>/dev/null |
		jq -r '.hooks[0].transport | [.command] + .args | join(" ")'
}
ref_per_event=$(per_event -- --config "$work/client.yaml" --policy "$ref")
plain_per_event=$(per_event -- --config "$work/client.yaml" --policy "$plain")
lib_per_event=$(per_event -- --config "$work/client.yaml")
# In-process, for comparison; an ahp-opa without --no-client (an older
# build, where it is the default) skips these rows.
ref_inproc=$(per_event --no-client -- --policy "$ref" --log-level warn --eval-timeout 30s || true)
lib_inproc=$(per_event --no-client -- --log-level warn --eval-timeout 30s || true)
opa_eval() { # policy directory, query
	echo "$opa eval --stdin-input --data $1 data.${2//\//.}"
}

# Neither OPA's server nor opa eval bounds an evaluation: lift ahp-opa's
# deadline and queue wait so that both do the same work on a busy machine.
lift=(--eval-timeout 30s --http-queue-wait 30s)
serve_pair() { # ahp port, opa port, policy directory, name
	"$ahp_bin" serve --http "127.0.0.1:$1" --log-level warn "${lift[@]}" --policy "$3" 2>"$work/ahp-opa-$4.log" &
	pids+=($!)
	"$opa" run --server --addr "127.0.0.1:$2" --log-level error --disable-telemetry \
		--ignore '*_test.rego' "$3" >"$work/opa-$4.log" 2>&1 &
	pids+=($!)
}
serve_pair "$ahp_port" "$opa_port" "$ref" ref
serve_pair "$plain_ahp_port" "$plain_opa_port" "$plain" plain
ready "http://127.0.0.1:$ahp_port/readyz"
ready "http://127.0.0.1:$opa_port/health?bundles"
ready "http://127.0.0.1:$plain_ahp_port/readyz"
ready "http://127.0.0.1:$plain_opa_port/health?bundles"

echo "machine: $(nproc) CPUs, $(go env GOOS)/$(go env GOARCH), $(go version | cut -d' ' -f3); OPA $("$opa" version | sed -n 's/^Version: //p'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
gen() { # name, ahp-loadgen flags: run one comparison, keep its ratio line
	echo "== $1" >&2
	# A wrong or failed answer is reported (and counted in the table);
	# the other comparisons still run.
	"$work/ahp-loadgen" -payload shell -opa-input raw "${@:2}" | tee "$work/$1.out" >&2 ||
		echo "($1: some answers were wrong or failed, see above)"
}
stdio() { # policy directory
	echo "stdio:$ahp_bin serve --stdio --log-level warn --eval-timeout 30s --policy $1"
}
ref_url=http://127.0.0.1:$opa_port/v1/data/$ref_query
plain_url=http://127.0.0.1:$plain_opa_port/v1/data/$plain_query
gen a-ref -conns 1 -ahp "$(stdio "$ref")" -opa "$ref_url" "$@"
gen a-plain -conns 1 -ahp "$(stdio "$plain")" -opa "$plain_url" "$@"
gen b-ref -conns 8 -ahp "http://127.0.0.1:$ahp_port/ahp" -ahp-pid "${pids[0]}" -opa "$ref_url" -opa-pid "${pids[1]}" "$@"
gen b-plain -conns 8 -ahp "http://127.0.0.1:$plain_ahp_port/ahp" -ahp-pid "${pids[2]}" -opa "$plain_url" -opa-pid "${pids[3]}" "$@"
gen c-ref -conns 1 -ahp "per-event:$ref_per_event" -opa "per-event:$(opa_eval "$ref" "$ref_query")" "$@"
gen c-plain -conns 1 -ahp "per-event:$plain_per_event" -opa "per-event:$(opa_eval "$plain" "$plain_query")" "$@"
gen d -conns 1 -ahp "per-event:$lib_per_event" -opa "per-event:$(opa_eval "$ref" "$ref_query")" "$@"
if [ -n "$ref_inproc" ] && [ -n "$lib_inproc" ]; then
	gen c-inproc -conns 1 -ahp "per-event:$ref_inproc" -opa "per-event:$(opa_eval "$ref" "$ref_query")" "$@"
	gen d-inproc -conns 1 -ahp "per-event:$lib_inproc" -opa "per-event:$(opa_eval "$ref" "$ref_query")" "$@"
else
	echo "(registration --no-client failed: the in-process per_event rows are skipped)" >&2
fi

ratio() { [ -f "$work/$1.out" ] && sed -n "s/.*$2 \([0-9.]*\)x.*/\1/p" "$work/$1.out"; }
p99() { sed -n 's/.*p99 \([^ ]*\) vs \([^,]*\).*/\1 vs \2/p' "$work/$1.out"; }
echo
echo "ratios, ahp-opa / OPA (target), reference | plain"
printf '(a) stdio p50 vs OPA server, 1 conn             %sx | %sx  (<= 0.4)\n' "$(ratio a-ref p50)" "$(ratio a-plain p50)"
printf '(b) HTTP CPU per decision vs OPA, 8 conns       %sx | %sx  (<= 0.5)\n' "$(ratio b-ref cpu)" "$(ratio b-plain cpu)"
printf '    p99 (lower)                                 %s | %s\n' "$(p99 b-ref)" "$(p99 b-plain)"
printf '    req/s                                       %sx | %sx\n' "$(ratio b-ref throughput)" "$(ratio b-plain throughput)"
printf '(c) per_event p50 vs opa eval, as registered    %sx | %sx  (<= 0.25)  in-process (--no-client): %sx\n' "$(ratio c-ref p50)" "$(ratio c-plain p50)" "$(ratio c-inproc p50)"
printf '(d) per_event p50, built-in library vs opa eval %sx  (<= 0.25)  in-process (--no-client): %sx\n' "$(ratio d p50)" "$(ratio d-inproc p50)"
