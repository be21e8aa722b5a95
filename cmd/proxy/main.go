// Command pgranger is a PostgreSQL-wire proxy that enforces Apache Ranger
// policies (access, row filters, column masks) by rewriting every statement.
//
//	pgranger serve --config FILE
//	pgranger check --config FILE --user U [--groups a,b] [--roles a,b] [--attr k=v ...] [--catalog FILE] "SQL"
//	pgranger test [-v] [--config FILE] FILE...
//	pgranger lint [--strict] POLICIES.json
//	pgranger masks --stored-ddl --config FILE [--database D] [--catalog FILE]
//	pgranger policy export|diff|sync --config FILE --dir DIR [--dry-run] [--prune]
//	pgranger healthcheck [--url URL]
//	pgranger version
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pgranger/pgranger/audit"
	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/identity"
	"github.com/pgranger/pgranger/metrics"
	"github.com/pgranger/pgranger/pgwire"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/policystate"
	"github.com/pgranger/pgranger/sqlrewrite"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stderr)
	case "check":
		return checkCommand(args[1:], stdout, stderr)
	case "test":
		return testCommand(args[1:], stdout, stderr)
	case "lint":
		return lintCommand(args[1:], stdout, stderr)
	case "policy":
		return policyCommand(args[1:], stdout, stderr)
	case "masks":
		return masksCommand(args[1:], stdout, stderr)
	case "healthcheck":
		return healthcheckCommand(args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, versionString())
		return 0
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "pgranger: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `pgranger — a PostgreSQL proxy that enforces Apache Ranger policies

Usage:
  pgranger serve --config FILE   run the proxy
  pgranger check --config FILE --user U [--groups a,b] [--roles a,b] [--attr k=v ...] [--catalog FILE] "SQL"
                                 show the decision per relation and the rewritten SQL, without running it
  pgranger test [-v] [--config FILE] FILE...
                                 run Ranger policy-engine test files (.json) and decision tables (.yaml)
  pgranger lint [--strict] POLICIES.json    report risky or broken policies: errors (public on wildcards, undeclared mask types) exit 1; warnings (no owner label, …) only with --strict
  pgranger masks --stored-ddl --config FILE [--database D] [--catalog FILE]
                                 print ALTER TABLE statements adding stored columns for the policies' masks
  pgranger policy export|diff|sync --config FILE --dir DIR [--dry-run] [--prune]
                                 policies as code: one JSON file per policy; diff exits 1 when not in step;
                                 sync writes creates and updates (labelled managed-by:pgranger), --prune deletes
                                 drifted ones it manages
  pgranger healthcheck [--url URL]
                                 exit 0 when the admin endpoint's /readyz answers 200 (container health checks)
  pgranger version               print the version

