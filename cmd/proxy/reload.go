package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgranger/pgranger/audit"
	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/identity"
	"github.com/pgranger/pgranger/metrics"
	"github.com/pgranger/pgranger/pgwire"
	"github.com/pgranger/pgranger/policystate"
)

// reloader re-reads the configuration on SIGHUP and applies what can
// change while sessions run. Nothing is applied unless the new file loads,
// validates and every live part of it can be prepared (users' passwords,
// the TLS key pair, the admin token file); then:
//
//   - identity.users: logins from now on use the new set; open sessions
//     of a user who was removed or whose password, roles, groups or
//     attributes changed end with FATAL 28000 at their next statement
//     boundary (pgwire.Server.EndStaleSessions); other sessions go on;
//   - listen.tls-cert / tls-key: new TLS handshakes use the (renewed)
//     certificate; requires TLS to have been on at start;
//   - policy.cache-ttl-secs;
//   - audit.path: the audit file is reopened (log rotation) or moved;
//   - log.level;
//   - admin.token / admin.token-file.
//
// Every other key that changed is logged as needing a restart, by name
// (never by value: some are secrets).
type reloader struct {
	mu       sync.Mutex // one reload at a time
	cfg      *config.Config
	path     string
	auth     *identity.Authenticator
	srv      *pgwire.Server
	audit    *audit.Logger
	holder   *policystate.Holder
	level    *slog.LevelVar
	token    *atomic.Pointer[string]
	counters *metrics.ReloadCounters
	log      *slog.Logger
}

// liveKeys change without a restart.
var liveKeys = map[string]bool{
	"identity.users":        true,
	"listen.tls-cert":       true,
	"listen.tls-key":        true,
	"policy.cache-ttl-secs": true,
	"audit.path":            true,
	"log.level":             true,
	"admin.token":           true,
	"admin.token-file":      true,
}

func (r *reloader) reload() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.apply(); err != nil {
		r.counters.Failed()
		r.log.Error("configuration reload failed; the running configuration stays", "config", r.path, "err", err)
		return
	}
	r.counters.Succeeded(time.Now())
}

func (r *reloader) apply() error {
	next, err := config.Load(r.path, os.Environ())
	if err != nil {
		return err
	}
	changed := changedKeys(r.cfg, next)
	var live, restart []string
	for _, k := range changed {
		if liveKeys[k] {
			live = append(live, k)
		} else {
			restart = append(restart, k)
		}
	}
	auditSwitch := (r.cfg.Audit.Path == "") != (next.Audit.Path == "")
	if auditSwitch {
		// Turning audit on or off needs the logger built (or not) at start.
		live = remove(live, "audit.path")
		restart = append(restart, "audit.path")
	}

	// Prepare everything that can fail before changing anything.
	if next.Listen.TLSCert != "" {
		if _, err := tls.LoadX509KeyPair(next.Listen.TLSCert, next.Listen.TLSKey); err != nil {
			return fmt.Errorf("listen.tls-cert: %w", err)
		}
	}
	tlsOn, tlsWasOn := next.Listen.TLSCert != "", r.cfg.Listen.TLSCert != ""
	if tlsOn != tlsWasOn {
		live = remove(remove(live, "listen.tls-cert"), "listen.tls-key")
		restart = append(restart, "listen.tls-cert")
	}
	token, err := adminToken(next.Admin)
	if err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(next.Log.Level)); err != nil {
		return fmt.Errorf("log.level: %w", err)
	}
	if err := r.auth.Reload(next.Identity); err != nil {
		return err
	}

	// Apply. The users are in; the rest cannot fail in a way that
	// leaves the proxy less safe than before.
	if tlsOn && tlsWasOn {
		if err := r.srv.ReloadTLS(next.Listen.TLSCert, next.Listen.TLSKey); err != nil {
			r.log.Error("listen.tls-cert: the certificate was not replaced", "err", err)
		}
	}
	r.holder.SetTTL(time.Duration(next.Policy.CacheTTLSecs) * time.Second)
	r.level.Set(level)
	r.token.Store(&token)
	if r.audit != nil && !auditSwitch {
		// Reopened even when the path is the same: logrotate moved the file.
		if err := r.audit.Reopen(next.Audit.Path); err != nil {
			r.log.Error("audit.path: the audit output could not be reopened; records still go to the previous one", "err", err)
		}
	}
	users := userChanges(r.cfg.Identity.Users, next.Identity.Users)
	// Sessions of users that were removed or changed end now, not when
	// their clients leave: they would keep access the file took back.
	ended := r.srv.EndStaleSessions()
	// Keys that cannot change live keep their running values, so the next
	// reload still reports them until the process restarts.
	kept := *r.cfg
	kept.Identity.Users = next.Identity.Users
	kept.Listen.TLSCert, kept.Listen.TLSKey = next.Listen.TLSCert, next.Listen.TLSKey
	if tlsOn != tlsWasOn {
		kept.Listen.TLSCert, kept.Listen.TLSKey = r.cfg.Listen.TLSCert, r.cfg.Listen.TLSKey
	}
	kept.Policy.CacheTTLSecs = next.Policy.CacheTTLSecs
	if !auditSwitch {
		kept.Audit.Path = next.Audit.Path
	}
	kept.Log.Level = next.Log.Level
	kept.Admin.Token, kept.Admin.TokenFile = next.Admin.Token, next.Admin.TokenFile
	r.cfg = &kept

	attrs := []any{"config", r.path, "applied", strings.Join(live, " "), "users", users}
	if len(ended) > 0 {
		attrs = append(attrs, "sessions_ended", endedSummary(ended))
	}
	r.log.Info("configuration reloaded", attrs...)
	if len(restart) > 0 {
		r.log.Warn("configuration reload: these settings changed in the file but only take effect after a restart; the running values stay",
			"keys", strings.Join(restart, " "))
	}
	return nil
}

