// Command demo runs pgranger's local demo (`make demo`): a throwaway
// PostgreSQL cluster with the sample data of examples/demo, and the built
// pgranger binary in front of it with examples/pgranger.toml. It prints the
// psql lines to try and stops everything it started on Ctrl-C.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/pgranger/pgranger/internal/testpg"
)

func main() {
	bin := flag.String("pgranger", "bin/pgranger", "the pgranger binary")
	cfg := flag.String("config", "examples/pgranger.toml", "pgranger configuration")
	schema := flag.String("schema", "examples/demo/schema.sql", "sample data")
	addr := flag.String("listen", "127.0.0.1:6432", "address pgranger listens on")
	flag.Parse()
	if err := run(*bin, *cfg, *schema, *addr); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

func run(bin, cfg, schemaPath, addr string) error {
	if l, err := net.Listen("tcp", addr); err != nil {
		return fmt.Errorf("%s is not free (is another pgranger or pgbouncer running?): %w", addr, err)
	} else {
		l.Close()
	}
	schema, err := os.ReadFile(schemaPath)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	fmt.Println("Starting a throwaway PostgreSQL cluster …")
	setup, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	c, err := testpg.New(setup)
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("Stopping PostgreSQL and removing", c.Dir)
		c.Stop()
	}()
	if err := c.CreateDatabase(setup, "demo"); err != nil {
		return err
	}
	if err := c.Exec(setup, "demo", string(schema)); err != nil {
		return fmt.Errorf("loading %s: %w", schemaPath, err)
	}

	absCfg, _ := filepath.Abs(cfg)
	cmd := exec.Command(bin, "serve", "--config", absCfg)
	cmd.Env = append(os.Environ(),
		"PGRANGER_LISTEN__ADDR="+addr,
		"PGRANGER_BACKEND__DSN="+c.DSN("pgranger_svc", "pgranger_svc", "demo"),
		"PGRANGER_AUDIT__PATH="+filepath.Join(c.Dir, "audit.jsonl"),
	)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	// Its own process group: Ctrl-C reaches us, and we stop it in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		fmt.Println("pgranger stopped.")
	}()
	if err := waitListening(ctx, addr, exited); err != nil {
		return err
	}

	fmt.Printf(`
pgranger is running on %[1]s in front of PostgreSQL on 127.0.0.1:%[2]d.
Policies: examples/policies/hive.json (edit it: changes apply within a second).
Audit log: %[3]s

Try, in another terminal:

  psql "postgres://bob:bob@%[1]s/demo"       # US analyst: masked SSN/email, US rows only
  psql "postgres://carol:carol@%[1]s/demo"   # EU support: no amounts, EU rows, no HR data
  psql "postgres://alice:alice@%[1]s/demo"   # compliance: exempt (MASK_NONE), every row

  SELECT id, ssn, email, amount, region FROM sales.orders;
  SELECT id, name, email, salary FROM hr.employees;

Compare with the raw data, straight to PostgreSQL (bypassing pgranger):

  psql "postgres://postgres:%[4]s@127.0.0.1:%[2]d/demo" -c "TABLE sales.orders"

Press Ctrl-C to stop everything.
`, addr, c.Port, filepath.Join(c.Dir, "audit.jsonl"), testpg.SuperPassword)

	select {
	case <-ctx.Done():
		fmt.Println()
		return nil
	case err := <-exited:
		exited <- err
		return fmt.Errorf("pgranger exited: %v", err)
	}
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
