// Package rego holds ahp-opa's built-in Rego library: the starter deny rules
// under package ahp.tool.before.builtin and the helper packages under
// ahp.lib that they import.
//
// The files are embedded so the binary can serve them without a checkout.
// Test files (*_test.rego) are embedded as well: the loader leaves them out
// when serving policies, and the test command runs them.
package rego

import "embed"

// FS is the built-in library, laid out as in this directory.
//
//go:embed lib/*.rego tool/before/builtin/*.rego
var FS embed.FS

// EffectsTable is the built-in effects table (lib/effects/clis.json): how
// CLIs reach their effects. The library serves it at data.ahp.lib.effects.
//
//go:embed lib/effects/clis.json
var EffectsTable []byte
