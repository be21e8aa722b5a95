package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgranger/pgranger/internal/testpg"
	"github.com/pgranger/pgranger/internal/tpch"
)

// Set by the -tpch flags.
var (
	tpchScale   float64
	tpchRuns    int
	tpchHold    bool
	tpchTimeout time.Duration
	// tpchStoredMasks: add the stored-mask columns (pgranger masks
	// --stored-ddl) to the source tables once the copies are built.
	tpchStoredMasks bool
	// tpchOnly: the queries to time (comma-separated names), all if empty.
	tpchOnly string
	// tpchParallel: max_parallel_workers_per_gather for the database (-1:
	// PostgreSQL's default, 2).
	tpchParallel int
	// tpchFilterIndexes: give the source tables' indexes partial twins
	// with the row filter as predicate (tpch.FilterIndexes).
	tpchFilterIndexes bool
	// tpchFloor: also time the queries on plain views of pgranger's
	// rewrite of SELECT * (tpch.BuildFloor): its filters and masks, no barrier.
	tpchFloor bool
)

// The flags of this file that bench/main.go does not declare.
func init() {
	flag.StringVar(&tpchOnly, "tpch-queries", "", "with -tpch: time only these queries, comma-separated (q05,q18); default all 22")
	flag.BoolVar(&tpchFilterIndexes, "tpch-filter-indexes", false, "with -tpch: after the copies, give every index of a row-filtered source table a partial twin whose predicate is the row filter (what a deployment can build; the copies' indexes hold only the visible rows)")
	flag.BoolVar(&tpchFloor, "tpch-floor", false, "with -tpch: also time every query on plain views of what pgranger sends for SELECT * FROM each table (schema "+tpch.FloorSchema+": its filters and masks, no barrier): the ratios split into what reading the source tables costs (floor ÷ copy) and what the barrier costs (pgranger ÷ floor)")
	flag.IntVar(&tpchParallel, "tpch-parallel-workers", -1, "with -tpch: ALTER DATABASE tpch SET max_parallel_workers_per_gather to this for every session, copies and pgranger alike (a diagnostic: on a 2-core machine PostgreSQL's default of 2 runs 3 processes per parallel query); -1 leaves PostgreSQL's default")
}

