// Package config loads pgranger's TOML configuration, applies
// PGRANGER_<SECTION>__<KEY> environment overrides and validates the result
// with messages that name the offending key ("listen.addr: ...").
//
// The keys are documented in docs/configuration.md. Keys are kebab-case; every key has a default so a
// config file only names what differs. Relative file paths are resolved
// against the directory of the config file, so a config works whatever the
// current directory of the process is.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Config is the whole configuration.
type Config struct {
	Listen    Listen    `toml:"listen"`
	Backend   Backend   `toml:"backend"`
	Catalog   Catalog   `toml:"catalog"`
	Identity  Identity  `toml:"identity"`
	Policy    Policy    `toml:"policy"`
	Authoring Authoring `toml:"authoring"`
	Audit     Audit     `toml:"audit"`
	Admin     Admin     `toml:"admin"`
	Log       Log       `toml:"log"`

	// Path is the file the config was read from ("" when built in code).
	Path string `toml:"-"`
}

// Listen is the client-facing side.
type Listen struct {
	Addr                   string `toml:"addr"`
	TLSCert                string `toml:"tls-cert"`
	TLSKey                 string `toml:"tls-key"`
	AllowPlaintextPassword bool   `toml:"allow-plaintext-password"`
	RequireTLS             bool   `toml:"require-tls"`
	MaxClients             int    `toml:"max-clients"`
	StartupTimeoutSecs     int    `toml:"startup-timeout-secs"`
	IdleTimeoutSecs        int    `toml:"idle-timeout-secs"`
	IdleInTxnTimeoutSecs   int    `toml:"idle-in-transaction-timeout-secs"`
	ShutdownTimeoutSecs    int    `toml:"shutdown-timeout-secs"`
	MaxMessageBytes        int    `toml:"max-message-bytes"`
	MaxStatementBytes      int    `toml:"max-statement-bytes"`
	MaxNestingDepth        int    `toml:"max-nesting-depth"`
}

// Backend is the PostgreSQL server pgranger forwards to.
type Backend struct {
	DSN                string `toml:"dsn"`
	PoolSize           int    `toml:"pool-size"`
	AllowSuperuser     bool   `toml:"allow-superuser"`
	ConnectTimeoutSecs int    `toml:"connect-timeout-secs"`
	AcquireTimeoutSecs int    `toml:"acquire-timeout-secs"`
}

// Catalog controls the relation metadata cache.
type Catalog struct {
	TTLSecs int `toml:"ttl-secs"`
	// StoredMasks: read verified stored-mask columns instead of computing
	// the mask (docs/masks.md, "Stored masks"); false computes every mask.
	StoredMasks bool `toml:"stored-masks"`
}

// Identity selects how clients authenticate.
type Identity struct {
	Mode  Modes  `toml:"mode"`
	Users []User `toml:"users"`
	JWT   JWT    `toml:"jwt"`
}

// User is one static user.
type User struct {
	Name       string            `toml:"name"`
	Password   string            `toml:"password"` // plain text or a SCRAM-SHA-256 verifier
	Roles      []string          `toml:"roles"`
	Groups     []string          `toml:"groups"`
	Attributes map[string]string `toml:"attributes"`
}

// Modes is identity.mode: a single string or a list of modes.
type Modes []string

// UnmarshalTOML accepts `mode = "static"` and `mode = ["jwt", "static"]`.
func (m *Modes) UnmarshalTOML(v any) error {
	switch t := v.(type) {
	case string:
		*m = splitList(t)
	case []any:
		out := make(Modes, 0, len(t))
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("mode entries must be strings, got %T", e)
			}
			out = append(out, s)
		}
		*m = out
	default:
		return fmt.Errorf("mode must be a string or a list of strings, got %T", v)
	}
	return nil
}

// Has reports whether mode is enabled.
func (m Modes) Has(mode string) bool {
	for _, x := range m {
		if x == mode {
			return true
		}
	}
	return false
}

