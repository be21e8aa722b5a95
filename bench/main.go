// Command bench measures pgranger against direct PostgreSQL and pgbouncer
// in one run on one machine, and reports ratios (docs/performance.md: these
// machines are noisy, so a lone absolute number means little).
//
//	go run ./bench                 # 30 s per run, 3 repetitions, 8 and 32 clients
//	go run ./bench -duration 5s -repeat 1 -clients 8   # a quick look
//	go run ./bench -tpch -tpch-scale 0.1               # TPC-H: governed vs physical copies
//
// It starts a throwaway PostgreSQL cluster, loads pgbench's tables and a
// governed copy, runs pgbouncer (session pooling) and the built pgranger
// binary in front of it, and runs pgbench against each, interleaved, so all
// three share the same machine conditions. Everything listens on loopback
// and stops by itself.
package main

import (
	"bufio"
	"cmp"
	"context"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgranger/pgranger/internal/testpg"
)

func main() {
	duration := flag.Duration("duration", 30*time.Second, "length of each pgbench run")
	repeat := flag.Int("repeat", 3, "repetitions of every run (medians are reported)")
	clientsFlag := flag.String("clients", "8,32", "pgbench client counts")
	scale := flag.Int("scale", 10, "pgbench scale factor")
	bin := flag.String("pgranger", "bin/pgranger", "the pgranger binary (make build)")
	flag.IntVar(&idleClients, "idle", 1000, "idle client connections to hold through pgranger for the memory measurement (0: skip)")
	flag.StringVar(&onlyWorkloads, "only", "", "run only the workloads whose name contains this text")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write pgranger's CPU profile to this file (serve --cpuprofile)")
	flag.DurationVar(&soakFor, "soak", 0, "instead of the workloads: a mixed load through pgranger for this long (e.g. 10m), sampling its RSS, to show memory stays flat after warm-up")
	flag.StringVar(&variantEnv, "variant", "", "also run every workload through a pgranger started with these space-separated NAME=value environment settings (pgranger-variant), e.g. -variant GOMAXPROCS=1")
	flag.BoolVar(&holdTargets, "hold", false, "after setting up, print every target's port and process id and wait for Ctrl-C instead of running pgbench (to profile or trace one by hand)")
	flag.BoolVar(&unixTargets, "unix", false, "also run select-only over PostgreSQL's Unix-domain socket: direct-unix (pgbench on the socket), pgbouncer-unix and pgranger-unix (their backend connections on the socket; clients still on loopback TCP), interleaved with the loopback targets; their ratios are to direct-unix and pgbouncer-unix")
	flag.StringVar(&baseline, "baseline", "", "a second pgranger binary (an earlier build) measured as the target pgranger-baseline, interleaved with the others: an A/B of a change on a noisy machine")
	tpchMode := flag.Bool("tpch", false, "instead of the pgbench workloads: the 22 TPC-H queries through pgranger against the same queries on physical filtered-and-masked copies (bench/tpch.go)")
	flag.Float64Var(&tpchScale, "tpch-scale", 0.1, "TPC-H scale factor for -tpch (1 = 6 million lineitems)")
	flag.IntVar(&tpchRuns, "tpch-runs", 5, "timed runs of every query and target for -tpch (medians are reported)")
	flag.BoolVar(&tpchStoredMasks, "tpch-stored-masks", false, "for -tpch: add the stored-mask columns (pgranger masks --stored-ddl) to the source tables before timing; the copies stay as they are")
	flag.DurationVar(&tpchTimeout, "tpch-timeout", 5*time.Minute, "the longest one -tpch run of a query may take")
	flag.BoolVar(&tpchHold, "tpch-hold", false, "with -tpch: after loading and building the copies, print how to connect to pgranger and to the copies and wait for Ctrl-C instead of timing (to EXPLAIN a query by hand)")
	flag.Parse()
	if *tpchMode {
		if err := runTPCH(*bin); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*duration, *repeat, *clientsFlag, *scale, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type target struct {
	name, port, user, password string
	host                       string // pgbench's -h: "" is 127.0.0.1, a directory is a Unix-domain socket
	script                     string // replaces the workload's -f script, when set
	pgid                       int    // the proxy's process group, whose CPU time is measured (0: none)
}

type result struct {
	tps   float64
	p99ms float64
	avgms float64
	// cpuus is the proxy's CPU time (user + system) per transaction in
	// microseconds: what the proxy itself costs, which the noise of a
	// shared machine moves far less than TPS.
	cpuus float64
}

// Set by flags.
var (
	onlyWorkloads, cpuProfile, baseline string
	variantEnv                          string
	soakFor                             time.Duration
	idleClients                         int
	unixTargets, holdTargets            bool
)

func run(duration time.Duration, repeat int, clientsFlag string, scale int, bin string) error {
	for _, tool := range []string{"pgbench", "pgbouncer"} {
		if _, err := exec.LookPath(tool); err != nil {
			if _, err := os.Stat("/usr/sbin/" + tool); err != nil {
				return fmt.Errorf("%s not found (apt-get install postgresql-contrib pgbouncer)", tool)
			}
		}
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s not found: run make build first", bin)
	}
	ctx := context.Background()
	fmt.Println("starting PostgreSQL …")
	// The idle clients, and room for the connections every proxy target
	// keeps in its pool after the 32-client runs.
	c, err := testpg.NewWith(ctx, testpg.Options{MaxConnections: idleClients + 300})
	if err != nil {
		return err
	}
	defer c.Stop()
	if err := c.CreateDatabase(ctx, "bench"); err != nil {
		return err
	}
	pgPort := strconv.Itoa(c.Port)
	env := append(os.Environ(), "PGPASSWORD="+testpg.SuperPassword)
	initCmd := exec.Command("pgbench", "-q", "-i", "-s", strconv.Itoa(scale), "-h", "127.0.0.1", "-p", pgPort, "-U", "postgres", "bench")
	initCmd.Env = env
	if out, err := initCmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgbench -i: %v\n%s", err, out)
	}
	if err := c.Exec(ctx, "bench", setupSQL); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "pgranger-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)

	rangerPort, rangerPID, stopRanger, err := startPgranger(bin, dir, c, cpuProfile)
	if err != nil {
		return err
	}
	defer stopRanger()
	bouncerPort, bouncerPgid, stopBouncer, err := startPgbouncer(dir, pgPort)
	if err != nil {
		return err
	}
	defer stopBouncer()

	script := filepath.Join(dir, "governed.sql")
	os.WriteFile(script, []byte(governedScript(scale)), 0o644)
	// The same statement as pgranger sends it, direct, over a permanent
	// copy of pgranger's security-barrier view: what PostgreSQL itself
	// spends on the mask and the row filter, apart from the proxy.
	rewrittenScript, err := rewrittenGoverned(ctx, bin, dir, c, scale)
	if err != nil {
		return err
	}

	direct := target{"direct", pgPort, "postgres", testpg.SuperPassword, "", "", 0}
	bouncer := target{"pgbouncer", bouncerPort, "postgres", testpg.SuperPassword, "", "", bouncerPgid}
	ranger := target{"pgranger", rangerPort, "bench", "bench", "", "", rangerPID}
	directRewritten := target{"direct-rewritten", pgPort, "postgres", testpg.SuperPassword, "", rewrittenScript, 0}
	rangers := []target{ranger}
	if baseline != "" {
		bdir := filepath.Join(dir, "baseline")
		os.Mkdir(bdir, 0o755)
		port, pid, stop, err := startPgranger(baseline, bdir, c, "")
		if err != nil {
			return fmt.Errorf("-baseline: %w", err)
		}
		defer stop()
		rangers = append(rangers, target{"pgranger-baseline", port, "bench", "bench", "", "", pid})
	}
	var extra []target
	if variantEnv != "" {
		vdir := filepath.Join(dir, "variant")
		os.Mkdir(vdir, 0o755)
		port, pid, stop, err := launchPgranger(bin, vdir, []byte(benchPolicies), c.DSN("pgranger_svc", "pgranger_svc", "bench"), benchUsers, "",
			strings.Fields(variantEnv)...)
		if err != nil {
			return fmt.Errorf("-variant: %w", err)
		}
		defer stop()
		extra = append(extra, target{"pgranger-variant", port, "bench", "bench", "", "", pid})
	}
	var unix []target
	if unixTargets {
		// The same three over the socket in the cluster's directory:
		// what the backend transport costs each, in the same run.
		udir := filepath.Join(dir, "unix")
		os.Mkdir(udir, 0o755)
		socketDSN := fmt.Sprintf("postgres://pgranger_svc:pgranger_svc@/bench?host=%s&port=%d&sslmode=disable", url.QueryEscape(c.Dir), c.Port)
		rport, rpid, stopR, err := launchPgranger(bin, udir, []byte(benchPolicies), socketDSN, benchUsers, "")
		if err != nil {
			return fmt.Errorf("-unix: %w", err)
		}
		defer stopR()
		bdir := filepath.Join(dir, "unix-bouncer")
		os.Mkdir(bdir, 0o755)
		bport, bpgid, stopB, err := startPgbouncerOn(bdir, c.Dir, pgPort)
		if err != nil {
			return fmt.Errorf("-unix: %w", err)
		}
		defer stopB()
		unix = []target{
			{"direct-unix", pgPort, "postgres", testpg.SuperPassword, c.Dir, "", 0},
			{"pgbouncer-unix", bport, "postgres", testpg.SuperPassword, "", "", bpgid},
			{"pgranger-unix", rport, "bench", "bench", "", "", rpid},
		}
	}

	type workload struct {
		name    string
		args    []string
		targets []target
	}
	workloads := []workload{
		{"select-only -M prepared (ungoverned for the user)", []string{"-S", "-M", "prepared"}, append(append(append([]target{direct, bouncer}, rangers...), extra...), unix...)},
		{"select-only -M extended (ungoverned for the user)", []string{"-S", "-M", "extended"}, append(append([]target{direct, bouncer}, rangers...), extra...)},
		{"select-only -M simple (ungoverned for the user)", []string{"-S", "-M", "simple"}, append(append([]target{direct, bouncer}, rangers...), extra...)},
		{"governed table, mask + row filter, -M prepared", []string{"-f", script, "-M", "prepared"}, append(append([]target{direct, directRewritten}, rangers...), extra...)},
		{"governed table, mask + row filter, -M simple", []string{"-f", script, "-M", "simple"}, append(append([]target{direct, directRewritten}, rangers...), extra...)},
	}
	if soakFor > 0 {
		return soak(env, dir, ranger, script, soakFor)
	}
	if holdTargets {
		return hold(workloads[0].targets, script)
	}
	var clients []int
	for _, s := range strings.Split(clientsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("-clients: %v", err)
		}
		clients = append(clients, n)
	}

	fmt.Printf("\npgbench, %s per run, %d repetitions (median), scale %d, on %s\n", duration, repeat, scale, hostDesc())
	fmt.Println("\n| workload | clients | target | TPS | avg ms | p99 ms | ratio to direct | ratio to pgbouncer | proxy CPU µs/txn |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	rssAfter := []string{fmt.Sprintf("start %.1f", rssMB(rangerPID))}
	for _, w := range workloads {
		if !strings.Contains(w.name, onlyWorkloads) {
			continue
		}
		for _, n := range clients {
			runs := map[string][]result{}
			for r := 0; r < repeat; r++ {
				for _, t := range w.targets { // interleaved, so drift hits all alike
					res, err := pgbench(env, dir, t, n, duration, w.args)
					if err != nil {
						return fmt.Errorf("%s %s: %w", w.name, t.name, err)
					}
					runs[t.name] = append(runs[t.name], res)
				}
			}
			for _, t := range w.targets {
				// A -unix target compares with direct-unix and pgbouncer-unix.
				suffix := ""
				if strings.HasSuffix(t.name, "-unix") {
					suffix = "-unix"
				}
				base := median(runs["direct"+suffix])
				m := median(runs[t.name])
				vsBouncer := "–"
				if b, ok := runs["pgbouncer"+suffix]; ok && t.name != "pgbouncer"+suffix && t.name != "direct"+suffix {
					vsBouncer = fmt.Sprintf("%.2f", m.tps/median(b).tps)
				}
				cpu := "–"
				if t.pgid != 0 {
					cpu = fmt.Sprintf("%.1f", m.cpuus)
				}
				fmt.Printf("| %s | %d | %s | %.0f | %.3f | %.3f | %.2f | %s | %s |\n", w.name, n, t.name, m.tps, m.avgms, m.p99ms, m.tps/base.tps, vsBouncer, cpu)
			}
			rssAfter = append(rssAfter, fmt.Sprintf("%.1f", rssMB(rangerPID)))
		}
	}
	// Memory after each workload: growth after warm-up would show here.
	fmt.Printf("\npgranger RSS (MB) at the start and after each workload and client count: %s\n", strings.Join(rssAfter, ", "))
	if idleClients > 0 {
		if err := idleMemory(ctx, rangerPort, rangerPID, idleClients); err != nil {
			return err
		}
	}
	return nil
}

const setupSQL = `
CREATE ROLE pgranger_svc LOGIN PASSWORD 'pgranger_svc';
CREATE SCHEMA gov;
CREATE TABLE gov.accounts AS
  SELECT aid, bid, abalance, lpad((aid::bigint * 7919 % 1000000000)::text, 9, '0') AS ssn FROM pgbench_accounts;
ALTER TABLE gov.accounts ADD PRIMARY KEY (aid);
ANALYZE gov.accounts;
GRANT USAGE ON SCHEMA public, gov TO pgranger_svc;
GRANT SELECT ON ALL TABLES IN SCHEMA public, gov TO pgranger_svc;
`

// governedScript reads one row by key from the governed table: ssn is
// masked (MASK_SHOW_LAST_4) and a row filter applies (it keeps every row,
// so the work compares like for like with the direct run).
func governedScript(scale int) string {
	return governedSelect(scale, "gov.accounts")
}

// rewrittenGoverned asks pgranger (check) for the statement it sends for
// the governed script's SELECT, and returns a script running that
// statement directly. The wrapper subquery is stored as a plain view
// (PostgreSQL expands a view into exactly that subquery): inline, the
// masks' regular expressions ([[:upper:]]) would read as pgbench
// variables.
func rewrittenGoverned(ctx context.Context, bin, dir string, c *testpg.Cluster, scale int) (string, error) {
	if abs, err := filepath.Abs(bin); err == nil {
		bin = abs
	}
	cmd := exec.Command(bin, "check", "--config", filepath.Join(dir, "pgranger.toml"), "--user", "bench",
		"SELECT aid, abalance, ssn FROM gov.accounts WHERE aid = 1")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("pgranger check: %v\n%s", err, out)
	}
	_, after, _ := strings.Cut(string(out), "rewritten SQL:\n")
	sent, _, _ := strings.Cut(after, "\n")
	body, ok := strings.CutPrefix(sent, "SELECT aid, abalance, ssn FROM (")
	body, found := strings.CutSuffix(body, ") accounts WHERE aid = 1")
	if !ok || !found {
		return "", fmt.Errorf("pgranger check printed no wrapper for gov.accounts:\n%s", out)
	}
	if err := c.Exec(ctx, "bench", "CREATE VIEW gov.pgranger_rewritten AS "+body); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "governed-rewritten.sql")
	return path, os.WriteFile(path, []byte(governedSelect(scale, "gov.pgranger_rewritten accounts")), 0o644)
}

