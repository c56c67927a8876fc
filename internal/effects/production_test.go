package effects

import (
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/shell"
)

func TestProduction(t *testing.T) {
	tests := []struct {
		cmd  string
		want string
	}{
		{"redis-cli -h cache.prod.internal DEL k", "cache.prod.internal"},
		{"psql postgres://u@db-prd-1.acme.io/app -c 'DELETE FROM x'", "postgres://u@db-prd-1.acme.io/app"},
		{"acmectl --context prod-eu delete queue jobs", "--context prod-eu"},
		{"acmectl --profile=production wipe", "--profile=production"},
		{"RAILS_ENV=production bin/rails db:seed:replant", "RAILS_ENV=production"},
		{"psql $PROD_DATABASE_URL -c 'TRUNCATE t'", "$PROD_DATABASE_URL"},
		// Look-alikes: other environments, files, words.
		{"redis-cli -h cache.staging.internal DEL k", ""},
		{"kubectl apply -f k8s/prod.yaml", ""},
		{"mysql -e 'DELETE FROM live_users WHERE id=1'", ""},
		{"redis-cli -n 2 DEL cache:homepage", ""},
		{"echo $PRODUCT_NAME", ""},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			a := shell.Analyze(tt.cmd, shell.DefaultLimits)
			if len(a.Commands) == 0 {
				t.Fatal("no command")
			}
			if got := Production(&a.Commands[0]); got != tt.want {
				t.Errorf("Production = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestOnProduction: a guessed destroying act against a production target
// is sure; the same act elsewhere stays a guess.
func TestOnProduction(t *testing.T) {
	for _, tt := range []struct {
		cmd  string
		want string
	}{
		{"redis-cli -h cache.prod.internal DEL k", Medium},
		{"redis-cli -h cache.dev.internal DEL k", Low},
	} {
		a := shell.Analyze(tt.cmd, shell.DefaultLimits)
		c := &a.Commands[0]
		out := OnProduction(c, 0, []Effect{{Effect: StoreDestroy, Command: 0, Confidence: Low, Target: "Redis keys"}}, 0)
		if out[0].Confidence != tt.want {
			t.Errorf("%s: confidence %s, want %s", tt.cmd, out[0].Confidence, tt.want)
		}
	}
}