// tpchQueries are the queries -tpch-queries selects.
func tpchQueries() ([]tpch.Query, error) {
	all := tpch.Queries()
	if tpchOnly == "" {
		return all, nil
	}
	var out []tpch.Query
	for _, name := range strings.Split(tpchOnly, ",") {
		found := false
		for _, q := range all {
			if q.Name == strings.TrimSpace(name) {
				out = append(out, q)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("-tpch-queries: no query %q (q01 … q22)", name)
		}
	}
	return out, nil
}

// runTPCH is bench -tpch: a governed query should cost about what the same
// query costs on a table that physically holds only the user's rows and
// masked values. It loads TPC-H-shaped data (internal/tpch) into a
// throwaway cluster, starts pgranger with the TPC-H policies, builds the
// physical copies from what the governed user reads through it, and times
// each of the 22 queries through pgranger (schema tpch) and directly on the
// copies (schema tpch_copy), with the simple and the extended protocol:
// one warm-up run of each (whose results must be equal), then tpchRuns
// timed runs, interleaved, medians reported.
func runTPCH(bin string) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s not found: run make build first", bin)
	}
	ctx := context.Background()
	fmt.Println("starting PostgreSQL …")
	c, err := testpg.New(ctx)
	if err != nil {
		return err
	}
	defer c.Stop()
	if err := c.CreateDatabase(ctx, "tpch"); err != nil {
		return err
	}
	if err := c.Exec(ctx, "tpch", "CREATE ROLE pgranger_svc LOGIN PASSWORD 'pgranger_svc'"); err != nil {
		return err
	}
	if tpchParallel >= 0 {
		// Before any session of the benchmark (the loader's, pgranger's
		// pool, the copies') starts: all of them plan with it.
		if err := c.Exec(ctx, "tpch", fmt.Sprintf("ALTER DATABASE tpch SET max_parallel_workers_per_gather = %d", tpchParallel)); err != nil {
			return err
		}
		fmt.Printf("max_parallel_workers_per_gather = %d for every session\n", tpchParallel)
	}
	queries, err := tpchQueries()
	if err != nil {
		return err
	}
	super, err := pgx.Connect(ctx, c.SuperDSN("tpch"))
	if err != nil {
		return err
	}
	defer super.Close(ctx)
	start := time.Now()
	if err := tpch.Load(ctx, super, tpchScale, "pgranger_svc"); err != nil {
		return err
	}
	fmt.Printf("TPC-H scale %g loaded in %s\n", tpchScale, time.Since(start).Round(time.Millisecond))

	dir, err := os.MkdirTemp("", "pgranger-bench-tpch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	users := fmt.Sprintf("[[identity.users]]\nname = \"tpch\"\npassword = \"tpch\"\ngroups = [%q]\n", tpch.Group)
	port, _, stop, err := launchPgranger(bin, dir, tpch.Policies(), c.DSN("pgranger_svc", "pgranger_svc", "tpch"), users, cpuProfile)
	if err != nil {
		return err
	}
	defer stop()
	governed, err := pgx.Connect(ctx, fmt.Sprintf("postgres://tpch:tpch@127.0.0.1:%s/tpch?sslmode=disable", port))
	if err != nil {
		return err
	}
	defer governed.Close(ctx)
	start = time.Now()
	if err := tpch.BuildCopies(ctx, governed, super); err != nil {
		return err
	}
	fmt.Printf("copies built through pgranger in %s\n", time.Since(start).Round(time.Millisecond))
	if tpchFilterIndexes {
		stmts, err := tpch.FilterIndexes(ctx, super)
		if err != nil {
			return err
		}
		for _, s := range stmts {
			fmt.Println(clip(s, 120))
		}
	}
	if tpchStoredMasks {
		// After the copies, which stay as they are (COPY through
		// pgranger would carry the new columns).
		if err := addStoredMasks(ctx, bin, dir, super); err != nil {
			return fmt.Errorf("stored masks: %w", err)
		}
	}
	for _, schema := range []string{tpch.Schema, tpch.CopySchema} {
		counts, err := tpch.Counts(ctx, super, schema)
		if err != nil {
			return err
		}
		fmt.Printf("rows in %s: %s\n", schema, strings.Join(counts, " "))
	}
	if tpchHold {
		fmt.Printf("\npgranger (governed, schema %s):  psql 'postgres://tpch:tpch@127.0.0.1:%s/tpch?sslmode=disable&options=-csearch_path%%3D%s'\n", tpch.Schema, port, tpch.Schema)
		fmt.Printf("copies (schema %s):             psql '%s&options=-csearch_path%%3D%s'\n", tpch.CopySchema, c.SuperDSN("tpch"), tpch.CopySchema)
		fmt.Println("holding until Ctrl-C …")
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		return nil
	}
	// Fresh sessions for the timed runs: the loading session's backend
	// carries what generating the data left in it, and it showed (Q1, on
	// a table with no policy, ran 15–20 % slower on it than through
	// pgranger).
	direct, err := pgx.Connect(ctx, c.SuperDSN("tpch"))
	if err != nil {
		return err
	}
	defer direct.Close(ctx)
	reader, err := pgx.Connect(ctx, fmt.Sprintf("postgres://tpch:tpch@127.0.0.1:%s/tpch?sslmode=disable", port))
	if err != nil {
		return err
	}
	defer reader.Close(ctx)
	if err := tpch.UseSchema(ctx, reader, tpch.Schema); err != nil {
		return err
	}
	if err := tpch.UseSchema(ctx, direct, tpch.CopySchema); err != nil {
		return err
	}
	targets := []tpchTarget{{"copy", direct}}
	if tpchStoredMasks {
		// A second pgranger over the same tables with catalog.stored-masks
		// = false: the targets are timed interleaved.
		dir2, err := os.MkdirTemp("", "pgranger-bench-tpch-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir2)
		port2, _, stop2, err := launchPgranger(bin, dir2, tpch.Policies(), c.DSN("pgranger_svc", "pgranger_svc", "tpch"),
			users+"\n[catalog]\nstored-masks = false\n", "")
		if err != nil {
			return err
		}
		defer stop2()
		computed, err := pgx.Connect(ctx, fmt.Sprintf("postgres://tpch:tpch@127.0.0.1:%s/tpch?sslmode=disable", port2))
		if err != nil {
			return err
		}
		defer computed.Close(ctx)
		if err := tpch.UseSchema(ctx, computed, tpch.Schema); err != nil {
			return err
		}
		targets = append(targets, tpchTarget{"computed", computed}, tpchTarget{"stored", reader})
	} else {
		targets = append(targets, tpchTarget{"pgranger", reader})
	}
	if tpchFloor {
		cfg := filepath.Join(dir, "pgranger.toml")
		err := tpch.BuildFloor(ctx, super, func(table string) (string, error) {
			return tpch.RewrittenSQL(exec.Command(bin, "check", "--config", cfg, "--user", "tpch", "--database", "tpch", tpch.FloorQuery(table)))
		})
		if err != nil {
			return err
		}
		floor, err := pgx.Connect(ctx, c.SuperDSN("tpch"))
		if err != nil {
			return err
		}
		defer floor.Close(ctx)
		if err := tpch.UseSchema(ctx, floor, tpch.FloorSchema); err != nil {
			return err
		}
		targets = append(targets, tpchTarget{"floor", floor})
	}
	return timeAll(targets, queries)
}