func governedSelect(scale int, from string) string {
	return fmt.Sprintf("\\set aid random(1, %d)\nSELECT aid, abalance, ssn FROM %s WHERE aid = :aid;\n", 100000*scale, from)
}

const benchPolicies = `{"serviceName": "bench", "policyVersion": 1, "policies": [
 {"id": 1, "name": "read all", "resources": {"database": {"values": ["public", "gov"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
  "policyItems": [{"accesses": [{"type": "select"}], "users": ["bench"]}]},
 {"id": 2, "name": "mask ssn", "policyType": 1, "resources": {"database": {"values": ["gov"]}, "table": {"values": ["accounts"]}, "column": {"values": ["ssn"]}},
  "dataMaskPolicyItems": [{"accesses": [{"type": "select"}], "users": ["bench"], "dataMaskInfo": {"dataMaskType": "MASK_SHOW_LAST_4"}}]},
 {"id": 3, "name": "filter", "policyType": 2, "resources": {"database": {"values": ["gov"]}, "table": {"values": ["accounts"]}},
  "rowFilterPolicyItems": [{"accesses": [{"type": "select"}], "users": ["bench"], "rowFilterInfo": {"filterExpr": "bid > 0"}}]}
]}`

const benchUsers = "[[identity.users]]\nname = \"bench\"\npassword = \"bench\"\n"

