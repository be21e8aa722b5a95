package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
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
)

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

	modes := []struct {
		name string
		mode pgx.QueryExecMode
	}{{"simple", pgx.QueryExecModeSimpleProtocol}, {"extended", pgx.QueryExecModeCacheStatement}}
	fmt.Printf("\nTPC-H scale %g, %d runs per query and target (median), on %s\n\n", tpchScale, tpchRuns, hostDesc())
	fmt.Println("| query | rows | copy ms (simple) | pgranger ms (simple) | ratio (simple) | copy ms (extended) | pgranger ms (extended) | ratio (extended) |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	ratios := make([][]float64, len(modes))
	worst := make([]string, len(modes))
	for _, q := range tpch.Queries() {
		line := fmt.Sprintf("| %s |", q.Name)
		rows := -1
		for i, m := range modes {
			copyMS, rangerMS, n, err := timeQuery(direct, reader, q, m.mode)
			if err != nil {
				return fmt.Errorf("%s (%s): %w", q.Name, m.name, err)
			}
			if rows < 0 {
				rows = n
				line += fmt.Sprintf(" %d |", n)
			}
			r := rangerMS / copyMS
			if len(ratios[i]) == 0 || r > maxOf(ratios[i]) {
				worst[i] = q.Name
			}
			ratios[i] = append(ratios[i], r)
			line += fmt.Sprintf(" %.1f | %.1f | %.2f |", copyMS, rangerMS, r)
		}
		fmt.Println(line)
	}
	fmt.Println()
	for i, m := range modes {
		fmt.Printf("%s protocol: worst ratio %.2f (%s), median ratio %.2f\n", m.name, maxOf(ratios[i]), worst[i], medianOf(ratios[i]))
	}
	return nil
}

// timeQuery warms q up on both targets, checks that they return the same
// result, and returns the median wall times (ms) of tpchRuns runs each,
// interleaved, and the row count.
func timeQuery(direct, governed *pgx.Conn, q tpch.Query, mode pgx.QueryExecMode) (copyMS, rangerMS float64, rows int, err error) {
	run := func(conn *pgx.Conn) ([]string, float64, error) {
		ctx, cancel := context.WithTimeout(context.Background(), tpchTimeout)
		defer cancel()
		start := time.Now()
		out, err := tpch.Run(ctx, conn, q.SQL, mode)
		return out, float64(time.Since(start).Microseconds()) / 1000, err
	}
	want, _, err := run(direct)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("on the copies: %w", err)
	}
	got, _, err := run(governed)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("through pgranger: %w", err)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		return 0, 0, 0, fmt.Errorf("pgranger returned %d rows, the copies %d, or other values", len(got)-1, len(want)-1)
	}
	var cs, rs []float64
	for i := 0; i < tpchRuns; i++ {
		// Which target goes first alternates, so what one run leaves in
		// the caches favours neither.
		for j := 0; j < 2; j++ {
			conn, times := direct, &cs
			if (i+j)%2 == 1 {
				conn, times = governed, &rs
			}
			_, d, err := run(conn)
			if err != nil {
				return 0, 0, 0, err
			}
			*times = append(*times, d)
		}
	}
	return medianOf(cs), medianOf(rs), len(want) - 1, nil
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