// Policy selects where Ranger documents come from and how they apply.
type Policy struct {
	Source           string `toml:"source"`
	ServiceName      string `toml:"service-name"`
	NamespaceMapping string `toml:"namespace-mapping"`
	CacheTTLSecs     int    `toml:"cache-ttl-secs"`
	MaskPrecedence   string `toml:"mask-precedence"`
	HashAlgo         string `toml:"hash-algo"`
	// MaskDialect is whose mask results pgranger reproduces: "hive"
	// (HiveServer2's) or "spark" (Spark's under Kyuubi's Ranger plugin).
	MaskDialect    string `toml:"mask-dialect"`
	AllowDDL       bool   `toml:"allow-ddl"`
	DMLRowFilter   string `toml:"dml-row-filter"` // writes to filtered/masked tables: "deny" (Hive's default) or "apply"
	RewriteCacheMB int    `toml:"rewrite-cache-mb"`
	// AllowedSettings are settings sessions may change besides pgranger's
	// own list (sqlrewrite/settings.go): names, or "<prefix>.*" for an
	// application's custom placeholders.
	AllowedSettings StringList   `toml:"allowed-settings"`
	File            PolicyFile   `toml:"file"`
	Ranger          PolicyRanger `toml:"ranger"`
}

// PolicyFile is policy.source = "file".
type PolicyFile struct {
	Policies       string `toml:"policies"`
	Tags           string `toml:"tags"`
	Roles          string `toml:"roles"`
	UserStore      string `toml:"userstore"`
	PollIntervalMS int    `toml:"poll-interval-ms"`
}

// PolicyRanger is policy.source = "ranger": the Ranger Admin REST client.
type PolicyRanger struct {
	// URL is one Ranger Admin base URL or several, comma-separated, tried
	// in order (failover).
	URL       string `toml:"url"`
	AdminUser string `toml:"admin-user"`
	// AdminPassword comes only from PGRANGER_POLICY__RANGER__ADMIN_PASSWORD:
	// Load refuses a non-empty admin-password written in the file.
	AdminPassword     string `toml:"admin-password"`
	AdminPasswordFile string `toml:"admin-password-file"`
	TimeoutSecs       int    `toml:"timeout-secs"`
	PollIntervalSecs  int    `toml:"poll-interval-secs"`
	// PollIntervalMS, when > 0, replaces poll-interval-secs (tests, demos).
	PollIntervalMS     int    `toml:"poll-interval-ms"`
	CacheDir           string `toml:"cache-dir"`
	CAFile             string `toml:"ca-file"`
	ClientCert         string `toml:"client-cert"`
	ClientKey          string `toml:"client-key"`
	AcceptInvalidCerts bool   `toml:"accept-invalid-certs"`
	ClusterName        string `toml:"cluster-name"`
	PluginID           string `toml:"plugin-id"` // "" = pgranger@<hostname>-<service>
	DownloadTags       bool   `toml:"download-tags"`
	DownloadRoles      bool   `toml:"download-roles"`
	DownloadUserStore  bool   `toml:"download-userstore"`
	// The circuit breaker opens after BreakerFailures failed refresh rounds
	// in a row and then waits poll-interval × 2^n, up to
	// BreakerMaxBackoffSecs, between attempts.
	BreakerFailures       int `toml:"breaker-failures"`
	BreakerMaxBackoffSecs int `toml:"breaker-max-backoff-secs"`
}

// URLs returns the admin base URLs in failover order.
func (r PolicyRanger) URLs() []string { return splitList(r.URL) }

// PollInterval is the time between refreshes.
func (r PolicyRanger) PollInterval() time.Duration {
	if r.PollIntervalMS > 0 {
		return time.Duration(r.PollIntervalMS) * time.Millisecond
	}
	return time.Duration(r.PollIntervalSecs) * time.Second
}

// Authoring controls the statements that change policies (GRANT,
// REVOKE, CREATE/ALTER/DROP POLICY, SECURITY LABEL FOR pgranger and
// pgranger_tags; docs/authoring.md).
type Authoring struct {
	// Enabled writes them to where the policies come from (Ranger Admin,
	// or the policy and tag files); off, they are refused (42501).
	Enabled bool `toml:"enabled"`
}

// Audit is where audit records go.
type Audit struct {
	Path string `toml:"path"` // "-" = stdout, "" = off
	// BufferSize is how many records may wait for the writer; a record
	// that finds the buffer full is dropped and counted
	// (pgranger_audit_dropped_total), so a slow disk never slows a query.
	BufferSize int `toml:"buffer-size"`
}

// Admin is the HTTP admin address (/metrics, /healthz, /readyz, POST /refresh).
type Admin struct {
	Addr string `toml:"addr"` // "" = off
	// AllowRemote permits an admin.addr that is not a loopback address;
	// it needs a bearer token (Token or TokenFile).
	AllowRemote bool `toml:"allow-remote"`
	// TLSCert and TLSKey serve the admin endpoint over HTTPS.
	TLSCert string `toml:"tls-cert"`
	TLSKey  string `toml:"tls-key"`
	// Token, when set, is required as "Authorization: Bearer <token>" on
	// /metrics and POST /refresh. It comes only from PGRANGER_ADMIN__TOKEN
	// or TokenFile: Load refuses one written in the config file.
	Token     string `toml:"token"`
	TokenFile string `toml:"token-file"`
}