func startPgranger(bin, dir string, c *testpg.Cluster, profile string) (string, int, func(), error) {
	return launchPgranger(bin, dir, []byte(benchPolicies), c.DSN("pgranger_svc", "pgranger_svc", "bench"), benchUsers, profile)
}

// launchPgranger starts the pgranger binary in dir with the policy bundle,
// the backend DSN and the [[identity.users]] TOML given, and returns its
// port, its process id and a function that stops it.
func launchPgranger(bin, dir string, policies []byte, dsn, users, profile string, env ...string) (string, int, func(), error) {
	port, err := freePort()
	if err != nil {
		return "", 0, nil, err
	}
	os.WriteFile(filepath.Join(dir, "hive.json"), policies, 0o644)
	cfg := fmt.Sprintf(`[listen]
addr = "127.0.0.1:%s"
max-clients = %d
[backend]
dsn = %q
pool-size = %d
%s
[policy.file]
policies = "hive.json"
[audit]
path = ""
[admin]
addr = ""
[log]
level = "warn"
`, port, idleClients+100, dsn, max(64, idleClients+16), users)
	path := filepath.Join(dir, "pgranger.toml")
	os.WriteFile(path, []byte(cfg), 0o644)
	args := []string{"serve", "--config", path}
	if profile != "" {
		abs, _ := filepath.Abs(profile)
		args = append(args, "--cpuprofile", abs)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its own group, for groupCPU
	if err := cmd.Start(); err != nil {
		return "", 0, nil, err
	}
	stop := func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }
	if err := waitPort(port); err != nil {
		stop()
		return "", 0, nil, err
	}
	return port, cmd.Process.Pid, stop, nil
}