Configuration keys can be overridden with PGRANGER_<SECTION>__<KEY>
environment variables (PGRANGER_BACKEND__DSN=…); see docs/configuration.md.
`)
}

func versionString() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (" + s.Value[:12] + ")"
			}
		}
		return fmt.Sprintf("pgranger %s %s", v, bi.GoVersion)
	}
	return "pgranger " + v
}

func serve(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "path to the TOML configuration file (required)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the serving process to this file (performance work)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cfgPath == "" {
		fmt.Fprintln(stderr, "pgranger serve: --config FILE is required")
		return 2
	}
	cfg, err := config.Load(*cfgPath, os.Environ())
	if err != nil {
		fmt.Fprintf(stderr, "pgranger: %v\n", err)
		return 1
	}
	log, level := newLogger(cfg.Log, stderr)
	defer startCPUProfile(log, *cpuProfile)()

	auth, err := identity.New(cfg.Identity)
	if err != nil {
		log.Error("identity", "err", err)
		return 1
	}
	auditLog, err := audit.Open(cfg.Audit.Path, cfg.Audit.BufferSize)
	if err != nil {
		log.Error("audit.path", "err", err)
		return 1
	}
	defer auditLog.Close()

	// SIGTERM and SIGINT start a graceful shutdown (below); ctx lives
	// until it is over, so policies keep refreshing and the admin
	// endpoint keeps answering (/readyz 503) while sessions drain.
	stopSig := make(chan os.Signal, 2)
	signal.Notify(stopSig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(stopSig)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	if cfg.Identity.Mode.Has("jwt") {
		// The issuer's keys are fetched ahead of the first token login;
		// an issuer that does not answer yet is retried at login time.
		go func() {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Duration(cfg.Identity.JWT.TimeoutSecs)*time.Second)
			defer cancel()
			if err := auth.Prime(pctx); err != nil {
				log.Warn("identity.jwt: the issuer's signing keys could not be fetched; token logins fail until they can", "issuer", cfg.Identity.JWT.Issuer, "err", err)
				return
			}
			log.Info("identity.jwt: issuer signing keys loaded", "issuer", cfg.Identity.JWT.Issuer)
		}()
	}

	holder := policystate.New(policy.Options{MaskPrecedence: cfg.Policy.MaskPrecedence},
		time.Duration(cfg.Policy.CacheTTLSecs)*time.Second, log)
	// policy.source = "file" or "ranger" (sources.go): loaded before the
	// proxy listens, refreshed in the background; queries only read holder.
	policies, err := startPolicySource(ctx, cfg, holder, log)
	if err != nil {
		log.Error("policy source", "err", err)
		return 1
	}
	rw := sqlrewrite.New(sqlrewrite.Options{
		MaxStatementBytes: cfg.Listen.MaxStatementBytes,
		MaxNestingDepth:   cfg.Listen.MaxNestingDepth,
		NamespaceMapping:  cfg.Policy.NamespaceMapping,
		Mask:              sqlrewrite.MaskOptions{HashAlgo: cfg.Policy.HashAlgo, Dialect: cfg.Policy.MaskDialect},
		DMLRowFilter:      cfg.Policy.DMLRowFilter,
		AllowDDL:          cfg.Policy.AllowDDL,
		AllowedSettings:   cfg.Policy.AllowedSettings,
		CacheBytes:        int64(cfg.Policy.RewriteCacheMB) << 20,
		CacheStats:        true, // pgranger_rewrite_cache_hits_total / _misses_total
	})
	srv := pgwire.NewServer(pgwire.Options{Config: cfg, Auth: auth, Rewriter: rw, Policies: holder, Audit: auditLog, Log: log,
		Author: newAuthor(cfg, holder, policies, log)})

	token, err := adminToken(cfg.Admin)
	if err != nil {
		log.Error("admin", "err", err)
		return 1
	}
	var adminTok atomic.Pointer[string]
	adminTok.Store(&token)
	reloads := &metrics.ReloadCounters{}
	probe := &backendProbe{dsn: cfg.Backend.DSN, log: log}
	collector := &metrics.ProxyCollector{Version: version, Server: srv, Rewriter: rw, Audit: auditLog, Reloads: reloads, Backend: probe.check}
	if _, err := startAdmin(ctx, cfg, holder, policies, log, adminOptions{
		token: func() string { return *adminTok.Load() }, backend: probe.check, collector: collector,
		draining: srv.Draining,
	}); err != nil {
		log.Error("admin.addr", "err", err)
		return 1
	}

	// SIGHUP: re-read the configuration, reopen the audit file.
	rl := &reloader{cfg: cfg, path: *cfgPath, auth: auth, srv: srv, audit: auditLog, holder: holder, level: level,
		token: &adminTok, counters: reloads, log: log}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				log.Info("SIGHUP: reloading the configuration", "config", *cfgPath)
				rl.reload()
			}
		}
	}()

	ln, err := net.Listen("tcp", cfg.Listen.Addr)
	if err != nil {
		log.Error("listen.addr", "err", err)
		return 1
	}
	// How deeply a statement may nest follows the C stack (ulimit -s):
	// worth knowing when a deep one is refused with 54001.
	nesting := sqlrewrite.CurrentNestingLimits()
	log.Info("pgranger listening", "addr", ln.Addr().String(), "version", version,
		"parse-tree-levels", nesting.TreeLevels, "c-stack-bytes", nesting.StackBytes)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	var sig os.Signal
	select {
	case err := <-served:
		log.Error("serve", "err", err)
		return 1
	case sig = <-stopSig:
	}
	drain(srv, sig, stopSig, time.Duration(cfg.Listen.ShutdownTimeoutSecs)*time.Second, log)
	<-served
	return 0
}

// drain runs the graceful shutdown: no new connections, running
// statements get up to timeout (listen.shutdown-timeout-secs) to finish,
// idle sessions end at once with 57P01 (pgwire.Server.Shutdown). A second
// signal ends the wait.
func drain(srv *pgwire.Server, sig os.Signal, more <-chan os.Signal, timeout time.Duration, log *slog.Logger) {
	log.Info("shutting down: no new connections; running statements may finish, idle sessions end",
		"signal", sig.String(), "shutdown_timeout", timeout.String())
	start := time.Now()
	dctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	go func() {
		select {
		case s := <-more:
			log.Info("second signal: ending the remaining sessions now", "signal", s.String())
			cancel()
		case <-dctx.Done():
		}
	}()
	srv.Shutdown(dctx)
	log.Info("pgranger stopped: every session has ended", "took", time.Since(start).Round(time.Millisecond).String())
}

// newLogger builds the process log (log.format, log.level). The level is
// a LevelVar so a reload can change it.
func newLogger(c config.Log, w io.Writer) (*slog.Logger, *slog.LevelVar) {
	level := new(slog.LevelVar)
	var l slog.Level
	l.UnmarshalText([]byte(c.Level))
	level.Set(l)
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), level
	}
	return slog.New(slog.NewTextHandler(w, opts)), level
}
