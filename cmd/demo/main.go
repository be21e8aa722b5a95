// Command demo runs pgranger's local demo (`make demo`): a throwaway
// PostgreSQL cluster with the sample data of examples/demo, and the built
// pgranger binary in front of it with examples/pgranger.toml. It prints the
// psql lines to try and stops everything it started — pgranger, then the
// cluster, whose directory it removes — on Ctrl-C, SIGTERM or SIGHUP.
//
// Before it starts anything it checks every port it needs (pgranger's
// listen and admin ports) and names the ones in use. Its output may go to a
// pipe that closes early (`make demo | head -1`): writes to a closed stdout
// are ignored instead of killing the process, so the clean-up still runs.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pgranger/pgranger/internal/testpg"
)

// out is stdout, written without ever failing or stopping the demo: once
// a reader has gone, what the demo and pgranger print is dropped.
var out io.Writer = lenient{os.Stdout}

type lenient struct{ w io.Writer }

func (l lenient) Write(p []byte) (int, error) {
	l.w.Write(p)
	return len(p), nil
}

func say(format string, args ...any) { fmt.Fprintf(out, format, args...) }

func main() {
	bin := flag.String("pgranger", "bin/pgranger", "the pgranger binary")
	cfg := flag.String("config", "examples/pgranger.toml", "pgranger configuration")
	schema := flag.String("schema", "examples/demo/schema.sql", "sample data")
	addr := flag.String("listen", "127.0.0.1:6432", "address pgranger listens on (make demo PORT=…)")
	admin := flag.String("admin", "127.0.0.1:9432", "pgranger's admin address (make demo ADMIN_PORT=…); port 0 picks a free one")
	flag.Parse()

	// A write to a closed stdout raises SIGPIPE, which kills a Go program
	// unless it asks for the signal; asked for, the write fails with EPIPE
	// (ignored by out) and the demo lives to clean up.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if err := run(ctx, *bin, *cfg, *schema, *addr, *admin); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

// checkPorts tries every address the demo will listen on and returns the
// admin address to use (a free port when admin's port is 0), or an error
// naming each address that is in use and how to choose another.
func checkPorts(addr, admin string) (string, error) {
	var busy []string
	if l, err := net.Listen("tcp", addr); err != nil {
		busy = append(busy, fmt.Sprintf("%s (pgranger's PostgreSQL port) is in use: %v; choose another with make demo PORT=<port>", addr, errors.Unwrap(err)))
	} else {
		l.Close()
	}
	if l, err := net.Listen("tcp", admin); err != nil {
		busy = append(busy, fmt.Sprintf("%s (pgranger's admin port) is in use: %v; choose another with make demo ADMIN_PORT=<port> (0 picks a free one)", admin, errors.Unwrap(err)))
	} else {
		admin = l.Addr().String()
		l.Close()
	}
	if len(busy) > 0 {
		return "", errors.New(strings.Join(busy, "\n      "))
	}
	return admin, nil
}

func run(ctx context.Context, bin, cfg, schemaPath, addr, admin string) error {
	admin, err := checkPorts(addr, admin)
	if err != nil {
		return err
	}
	schema, err := os.ReadFile(schemaPath)
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return err
	}

	// The set-up does not take ctx: a signal during initdb or pg_ctl start
	// must not leave a half-started server behind. It is honoured once the
	// cluster is up, and the deferred clean-up stops it.
	say("Starting a throwaway PostgreSQL cluster …\n")
	setup, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := testpg.New(setup)
	if err != nil {
		return err
	}
	defer func() {
		say("Stopping PostgreSQL and removing %s\n", c.Dir)
		c.Stop()
	}()
	if ctx.Err() != nil {
		return nil
	}
	if err := c.CreateDatabase(setup, "demo"); err != nil {
		return err
	}
	if err := c.Exec(setup, "demo", string(schema)); err != nil {
		return fmt.Errorf("loading %s: %w", schemaPath, err)
	}
	if ctx.Err() != nil {
		return nil
	}

	// Authoring (GRANT, CREATE POLICY, …) writes to the policy file: the
	// demo's copy in the cluster's directory, so the repository's example
	// stays as it is and the writes go with the cluster.
	policies, err := copyPolicies(cfg, c.Dir)
	if err != nil {
		return err
	}
	absCfg, _ := filepath.Abs(cfg)
	cmd := exec.Command(bin, "serve", "--config", absCfg)
	cmd.Env = append(os.Environ(),
		"PGRANGER_LISTEN__ADDR="+addr,
		"PGRANGER_ADMIN__ADDR="+admin,
		"PGRANGER_BACKEND__DSN="+c.DSN("pgranger_svc", "pgranger_svc", "demo"),
		"PGRANGER_AUDIT__PATH="+filepath.Join(c.Dir, "audit.jsonl"),
		"PGRANGER_POLICY__FILE__POLICIES="+policies,
		"PGRANGER_POLICY__FILE__TAGS="+filepath.Join(filepath.Dir(policies), "tags.json"),
	)
	// pgranger's output goes through the demo (not straight to its
	// stdout), so a closed pipe cannot kill pgranger either.
	cmd.Stdout, cmd.Stderr = out, lenient{os.Stderr}
	// Its own process group: Ctrl-C reaches the demo, which stops it in
	// order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var once sync.Once
	stopPgranger := func() {
		once.Do(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-exited
			}
			say("pgranger stopped.\n")
		})
	}
	defer stopPgranger()
	if err := waitListening(ctx, addr, exited); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}

	say(`
pgranger is running on %[1]s in front of PostgreSQL on 127.0.0.1:%[2]d.
Policies: %[6]s
          (a copy of examples/policies/hive.json: edit it, or GRANT as alice; changes apply at once)
Audit log: %[3]s
Admin:     http://%[5]s/metrics, /readyz

Try, in another terminal:

  psql "postgres://bob:bob@%[1]s/demo"       # US analyst: masked SSN/email, US rows only
  psql "postgres://carol:carol@%[1]s/demo"   # EU support: no amounts, EU rows, no HR data
  psql "postgres://alice:alice@%[1]s/demo"   # compliance: exempt (MASK_NONE), every row

  SELECT id, ssn, email, amount, region FROM sales.orders;
  SELECT id, name, email, salary FROM hr.employees;
  GRANT SELECT ON hr.departments TO GROUP analysts;   -- as alice: then bob reads hr.departments

Compare with the raw data, straight to PostgreSQL (bypassing pgranger):

  psql "postgres://postgres:%[4]s@127.0.0.1:%[2]d/demo" -c "TABLE sales.orders"

Press Ctrl-C to stop everything.
`, addr, c.Port, filepath.Join(c.Dir, "audit.jsonl"), testpg.SuperPassword, admin, policies)

	select {
	case <-ctx.Done():
		say("\n")
		return nil
	case err := <-exited:
		exited <- err
		return fmt.Errorf("pgranger exited: %v", err)
	}
}

// copyPolicies copies the demo configuration's policy file (policies/hive.json
// beside it, as examples/pgranger.toml names it) into dir/policies
// with an empty tag file beside it, and returns the copy's path.
func copyPolicies(cfg, dir string) (string, error) {
	src := filepath.Join(filepath.Dir(cfg), "policies", "hive.json")
	data, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	var doc struct {
		ServiceName string `json:"serviceName"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return "", fmt.Errorf("%s: %w", src, err)
	}
	pdir := filepath.Join(dir, "policies")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		return "", err
	}
	dst := filepath.Join(pdir, "hive.json")
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		return "", err
	}
	tags := fmt.Sprintf("{\"serviceName\": %q, \"tagVersion\": 1}\n", doc.ServiceName)
	return dst, os.WriteFile(filepath.Join(pdir, "tags.json"), []byte(tags), 0o644)
}

func waitListening(ctx context.Context, addr string, exited chan error) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("pgranger exited during startup: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("pgranger did not start listening on %s", addr)
}