// soak runs a mixed load through pgranger for d — select-only prepared,
// the governed script prepared and simple (every statement a new text, so
// the rewrite and template caches fill to their bounds), and a client that
// reconnects for every transaction (backend pool, session setup) — and
// samples pgranger's RSS. Memory that keeps growing after warm-up (the
// first fifth) is a leak; a flat line after the caches filled is not.
func soak(env []string, dir string, t target, script string, d time.Duration) error {
	loads := [][]string{
		{"-c", "4", "-S", "-M", "prepared"},
		{"-c", "3", "-f", script, "-M", "simple"},
		{"-c", "2", "-f", script, "-M", "prepared"},
		{"-c", "1", "-C", "-S", "-M", "extended"},
	}
	fmt.Printf("\nsoak: %s of mixed load through pgranger (%d pgbench processes), RSS sampled every %s, on %s\n", d, len(loads), d/20, hostDesc())
	errs := make(chan error, len(loads))
	for _, l := range loads {
		args := append([]string{"-n", "-j", "1", "-T", strconv.Itoa(int(d.Seconds())), "-h", "127.0.0.1", "-p", t.port, "-U", t.user}, l...)
		args = append(args, "bench")
		go func() {
			cmd := exec.Command("pgbench", args...)
			cmd.Env = append(env, "PGPASSWORD="+t.password)
			out, err := cmd.CombinedOutput()
			if err == nil && strings.Contains(string(out), "number of failed transactions: ") && !strings.Contains(string(out), "number of failed transactions: 0 ") {
				err = fmt.Errorf("failed transactions")
			}
			if err != nil {
				err = fmt.Errorf("pgbench %s: %v\n%s", strings.Join(l, " "), err, out)
			}
			errs <- err
		}()
	}
	start := time.Now()
	var samples []float64
	fmt.Println("\n| elapsed | RSS MB |\n|---|---|")
	for time.Since(start) < d {
		time.Sleep(d / 20)
		rss := rssMB(t.pgid)
		samples = append(samples, rss)
		fmt.Printf("| %s | %.1f |\n", time.Since(start).Round(time.Second), rss)
	}
	for range loads {
		if err := <-errs; err != nil {
			return err
		}
	}
	warm := samples[len(samples)/5]
	peak := warm
	for _, v := range samples[len(samples)/5:] {
		peak = max(peak, v)
	}
	fmt.Printf("\nRSS after warm-up (%s) %.1f MB, highest after it %.1f MB, at the end %.1f MB: growth after warm-up %.1f MB\n",
		(d / 5).Round(time.Second), warm, peak, samples[len(samples)-1], peak-warm)
	return nil
}

