#!/usr/bin/env bash
# hotpath-vs-opa.sh: ahp-opa against stock OPA on the same machine in one
# run, on distinct events (the shell command differs on every request), and
# the ratios of issue 11:
#
#   (a) stdio p50, one request outstanding    vs the OPA REST server, 1 conn
#   (b) HTTP req/s and p99 at 8 connections   vs the OPA REST server
#   (c) per_event p50                         vs `opa eval` per event
#   (d) per_event p50, built-in library       vs `opa eval` per event
#
# (a)-(c) run the 28-rule reference policy (bench/reference) on both sides;
# (d) runs ahp-opa's whole built-in library against OPA on the reference
# policy. OPA gets the raw event (the reference policy reads no input.ahp).
# per_event starts ahp-opa with the arguments its own registration command
# gives a per_event harness: (c) and (d) twice, once in-process
# (`ahp-opa serve --stdio`, which compiles the policy at every start) and
# once through the warm daemon (`registration --client`: ahp-opa-hook,
# whose daemon the warm-up starts).
#
#   bench/hotpath-vs-opa.sh [ahp-loadgen flags]   e.g. -duration 5s -rounds 5
#
# Environment: AHP_OPA (an ahp-opa binary to measure instead of building
# this tree, e.g. an older build), OPA (stock opa; default /tmp/bin/opa,
# else built from the module proxy at the version go.mod requires),
# AHP_PORT (18181), OPA_PORT (18182). Needs curl and jq.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
ahp_port=${AHP_PORT:-18181}
opa_port=${OPA_PORT:-18182}
policy=$root/bench/reference
query=ahp/tool/before/reference/deny

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

# The per_event command line a harness gets from the registration.
per_event() { # serve arguments
	"$ahp_bin" registration --lifecycle per_event --failure-policy fail-closed -- "$@" |
		jq -r '.hooks[0].transport | [.command] + .args | join(" ")'
}
ref_per_event=$(per_event --policy "$policy" --log-level warn --eval-timeout 30s)
lib_per_event=$(per_event --log-level warn --eval-timeout 30s)
# The same through the client of the warm daemon, which takes the other
# settings from a config file; its daemons live in $work/run (lib.sh stops
# them). An ahp-opa without --client (an older build) skips these rows.
mkdir -m 700 "$work/run"
export XDG_RUNTIME_DIR=$work/run
printf 'log_level: warn\neval_timeout: 30s\n' >"$work/client.yaml"
client_per_event() { # serve arguments
	"$ahp_bin" registration --lifecycle per_event --client --failure-policy fail-closed -- "$@" 2>/dev/null |
		jq -r '.hooks[0].transport | [.command] + .args | join(" ")'
}
ref_client=$(client_per_event --config "$work/client.yaml" --policy "$policy" || true)
lib_client=$(client_per_event --config "$work/client.yaml" || true)
opa_eval="$opa eval --stdin-input --data $policy data.${query//\//.}"

# Neither OPA's server nor opa eval bounds an evaluation: lift ahp-opa's
# deadline and queue wait so that both do the same work on a busy machine.
lift=(--eval-timeout 30s --http-queue-wait 30s)
"$ahp_bin" serve --http "127.0.0.1:$ahp_port" --log-level warn "${lift[@]}" --policy "$policy" 2>"$work/ahp-opa.log" &
pids+=($!)
"$opa" run --server --addr "127.0.0.1:$opa_port" --log-level error --disable-telemetry \
	--ignore '*_test.rego' "$policy" >"$work/opa.log" 2>&1 &
pids+=($!)

ready "http://127.0.0.1:$ahp_port/readyz"
ready "http://127.0.0.1:$opa_port/health?bundles"

echo "machine: $(nproc) CPUs, $(go env GOOS)/$(go env GOARCH), $(go version | cut -d' ' -f3); OPA $("$opa" version | sed -n 's/^Version: //p'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
gen() { # name, ahp-loadgen flags: run one comparison, keep its ratio line
	echo "== $1" >&2
	# A wrong or failed answer is reported (and counted in the table);
	# the other comparisons still run.
	"$work/ahp-loadgen" -payload shell -opa-input raw "${@:2}" | tee "$work/$1.out" >&2 ||
		echo "($1: some answers were wrong or failed, see above)"
}
opa_url=http://127.0.0.1:$opa_port/v1/data/$query
gen a -conns 1 -ahp "stdio:$ahp_bin serve --stdio --log-level warn --eval-timeout 30s --policy $policy" -opa "$opa_url" "$@"
gen b -conns 8 -ahp "http://127.0.0.1:$ahp_port/ahp" -ahp-pid "${pids[0]}" -opa "$opa_url" -opa-pid "${pids[1]}" "$@"
gen c -conns 1 -ahp "per-event:$ref_per_event" -opa "per-event:$opa_eval" "$@"
gen d -conns 1 -ahp "per-event:$lib_per_event" -opa "per-event:$opa_eval" "$@"
if [ -n "$ref_client" ] && [ -n "$lib_client" ]; then
	gen c-client -conns 1 -ahp "per-event:$ref_client" -opa "per-event:$opa_eval" "$@"
	gen d-client -conns 1 -ahp "per-event:$lib_client" -opa "per-event:$opa_eval" "$@"
else
	echo "(no ahp-opa-hook beside $ahp_bin, or no registration --client: the warm client rows are skipped)" >&2
fi

ratio() { [ -f "$work/$1.out" ] && sed -n "s/.*$2 \([0-9.]*\)x.*/\1/p" "$work/$1.out"; }
p99() { sed -n 's/.*p99 \([^ ]*\) vs \([^,]*\).*/\1 vs \2/p' "$work/$1.out"; }
echo
echo "ratios, ahp-opa / OPA (target)"
printf '(a) stdio p50 vs OPA server, 1 conn                  %sx  (<= 0.6)\n' "$(ratio a 'p50')"
printf '(b) HTTP req/s at 8 conns vs OPA server              %sx  (>= 2, lower p99: %s)\n' "$(ratio b 'throughput')" "$(p99 b)"
printf '(c) per_event p50 vs opa eval, reference policy      %sx  (<= 0.6)  in-process; %sx through the warm daemon\n' "$(ratio c 'p50')" "$(ratio c-client 'p50')"
printf '(d) per_event p50, built-in library vs opa eval      %sx  (<= 1.0)  in-process; %sx through the warm daemon\n' "$(ratio d 'p50')" "$(ratio d-client 'p50')"