// tpchTarget is one side of the comparison: a connection whose
// search_path selects what the unqualified queries read.
type tpchTarget struct {
	name string
	conn *pgx.Conn
}

// timeAll times every query on every target with the simple and the
// extended protocol (timeTargets) and prints, per query and protocol,
// each target's median time and its ratio to the first target (the
// copies); with a floor target, also the last governed target's ratio to
// the floor. Then the worst and median of every ratio.
func timeAll(targets []tpchTarget, queries []tpch.Query) error {
	modes := []struct {
		name string
		mode pgx.QueryExecMode
	}{{"simple", pgx.QueryExecModeSimpleProtocol}, {"extended", pgx.QueryExecModeCacheStatement}}
	// The ratios reported: every target over the copies, and the governed
	// target reading stored masks (or the only one) over the floor.
	type ratio struct {
		name     string
		num, den int
	}
	var rs []ratio
	governed := -1
	for i, t := range targets[1:] {
		if t.name == "floor" {
			rs = append(rs, ratio{"floor ÷ copy", i + 1, 0})
			continue
		}
		governed = i + 1
		rs = append(rs, ratio{t.name + " ÷ copy", i + 1, 0})
	}
	if f := len(targets) - 1; targets[f].name == "floor" && governed > 0 {
		rs = append(rs, ratio{targets[governed].name + " ÷ floor", governed, f})
	}
	var names []string
	for _, t := range targets {
		names = append(names, t.name)
	}
	fmt.Printf("\nTPC-H scale %g, %d runs per query and target (median), interleaved: %s; on %s\n\n",
		tpchScale, tpchRuns, strings.Join(names, ", "), hostDesc())
	header, rule := "| query | rows |", "|---|---|"
	for _, m := range modes {
		for _, t := range targets {
			header += fmt.Sprintf(" %s ms (%s) |", t.name, m.name)
			rule += "---|"
		}
		for _, r := range rs {
			header += fmt.Sprintf(" %s (%s) |", r.name, m.name)
			rule += "---|"
		}
	}
	fmt.Println(header)
	fmt.Println(rule)
	conns := make([]*pgx.Conn, len(targets))
	for i, t := range targets {
		conns[i] = t.conn
	}
	got := make([][][]float64, len(modes)) // mode, ratio, query
	worst := make([][]string, len(modes))
	for i := range modes {
		got[i] = make([][]float64, len(rs))
		worst[i] = make([]string, len(rs))
	}
	for _, q := range queries {
		line := fmt.Sprintf("| %s |", q.Name)
		for i, m := range modes {
			med, n, err := timeTargets(conns, q, m.mode)
			if err != nil {
				return fmt.Errorf("%s (%s): %w", q.Name, m.name, err)
			}
			if i == 0 {
				line += fmt.Sprintf(" %d |", n)
			}
			for _, d := range med {
				line += fmt.Sprintf(" %.1f |", d)
			}
			for j, r := range rs {
				v := med[r.num] / med[r.den]
				if len(got[i][j]) == 0 || v > maxOf(got[i][j]) {
					worst[i][j] = q.Name
				}
				got[i][j] = append(got[i][j], v)
				line += fmt.Sprintf(" %.2f |", v)
			}
		}
		fmt.Println(line)
	}
	fmt.Println()
	for i, m := range modes {
		for j, r := range rs {
			fmt.Printf("%s protocol, %s: worst %.2f (%s), median %.2f\n", m.name, r.name, maxOf(got[i][j]), worst[i][j], medianOf(got[i][j]))
		}
	}
	return nil
}