// rssMB is a process's resident set size in MB (/proc/PID/status VmRSS).
func rssMB(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// idleMemory opens n client connections through pgranger, runs one
// statement on each, holds them all open and reports pgranger's RSS before
// and while they are held.
func idleMemory(ctx context.Context, port string, pid, n int) error {
	before := rssMB(pid)
	conns := make([]*pgx.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close(ctx)
		}
	}()
	dsn := fmt.Sprintf("host=127.0.0.1 port=%s user=bench password=bench dbname=bench sslmode=disable", port)
	for i := 0; i < n; i++ {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return fmt.Errorf("idle connection %d: %w", i+1, err)
		}
		conns = append(conns, c)
		var one int
		if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
			return fmt.Errorf("idle connection %d: %w", i+1, err)
		}
	}
	time.Sleep(2 * time.Second)
	held := rssMB(pid)
	fmt.Printf("\n%d idle client connections through pgranger: RSS %.1f MB (%.1f MB before; %.0f KB per connection) — target ≤ 150 MB\n",
		n, held, before, (held-before)*1024/float64(n))
	return nil
}

// startPgbouncer returns pgbouncer's port and process group (runuser and
// pgbouncer), and the function that stops it.
func startPgbouncer(dir, pgPort string) (string, int, func(), error) {
	return startPgbouncerOn(dir, "127.0.0.1", pgPort)
}