// Log configures the process log.
type Log struct {
	Level  string `toml:"level"`
	Format string `toml:"format"`
}

// Default returns the configuration every file starts from.
func Default() *Config {
	return &Config{
		Listen: Listen{
			Addr:               "127.0.0.1:6432",
			MaxClients:         1000,
			StartupTimeoutSecs: 10,
			// Long enough for a typical statement to finish on SIGTERM,
			// short enough for an orchestrator's grace period (systemd,
			// Kubernetes: 30 s) to cover the drain and the resets after it.
			ShutdownTimeoutSecs: 5,
			MaxMessageBytes:     64 << 20,
			MaxStatementBytes:   1 << 20,
			MaxNestingDepth:     1000,
		},
		Backend: Backend{
			DSN:                "postgres://pgranger@127.0.0.1:5432/postgres?sslmode=disable",
			PoolSize:           20,
			ConnectTimeoutSecs: 10,
			AcquireTimeoutSecs: 30,
		},
		Catalog:  Catalog{TTLSecs: 10, StoredMasks: true},
		Identity: Identity{Mode: Modes{"static"}, JWT: defaultJWT()},
		Policy: Policy{
			Source:           "file",
			ServiceName:      "hive",
			NamespaceMapping: "schema",
			CacheTTLSecs:     30,
			MaskPrecedence:   "tag",
			HashAlgo:         "sha256",
			MaskDialect:      "hive",
			DMLRowFilter:     "deny",
			RewriteCacheMB:   64,
			File:             PolicyFile{PollIntervalMS: 1000},
			Ranger: PolicyRanger{
				URL:                   "http://127.0.0.1:6080",
				AdminUser:             "admin",
				TimeoutSecs:           5,
				PollIntervalSecs:      10,
				DownloadTags:          true,
				DownloadRoles:         true,
				DownloadUserStore:     true,
				BreakerFailures:       3,
				BreakerMaxBackoffSecs: 300,
			},
		},
		Audit: Audit{Path: "-", BufferSize: 4096},
		Admin: Admin{Addr: "127.0.0.1:9432"},
		Log:   Log{Level: "info", Format: "text"},
	}
}

// removedKeys are keys pgranger had and no longer has, with what to do
// instead. A file or a variable still setting one is refused at start
// like any unknown key, but the error says what became of it.
var removedKeys = map[string]string{
	"listen.event-loop":  "removed: pgranger relays every session with two goroutines, there is no event loop to turn on or off; delete the key (docs/configuration.md, \"Removed keys\")",
	"listen.event-loops": "removed: pgranger relays every session with two goroutines, there are no event loops to count; delete the key (docs/configuration.md, \"Removed keys\")",
}

// Load reads path, applies environment overrides from environ (os.Environ()
// form) and validates. Unknown keys are errors: a typo must not silently
// leave a security setting at its default.
func Load(path string, environ []string) (*Config, error) {
	c := Default()
	md, err := toml.DecodeFile(path, c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		sort.Strings(keys)
		for _, k := range keys {
			if why, ok := removedKeys[k]; ok {
				return nil, fmt.Errorf("%s: %s: %s", path, k, why)
			}
		}
		return nil, fmt.Errorf("%s: unknown key %s", path, strings.Join(keys, ", "))
	}
	if md.IsDefined("policy", "ranger", "admin-password") && c.Policy.Ranger.AdminPassword != "" {
		// A secret in a file that is copied, versioned and shown in reviews
		// is a leak waiting to happen; the environment or a file of its own
		// (with its own permissions) are the two ways in.
		return nil, fmt.Errorf("%s: policy.ranger.admin-password: a password written in the config file is refused; set PGRANGER_POLICY__RANGER__ADMIN_PASSWORD or policy.ranger.admin-password-file", path)
	}
	if md.IsDefined("admin", "token") && c.Admin.Token != "" {
		return nil, fmt.Errorf("%s: admin.token: a token written in the config file is refused; set PGRANGER_ADMIN__TOKEN or admin.token-file", path)
	}
	c.Path = path
	if err := ApplyEnv(c, environ); err != nil {
		return nil, err
	}
	c.resolvePaths(filepath.Dir(path))
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) resolvePaths(base string) {
	for _, p := range []*string{&c.Listen.TLSCert, &c.Listen.TLSKey, &c.Policy.File.Policies, &c.Policy.File.Tags,
		&c.Policy.File.Roles, &c.Policy.File.UserStore, &c.Policy.Ranger.CacheDir, &c.Policy.Ranger.AdminPasswordFile,
		&c.Policy.Ranger.CAFile, &c.Policy.Ranger.ClientCert, &c.Policy.Ranger.ClientKey, &c.Identity.JWT.CAFile,
		&c.Admin.TLSCert, &c.Admin.TLSKey, &c.Admin.TokenFile} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(base, *p)
		}
	}
	if c.Audit.Path != "" && c.Audit.Path != "-" && !filepath.IsAbs(c.Audit.Path) {
		c.Audit.Path = filepath.Join(base, c.Audit.Path)
	}
}

