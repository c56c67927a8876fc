package audit

import "github.com/ahp-opa/ahp-opa/internal/redact"

// The redactor lives in package redact so that the engine and the log
// handler mask with the same rules; these names keep audit's API.
type (
	Redactor     = redact.Redactor
	RedactConfig = redact.Config
)

// Mask replaces whatever a redaction rule matched.
const Mask = redact.Mask

// NewRedactor compiles the built-in rules plus cfg.
func NewRedactor(cfg RedactConfig) (*Redactor, error) { return redact.New(cfg) }