// adminToken is admin.token (from the environment) or the first line of
// admin.token-file.
func adminToken(a config.Admin) (string, error) {
	if a.TokenFile == "" {
		return a.Token, nil
	}
	b, err := os.ReadFile(a.TokenFile)
	if err != nil {
		return "", fmt.Errorf("admin.token-file: %w", err)
	}
	tok := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	if tok == "" {
		return "", fmt.Errorf("admin.token-file: %s holds no token", a.TokenFile)
	}
	return tok, nil
}

// userChanges summarizes a user-set change by name: "+dave -erin ~bob".
func userChanges(before, after []config.User) string {
	old := map[string]string{}
	for _, u := range before {
		old[u.Name] = fmt.Sprint(u)
	}
	var out []string
	seen := map[string]bool{}
	for _, u := range after {
		seen[u.Name] = true
		switch prev, ok := old[u.Name]; {
		case !ok:
			out = append(out, "+"+u.Name)
		case prev != fmt.Sprint(u):
			out = append(out, "~"+u.Name)
		}
	}
	for _, u := range before {
		if !seen[u.Name] {
			out = append(out, "-"+u.Name)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][1:] < out[j][1:] })
	if len(out) == 0 {
		return "unchanged"
	}
	return strings.Join(out, " ")
}

// endedSummary lists the users whose sessions a reload ends: "bob:2 carol:1".
func endedSummary(ended map[string]int) string {
	out := make([]string, 0, len(ended))
	for u, n := range ended {
		out = append(out, fmt.Sprintf("%s:%d", u, n))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func remove(list []string, key string) []string {
	out := list[:0:0]
	for _, k := range list {
		if k != key {
			out = append(out, k)
		}
	}
	return out
}

// changedKeys lists the dotted keys (as in the file: "policy.ranger.url")
// whose values differ. Arrays of tables (identity.users) and tables of
// values (attribute-claims) compare as one key.
func changedKeys(a, b *config.Config) []string {
	fa, fb := map[string]string{}, map[string]string{}
	flatten("", reflect.ValueOf(*a), fa)
	flatten("", reflect.ValueOf(*b), fb)
	var out []string
	for k, v := range fb {
		if fa[k] != v {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func flatten(prefix string, v reflect.Value, out map[string]string) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := strings.Split(t.Field(i).Tag.Get("toml"), ",")[0]
		if name == "" || name == "-" {
			continue
		}
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			flatten(key, f, out)
			continue
		}
		out[key] = fmt.Sprintf("%#v", f.Interface())
	}
}
