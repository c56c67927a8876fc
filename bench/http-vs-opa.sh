#!/usr/bin/env bash
# http-vs-opa.sh: ahp-opa's HTTP binding against the OPA REST server, both
# on loopback with the built-in policy (rego/), driven with the same
# tool.before event at 1 and 8 concurrent connections. Prints requests/s
# and p50/p99 side by side. OPA is built from the Go module proxy at the
# version go.mod requires.
#
#   bench/http-vs-opa.sh [ahp-loadgen flags]   e.g. -duration 10s -rounds 5
#
# Environment: AHP_PORT (18181), OPA_PORT (18182), OPA_QUERY (the data path
# of the deny set, ahp/tool/before/builtin/deny), POLICY_DIR (another policy
# for both servers instead of the built-in library; set OPA_QUERY to match),
# OPA_POLICY_DIR (OPA's policy alone, e.g. bench/reference, while ahp-opa
# keeps the built-in library or POLICY_DIR).
#
# Large inputs (issue 14): the built-in library on ahp-opa against the
# reference policy on OPA, a 1 MB Write whose content differs per request:
#
#   OPA_POLICY_DIR=bench/reference OPA_QUERY=ahp/tool/before/reference/deny \
#     bench/http-vs-opa.sh -opa-input raw -conns 1 -payload write:1000000
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
ahp_port=${AHP_PORT:-18181}
opa_port=${OPA_PORT:-18182}
opa_query=${OPA_QUERY:-ahp/tool/before/builtin/deny}
policy_dir=${POLICY_DIR:-}

# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
echo "building ahp-opa, ahp-loadgen and OPA $opa_version (module proxy) ..." >&2
(cd "$root" && go build -o "$work/ahp-opa" ./cmd/ahp-opa && go build -o "$work/ahp-loadgen" ./cmd/ahp-loadgen)
(cd "$work" && GOFLAGS= GOBIN="$work" go install "github.com/open-policy-agent/opa@$opa_version")

ahp_policy=()
opa_policy=$root/rego
if [ -n "$policy_dir" ]; then
	ahp_policy=(--policy "$policy_dir")
	opa_policy=$policy_dir
fi
if [ -n "${OPA_POLICY_DIR:-}" ]; then
	opa_policy=$(cd "$OPA_POLICY_DIR" && pwd)
fi
# The OPA server neither bounds an evaluation nor sheds load: lift
# ahp-opa's evaluation deadline and queue wait so that both do the same
# work on a busy machine instead of ahp-opa answering -32004/-32003.
"$work/ahp-opa" serve --http "127.0.0.1:$ahp_port" --log-level warn \
	--eval-timeout 30s --http-queue-wait 30s "${ahp_policy[@]}" 2>"$work/ahp-opa.log" &
pids+=($!)
"$work/opa" run --server --addr "127.0.0.1:$opa_port" --log-level error --disable-telemetry \
	--ignore '*_test.rego' "$opa_policy" >"$work/opa.log" 2>&1 &
pids+=($!)

ready "http://127.0.0.1:$ahp_port/readyz"
ready "http://127.0.0.1:$opa_port/health?bundles"

echo "machine: $(nproc) CPUs, $(go env GOOS)/$(go env GOARCH), $(go version | cut -d' ' -f3); OPA $("$work/opa" version | sed -n 's/^Version: //p')" >&2
"$work/ahp-loadgen" \
	-ahp "http://127.0.0.1:$ahp_port/ahp" -ahp-pid "${pids[0]}" \
	-opa "http://127.0.0.1:$opa_port/v1/data/$opa_query" -opa-pid "${pids[1]}" \
	"$@"
