package state

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"slices"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/open-policy-agent/opa/v1/ast"
)

// factsDoc is a session's facts as the script stores them.
type factsDoc struct {
	Calls   map[string]int `json:"calls"`
	Denied  int            `json:"denied"`
	Reads   []string       `json:"files_read"`
	Hosts   []string       `json:"hosts_fetched"`
	Secrets []string       `json:"secret_paths"`
	Recent  []struct {
		Family string      `json:"f"`
		TimeNS json.Number `json:"t"`
	} `json:"recent"`
}

// decodeFacts builds the documented input.ahp.session object, the same
// shape the in-process store builds.
func decodeFacts(b []byte) (ast.Value, error) {
	var d factsDoc
	if err := gojson.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("session facts in the store do not decode: %w", err)
	}
	calls := ast.NewObject()
	total := 0
	for _, fam := range slices.Sorted(maps.Keys(d.Calls)) {
		calls.Insert(ast.StringTerm(fam), ast.IntNumberTerm(d.Calls[fam]))
		total += d.Calls[fam]
	}
	recent := make([]*ast.Term, 0, len(d.Recent))
	for _, r := range d.Recent {
		if _, err := r.TimeNS.Int64(); err != nil {
			return nil, fmt.Errorf("session facts in the store: time_ns %q is not an integer", r.TimeNS)
		}
		recent = append(recent, ast.ObjectTerm(
			ast.Item(ast.InternedTerm("family"), ast.StringTerm(r.Family)),
			ast.Item(ast.InternedTerm("time_ns"), ast.NumberTerm(r.TimeNS)),
		))
	}
	return ast.NewObject(
		ast.Item(ast.InternedTerm("calls"), ast.NewTerm(calls)),
		ast.Item(ast.InternedTerm("total_calls"), ast.IntNumberTerm(total)),
		ast.Item(ast.InternedTerm("denied"), ast.IntNumberTerm(d.Denied)),
		ast.Item(ast.InternedTerm("files_read"), stringArray(d.Reads)),
		ast.Item(ast.InternedTerm("hosts_fetched"), stringArray(d.Hosts)),
		ast.Item(ast.InternedTerm("secrets_touched"), ast.BooleanTerm(len(d.Secrets) > 0)),
		ast.Item(ast.InternedTerm("secret_paths"), stringArray(d.Secrets)),
		ast.Item(ast.InternedTerm("recent"), ast.ArrayTerm(recent...)),
	), nil
}

func stringArray(ss []string) *ast.Term {
	ts := make([]*ast.Term, len(ss))
	for i, s := range ss {
		ts[i] = ast.StringTerm(s)
	}
	return ast.ArrayTerm(ts...)
}

// scriptSHA is the id EVALSHA calls a script by.
func scriptSHA(src string) string {
	sum := sha1.Sum([]byte(src))
	return hex.EncodeToString(sum[:])
}

// netDialer bounds connecting: a server that does not answer must not
// hold a replica's start or its reconnects for long.
func netDialer() net.Dialer {
	return net.Dialer{Timeout: time.Second, KeepAlive: 15 * time.Second}
}
