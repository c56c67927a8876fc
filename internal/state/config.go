// Package state keeps the session state a fleet of replicas shares:
// session facts, the answers given to event ids and the decisions
// awaiting their tool.after. The default store is this process's memory
// (the auditor's own); Redis, or Valkey, which speaks the same protocol,
// makes every replica answer as one process would.
package state

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Stores a configuration may name.
const (
	StoreMemory = "memory"
	StoreRedis  = "redis"
)

// Defaults of the state: section.
const (
	DefaultTimeout   = 5 * time.Millisecond
	DefaultKeyPrefix = "ahp-opa:"
	DefaultQueueSize = 8192
)

// ErrConfig marks a state: section that cannot work.
var ErrConfig = errors.New("configuration")

// Config is the state: section.
type Config struct {
	// Store is memory (one process, the default) or redis (a fleet).
	Store string `koanf:"store"`
	// URL is redis://host:port/db, or rediss:// for TLS. It carries no
	// password: that comes from PasswordFile.
	URL string `koanf:"url"`
	// Username is the ACL user; empty means the default user.
	Username string `koanf:"username"`
	// PasswordFile holds the password of Username (one line).
	PasswordFile string `koanf:"password_file"`
	// KeyPrefix starts every key, so that fleets can share a server.
	KeyPrefix string `koanf:"key_prefix"`
	// Timeout bounds the read a decision makes; past it the decision is
	// made with this replica's own facts, marked stale.
	Timeout time.Duration `koanf:"timeout"`
	// Required answers -32003 to a decision whose facts could not be read,
	// instead of deciding with stale ones.
	Required bool `koanf:"required"`
	// QueueSize bounds the updates waiting to be written; past it they
	// are dropped and counted.
	QueueSize int `koanf:"queue_size"`
}

// Default returns the state: section as it is when absent.
func Default() Config {
	return Config{Store: StoreMemory, KeyPrefix: DefaultKeyPrefix, Timeout: DefaultTimeout, QueueSize: DefaultQueueSize}
}

// Shared reports whether the configuration names a shared store.
func (c Config) Shared() bool { return c.Store == StoreRedis }

// Validate checks the section; a misspelt store or a URL that cannot
// work is an error at start, not a silent single-process fleet.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: state.%s", ErrConfig, fmt.Sprintf(format, args...))
	}
	switch c.Store {
	case StoreMemory, "":
		if c.URL != "" {
			return bad("url is set but state.store is %q; set state.store: redis to use it", c.Store)
		}
		return nil
	case StoreRedis:
	default:
		return bad("store must be %q or %q, got %q", StoreMemory, StoreRedis, c.Store)
	}
	if c.Timeout <= 0 || c.Timeout > 10*time.Second {
		return bad("timeout must be between 0 and 10s, got %s", c.Timeout)
	}
	if c.QueueSize < 1 {
		return bad("queue_size must be at least 1, got %d", c.QueueSize)
	}
	if c.KeyPrefix == "" {
		return bad("key_prefix must not be empty: it keeps ahp-opa's keys apart from others")
	}
	_, err := c.redisURL()
	return err
}

// redisAddr is a parsed state.url.
type redisAddr struct {
	host string
	db   int
	tls  bool
	user string // from the URL's user part, or Username
}

func (c Config) redisURL() (redisAddr, error) {
	bad := func(why string) error {
		return fmt.Errorf("%w: state.url %s: want redis://host:port/db or rediss://host:port/db", ErrConfig, why)
	}
	if c.URL == "" {
		return redisAddr{}, bad("is empty")
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return redisAddr{}, bad("does not parse") // the URL is not echoed: it could carry a password
	}
	var a redisAddr
	switch u.Scheme {
	case "redis":
	case "rediss":
		a.tls = true
	default:
		return redisAddr{}, bad(fmt.Sprintf("has scheme %q", u.Scheme))
	}
	if _, set := u.User.Password(); set {
		return redisAddr{}, bad("holds a password; put it in state.password_file")
	}
	a.user = c.Username
	if name := u.User.Username(); name != "" {
		if c.Username != "" && c.Username != name {
			return redisAddr{}, bad(fmt.Sprintf("names user %q but state.username is %q", name, c.Username))
		}
		a.user = name
	}
	if u.Host == "" {
		return redisAddr{}, bad("has no host")
	}
	a.host = u.Host
	if u.Port() == "" {
		a.host += ":6379"
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 {
			return redisAddr{}, bad(fmt.Sprintf("has database %q, not a number", db))
		}
		a.db = n
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return redisAddr{}, bad("has a query or fragment")
	}
	return a, nil
}