// timeTargets times q on every target, the first being the reference:
// warm-up runs whose results must equal the first's, then tpchRuns rounds
// in which the order of the targets rotates (so what one run leaves in the
// caches favours none), and returns the median wall times (ms) and the
// row count.
func timeTargets(conns []*pgx.Conn, q tpch.Query, mode pgx.QueryExecMode) ([]float64, int, error) {
	run := func(conn *pgx.Conn) ([]string, float64, error) {
		ctx, cancel := context.WithTimeout(context.Background(), tpchTimeout)
		defer cancel()
		start := time.Now()
		out, err := tpch.Run(ctx, conn, q.SQL, mode)
		return out, float64(time.Since(start).Microseconds()) / 1000, err
	}
	var want []string
	for i, c := range conns {
		got, _, err := run(c)
		if err != nil {
			return nil, 0, fmt.Errorf("target %d: %w", i, err)
		}
		if i == 0 {
			want = got
		} else if strings.Join(got, "\n") != strings.Join(want, "\n") {
			return nil, 0, fmt.Errorf("target %d returned %d rows, the copies %d, or other values", i, len(got)-1, len(want)-1)
		}
	}
	// Each run takes the targets in a rotated order, and every other
	// cycle of rotations in reverse: a target then runs right after each
	// other target as often as before it. Rotation alone put the floor
	// right after pgranger in three runs of four, on the same pages and
	// the same plan just executed, and never the other way round.
	n := len(conns)
	times := make([][]float64, n)
	for r := 0; r < tpchRuns; r++ {
		for j := range conns {
			k := (r + j) % n
			if (r/n)%2 == 1 {
				k = ((r-j)%n + n) % n
			}
			_, d, err := run(conns[k])
			if err != nil {
				return nil, 0, err
			}
			times[k] = append(times[k], d)
		}
	}
	med := make([]float64, len(conns))
	for i := range times {
		med[i] = medianOf(times[i])
	}
	return med, len(want) - 1, nil
}

func medianOf(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func maxOf(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		m = max(m, x)
	}
	return m
}

// addStoredMasks adds to the source tables the columns `pgranger masks
// --stored-ddl` prints for the TPC-H policies (the built binary, with the
// configuration in dir), vacuums and analyzes them (adding a stored column
// rewrites the table), checks with `pgranger check` that pgranger reads
// them (verified), and waits for the running pgranger's catalog to reload.
func addStoredMasks(ctx context.Context, bin, dir string, super *pgx.Conn) error {
	cfg := filepath.Join(dir, "pgranger.toml")
	out, err := exec.Command(bin, "masks", "--stored-ddl", "--config", cfg, "--database", "tpch").Output()
	if err != nil {
		return fmt.Errorf("pgranger masks --stored-ddl: %w", err)
	}
	start := time.Now()
	var ddl []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "--") && strings.Contains(line, "exists but") {
			return fmt.Errorf("pgranger masks --stored-ddl: %s", line)
		}
		if !strings.HasPrefix(line, "ALTER TABLE ") {
			continue
		}
		fmt.Println(clip(line, 120))
		if _, err := super.Exec(ctx, line); err != nil {
			return err
		}
		ddl = append(ddl, line)
	}
	if len(ddl) == 0 {
		return fmt.Errorf("pgranger masks --stored-ddl printed no statement:\n%s", out)
	}
	if _, err := super.Exec(ctx, "VACUUM ANALYZE "+tpch.Schema+".orders, "+tpch.Schema+".customer, "+tpch.Schema+".supplier"); err != nil {
		return err
	}
	fmt.Printf("%d stored-mask columns added in %s\n", len(ddl), time.Since(start).Round(time.Millisecond))
	// EXPLAIN through pgranger is refused here (a row filter applies);
	// pgranger check, verifying as the proxy does, shows the rewrite.
	check, err := exec.Command(bin, "check", "--config", cfg, "--user", "tpch", "--database", "tpch",
		"SELECT count(*) FROM "+tpch.Schema+".orders WHERE o_comment NOT LIKE '%special%requests%'").CombinedOutput()
	if !strings.Contains(string(check), "o_comment__pgranger_mask_show_first_4") {
		return fmt.Errorf("pgranger check does not read the stored column (%v):\n%s", err, check)
	}
	fmt.Println("pgranger check reads the stored columns; waiting 21 s (two catalog TTLs) for pgranger's catalog to reload")
	time.Sleep(21 * time.Second)
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + " …"
}