// startPgbouncerOn is startPgbouncer with its backend connections to
// pgHost: an address, or the directory of PostgreSQL's Unix-domain socket.
func startPgbouncerOn(dir, pgHost, pgPort string) (string, int, func(), error) {
	port, err := freePort()
	if err != nil {
		return "", 0, nil, err
	}
	ini := fmt.Sprintf(`[databases]
bench = host=%s port=%s dbname=bench user=postgres password=%s
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %s
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = session
max_client_conn = 500
default_pool_size = 64
logfile = %s
stats_period = 0
`, pgHost, pgPort, testpg.SuperPassword, port, filepath.Join(dir, "userlist.txt"), filepath.Join(dir, "pgbouncer.log"))
	os.WriteFile(filepath.Join(dir, "userlist.txt"), []byte(`"postgres" ""`+"\n"), 0o644)
	path := filepath.Join(dir, "pgbouncer.ini")
	os.WriteFile(path, []byte(ini), 0o644)
	bouncer := "pgbouncer"
	if _, err := exec.LookPath(bouncer); err != nil {
		bouncer = "/usr/sbin/pgbouncer"
	}
	var cmd *exec.Cmd
	if os.Geteuid() == 0 { // pgbouncer refuses to run as root
		exec.Command("chown", "-R", "postgres", dir).Run()
		cmd = exec.Command("runuser", "-u", "postgres", "--", bouncer, path)
	} else {
		cmd = exec.Command(bouncer, path)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return "", 0, nil, err
	}
	// SIGTERM is pgbouncer's immediate shutdown; sent to the group so it
	// reaches pgbouncer through runuser.
	stop := func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); cmd.Wait() }
	if err := waitPort(port); err != nil {
		stop()
		return "", 0, nil, err
	}
	return port, cmd.Process.Pid, stop, nil
}

var clockTicks = 100.0 // USER_HZ: /proc times are in these units on Linux

