package config

import (
	"errors"
	"fmt"
	"time"

	"github.com/ahp-opa/ahp-opa/transport"
)

// DefaultTokenEnv names the environment variable that holds the bearer
// token unless token_env says otherwise. It is also what `ahp-opa
// registration` tells the harness to read.
const DefaultTokenEnv = "AHP_OPA_TOKEN"

// HTTPConfig is the part of Config for the HTTP binding; its keys sit at
// the top level of the configuration, like the flags.
type HTTPConfig struct {
	HTTP                string        `koanf:"http"` // listen address; empty: no HTTP binding
	TokenFile           string        `koanf:"token_file"`
	TokenEnv            string        `koanf:"token_env"`
	AllowInsecureNoAuth bool          `koanf:"allow_insecure_no_auth"`
	TLSCert             string        `koanf:"tls_cert"`
	TLSKey              string        `koanf:"tls_key"`
	MaxBodyBytes        int64         `koanf:"max_body_bytes"`
	HTTPConcurrency     int           `koanf:"http_concurrency"`
	HTTPQueueWait       time.Duration `koanf:"http_queue_wait"`
	HTTPReadTimeout     time.Duration `koanf:"http_read_timeout"`
	HTTPWriteTimeout    time.Duration `koanf:"http_write_timeout"`
	HTTPIdleTimeout     time.Duration `koanf:"http_idle_timeout"`
	ShutdownTimeout     time.Duration `koanf:"shutdown_timeout"`
	DrainDelay          time.Duration `koanf:"drain_delay"`
}

// DefaultHTTP is the HTTP part of Default.
func DefaultHTTP() HTTPConfig {
	return HTTPConfig{
		TokenEnv:         DefaultTokenEnv,
		MaxBodyBytes:     transport.DefaultMaxBodyBytes,
		HTTPQueueWait:    transport.DefaultQueueWait,
		HTTPReadTimeout:  transport.DefaultReadTimeout,
		HTTPWriteTimeout: transport.DefaultWriteTimeout,
		HTTPIdleTimeout:  transport.DefaultIdleTimeout,
		ShutdownTimeout:  transport.DefaultShutdownTimeout,
	}
}

func (c HTTPConfig) validate() error {
	switch {
	case c.MaxBodyBytes < 1024:
		return fmt.Errorf("configuration: max_body_bytes must be at least 1024, got %d", c.MaxBodyBytes)
	case c.HTTPConcurrency < 0:
		return fmt.Errorf("configuration: http_concurrency must not be negative, got %d", c.HTTPConcurrency)
	case c.HTTPQueueWait < 0, c.HTTPReadTimeout <= 0, c.HTTPWriteTimeout <= 0, c.HTTPIdleTimeout <= 0, c.ShutdownTimeout <= 0, c.DrainDelay < 0:
		return errors.New("configuration: http_queue_wait and drain_delay must not be negative, and http_read_timeout, " +
			"http_write_timeout, http_idle_timeout and shutdown_timeout must be positive")
	case (c.TLSCert == "") != (c.TLSKey == ""):
		return errors.New("configuration: tls_cert and tls_key go together")
	}
	return nil
}
