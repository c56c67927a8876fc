package state

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/audit"
)

// factsDoc is a session's facts as the script stores them.
type factsDoc struct {
	Calls   map[string]int `json:"calls"`
	Denied  int            `json:"denied"`
	Reads   []string       `json:"files_read"`
	Writes  []string       `json:"files_written"`
	Hosts   []string       `json:"hosts_fetched"`
	Secrets []string       `json:"secret_paths"`
	Recent  []struct {
		Family string      `json:"f"`
		TimeNS json.Number `json:"t"`
	} `json:"recent"`
}

// decodeFacts builds the documented input.ahp.session object from the
// stored form, with the builder the in-process store uses.
func decodeFacts(b []byte) (ast.Value, error) {
	var d factsDoc
	if err := gojson.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("session facts in the store do not decode: %w", err)
	}
	recent := make([]*ast.Term, 0, len(d.Recent))
	for _, r := range d.Recent {
		if _, err := r.TimeNS.Int64(); err != nil {
			return nil, fmt.Errorf("session facts in the store: time_ns %q is not an integer", r.TimeNS)
		}
		recent = append(recent, audit.RecentCall(r.Family, ast.Number(r.TimeNS)))
	}
	return (&audit.SessionSummary{Calls: d.Calls, Denied: d.Denied, Reads: stringTerms(d.Reads), Writes: stringTerms(d.Writes),
		Hosts: stringTerms(d.Hosts), Secrets: stringTerms(d.Secrets), Recent: recent}).Value(), nil
}

func stringTerms(ss []string) []*ast.Term {
	ts := make([]*ast.Term, len(ss))
	for i, s := range ss {
		ts[i] = ast.StringTerm(s)
	}
	return ts
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