// groupCPU is the CPU time (user + system, seconds) used so far by the
// processes of a process group, read from /proc/PID/stat.
func groupCPU(pgid int) float64 {
	if pgid == 0 {
		return 0
	}
	dirs, _ := os.ReadDir("/proc")
	total := 0.0
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// The fields after the parenthesised command name: state is [0],
		// pgrp [2], utime [11], stime [12].
		i := strings.LastIndexByte(string(data), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 13 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		u, _ := strconv.ParseFloat(f[11], 64)
		s, _ := strconv.ParseFloat(f[12], 64)
		total += (u + s) / clockTicks
	}
	return total
}

var (
	reTPS = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	reAvg = regexp.MustCompile(`latency average = ([0-9.]+) ms`)
	reTxn = regexp.MustCompile(`number of transactions actually processed: ([0-9]+)`)
)

// pgbench runs one measurement; the p99 comes from pgbench's
// per-transaction log (microseconds, third field).
func pgbench(env []string, dir string, t target, clients int, d time.Duration, extra []string) (result, error) {
	prefix := filepath.Join(dir, fmt.Sprintf("log-%s-%d-%d", t.name, clients, time.Now().UnixNano()))
	args := append([]string{"-n", "-c", strconv.Itoa(clients), "-j", "2", "-T", strconv.Itoa(int(d.Seconds())),
		"-l", "--log-prefix", prefix, "-h", cmp.Or(t.host, "127.0.0.1"), "-p", t.port, "-U", t.user}, extra...)
	if t.script != "" {
		for i := range args {
			if args[i] == "-f" && i+1 < len(args) {
				args[i+1] = t.script
			}
		}
	}
	args = append(args, "bench")
	cmd := exec.Command("pgbench", args...)
	cmd.Env = append(env, "PGPASSWORD="+t.password)
	cpuBefore := groupCPU(t.pgid)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("%v\n%s", err, out)
	}
	var r result
	if m := reTxn.FindSubmatch(out); m != nil && t.pgid != 0 {
		if n, _ := strconv.ParseFloat(string(m[1]), 64); n > 0 {
			r.cpuus = (groupCPU(t.pgid) - cpuBefore) / n * 1e6
		}
	}
	if m := reTPS.FindSubmatch(out); m != nil {
		r.tps, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	if m := reAvg.FindSubmatch(out); m != nil {
		r.avgms, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	if strings.Contains(string(out), "number of failed transactions: ") && !strings.Contains(string(out), "number of failed transactions: 0 ") {
		return r, fmt.Errorf("pgbench reported failed transactions:\n%s", out)
	}
	files, _ := filepath.Glob(prefix + "*")
	var lat []float64
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) >= 3 {
				if us, err := strconv.ParseFloat(fields[2], 64); err == nil {
					lat = append(lat, us/1000)
				}
			}
		}
		fh.Close()
		os.Remove(f)
	}
	if len(lat) > 0 {
		sort.Float64s(lat)
		r.p99ms = lat[len(lat)*99/100]
	}
	return r, nil
}

func median(rs []result) result {
	pick := func(f func(result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		sort.Float64s(v)
		return v[len(v)/2]
	}
	return result{
		tps:   pick(func(r result) float64 { return r.tps }),
		avgms: pick(func(r result) float64 { return r.avgms }),
		p99ms: pick(func(r result) float64 { return r.p99ms }),
		cpuus: pick(func(r result) float64 { return r.cpuus }),
	}
}

func freePort() (string, error) {
	p, err := testpg.FreePort()
	return strconv.Itoa(p), err
}

func waitPort(port string) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("nothing listens on 127.0.0.1:%s", port)
}

func hostDesc() string {
	out, _ := exec.Command("nproc").Output()
	return strings.TrimSpace(string(out)) + " CPUs, client, proxy and server sharing them"
}

// hold prints how to reach every target and waits for an interrupt.
func hold(targets []target, script string) error {
	fmt.Printf("\ngoverned script: %s\n", script)
	for _, t := range targets {
		host := t.host
		if host == "" {
			host = "127.0.0.1"
		}
		fmt.Printf("%-20s PGPASSWORD=%s pgbench -h %s -p %s -U %s bench   (proxy process group %d)\n", t.name, t.password, host, t.port, t.user, t.pgid)
	}
	fmt.Println("holding; Ctrl-C ends")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	return nil
}