// Validate checks every key and returns all problems at once, each naming its key.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	checkAddr := func(key, v string, optional bool) {
		if v == "" {
			if !optional {
				bad(key, "must be set (host:port)")
			}
			return
		}
		if _, _, err := net.SplitHostPort(v); err != nil {
			bad(key, "%v", err)
		}
	}
	positive := func(key string, v int) {
		if v <= 0 {
			bad(key, "must be greater than 0, got %d", v)
		}
	}
	checkAddr("listen.addr", c.Listen.Addr, false)
	if (c.Listen.TLSCert == "") != (c.Listen.TLSKey == "") {
		bad("listen.tls-cert", "tls-cert and tls-key must be set together")
	}
	positive("listen.max-clients", c.Listen.MaxClients)
	positive("listen.startup-timeout-secs", c.Listen.StartupTimeoutSecs)
	positive("listen.max-message-bytes", c.Listen.MaxMessageBytes)
	positive("listen.max-statement-bytes", c.Listen.MaxStatementBytes)
	positive("listen.max-nesting-depth", c.Listen.MaxNestingDepth)
	if c.Listen.IdleInTxnTimeoutSecs < 0 {
		bad("listen.idle-in-transaction-timeout-secs", "must be 0 (off) or positive")
	}
	if c.Listen.IdleTimeoutSecs < 0 {
		bad("listen.idle-timeout-secs", "must be 0 (off) or positive")
	}
	if c.Listen.ShutdownTimeoutSecs < 0 {
		bad("listen.shutdown-timeout-secs", "must be 0 (end every session at once) or positive")
	}

	if u, err := url.Parse(c.Backend.DSN); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		bad("backend.dsn", "must be a postgres:// URL")
	}
	positive("backend.pool-size", c.Backend.PoolSize)
	positive("backend.connect-timeout-secs", c.Backend.ConnectTimeoutSecs)
	positive("backend.acquire-timeout-secs", c.Backend.AcquireTimeoutSecs)
	positive("catalog.ttl-secs", c.Catalog.TTLSecs)

	c.validateIdentity(bad)

	switch c.Policy.Source {
	case "file":
		if c.Policy.File.Policies == "" {
			bad("policy.file.policies", "must be set when policy.source = \"file\"")
		}
		positive("policy.file.poll-interval-ms", c.Policy.File.PollIntervalMS)
	case "ranger":
		c.validateRanger(bad)
	default:
		bad("policy.source", "unknown source %q (want file or ranger)", c.Policy.Source)
	}
	if c.Policy.ServiceName == "" {
		bad("policy.service-name", "must be set")
	}
	switch c.Policy.NamespaceMapping {
	case "schema", "database.schema":
	default:
		bad("policy.namespace-mapping", "unknown mapping %q (want schema or database.schema)", c.Policy.NamespaceMapping)
	}
	positive("policy.cache-ttl-secs", c.Policy.CacheTTLSecs)
	switch c.Policy.MaskPrecedence {
	case "tag", "resource":
	default:
		bad("policy.mask-precedence", "unknown value %q (want tag or resource)", c.Policy.MaskPrecedence)
	}
	switch c.Policy.HashAlgo {
	case "sha256", "sha512":
	default:
		bad("policy.hash-algo", "unknown value %q (want sha256 or sha512)", c.Policy.HashAlgo)
	}
	switch c.Policy.MaskDialect {
	case "hive", "spark":
	default:
		bad("policy.mask-dialect", "unknown value %q (want hive or spark)", c.Policy.MaskDialect)
	}
	switch c.Policy.DMLRowFilter {
	case "deny", "apply":
	default:
		bad("policy.dml-row-filter", "unknown value %q (want deny or apply)", c.Policy.DMLRowFilter)
	}
	positive("policy.rewrite-cache-mb", c.Policy.RewriteCacheMB)
	validateAllowedSettings(c.Policy.AllowedSettings, bad)
	positive("audit.buffer-size", c.Audit.BufferSize)
	checkAddr("admin.addr", c.Admin.Addr, true)
	if c.Admin.Addr != "" && !c.Admin.AllowRemote {
		if host, _, err := net.SplitHostPort(c.Admin.Addr); err == nil && !IsLoopbackHost(host) {
			bad("admin.addr", "%q is not a loopback address; /metrics and POST /refresh would be reachable from other hosts: set admin.allow-remote = true (with a bearer token) to allow that", c.Admin.Addr)
		}
	}
	if (c.Admin.TLSCert == "") != (c.Admin.TLSKey == "") {
		bad("admin.tls-cert", "tls-cert and tls-key must be set together")
	}
	if c.Admin.Token != "" && c.Admin.TokenFile != "" {
		bad("admin.token-file", "set either PGRANGER_ADMIN__TOKEN or admin.token-file, not both")
	}
	if c.Admin.AllowRemote && c.Admin.Token == "" && c.Admin.TokenFile == "" {
		bad("admin.allow-remote", "a remotely reachable admin endpoint needs a bearer token: set PGRANGER_ADMIN__TOKEN or admin.token-file")
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "unknown level %q (want debug, info, warn or error)", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		bad("log.format", "unknown format %q (want text or json)", c.Log.Format)
	}
	return errors.Join(errs...)
}

func (c *Config) validateRanger(bad func(key, format string, args ...any)) {
	r := c.Policy.Ranger
	urls := r.URLs()
	if len(urls) == 0 {
		bad("policy.ranger.url", "must name at least one Ranger Admin URL when policy.source = \"ranger\"")
	}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		switch {
		case err != nil:
			bad("policy.ranger.url", "%q: %v", raw, err)
		case u.Scheme != "http" && u.Scheme != "https":
			bad("policy.ranger.url", "%q: must be an http:// or https:// URL", raw)
		case u.Host == "":
			bad("policy.ranger.url", "%q: has no host", raw)
		case u.User != nil:
			bad("policy.ranger.url", "%q: must not carry credentials; use policy.ranger.admin-user and the password variable or file", u.Redacted())
		case u.RawQuery != "" || u.Fragment != "":
			bad("policy.ranger.url", "%q: must be a base URL without query or fragment", raw)
		}
	}
	if r.AdminUser == "" {
		bad("policy.ranger.admin-user", "must be set (the user Ranger's secure download endpoints authenticate)")
	}
	switch {
	case r.AdminPassword != "" && r.AdminPasswordFile != "":
		bad("policy.ranger.admin-password-file", "set either PGRANGER_POLICY__RANGER__ADMIN_PASSWORD or admin-password-file, not both")
	case r.AdminPassword == "" && r.AdminPasswordFile == "":
		bad("policy.ranger.admin-password", "no password: set PGRANGER_POLICY__RANGER__ADMIN_PASSWORD or policy.ranger.admin-password-file")
	}
	positive := func(key string, v int) {
		if v <= 0 {
			bad(key, "must be greater than 0, got %d", v)
		}
	}
	positive("policy.ranger.timeout-secs", r.TimeoutSecs)
	positive("policy.ranger.poll-interval-secs", r.PollIntervalSecs)
	if r.PollIntervalMS < 0 {
		bad("policy.ranger.poll-interval-ms", "must be 0 (use poll-interval-secs) or positive, got %d", r.PollIntervalMS)
	}
	if (r.ClientCert == "") != (r.ClientKey == "") {
		bad("policy.ranger.client-cert", "client-cert and client-key must be set together")
	}
	positive("policy.ranger.breaker-failures", r.BreakerFailures)
	positive("policy.ranger.breaker-max-backoff-secs", r.BreakerMaxBackoffSecs)
	if poll := r.PollInterval(); c.Policy.CacheTTLSecs > 0 && poll > 0 && time.Duration(c.Policy.CacheTTLSecs)*time.Second <= poll {
		bad("policy.cache-ttl-secs", "%d s is not longer than the Ranger poll interval (%s): policies would expire between two refreshes", c.Policy.CacheTTLSecs, poll)
	}
}

// IsLoopbackHost reports whether host (from host:port) can only be reached
// from this machine: "localhost" or a loopback IP. "" (all interfaces) is not.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
