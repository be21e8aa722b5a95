package maskdiff

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/pgranger/pgranger/internal/interop"
	"github.com/pgranger/pgranger/internal/testpg"
	"github.com/pgranger/pgranger/internal/testrepo"
)

func TestMain(m *testing.M) { testpg.Main(m) }

// Test switches (docs/testing.md, "The mask differential"):
// PGRANGERTEST_MASK_SEED picks the seed ("random" draws one and prints
// it), PGRANGERTEST_MASK_VALUES the number of values over all column
// types, PGRANGERTEST_MASK_ALL_CODEPOINTS=1 extends TestEveryCodePoint
// from the Basic Multilingual Plane to every plane. make test runs the
// defaults, make interop a random seed over 100,000 values and every
// code point.
const (
	defaultSeed   = 20260314
	defaultValues = 6000
	// maxShrunk bounds how many mismatches one run shrinks and prints.
	maxShrunk = 3
)

func seedFromEnv(t *testing.T) uint64 {
	switch v := os.Getenv("PGRANGERTEST_MASK_SEED"); v {
	case "":
		return defaultSeed
	case "random":
		return rand.Uint64() >> 1
	default:
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("PGRANGERTEST_MASK_SEED=%q: want a number or random", v)
		}
		return s
	}
}

func valuesFromEnv(t *testing.T) int {
	v := os.Getenv("PGRANGERTEST_MASK_VALUES")
	if v == "" {
		return defaultValues
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < len(Columns) {
		t.Fatalf("PGRANGERTEST_MASK_VALUES=%q: want a number of at least %d", v, len(Columns))
	}
	return n
}

// connect makes a database of its own for the test on the shared cluster.
func connect(t *testing.T, db string) *pgx.Conn {
	t.Helper()
	c := testpg.Database(t, db)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.SuperDSN(db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	var icu bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_catalog.pg_collation WHERE collname = 'und-x-icu')`).Scan(&icu); err != nil {
		t.Fatal(err)
	}
	if !icu {
		t.Fatal(`this PostgreSQL has no ICU collation "und-x-icu", which pgranger's masks need`)
	}
	return conn
}

func named(t *testing.T) *Named {
	t.Helper()
	n, err := ParseNamed(filepath.Join(testrepo.Root(t), "docs", "masks.md"))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// harness is a harness on a database of its own, with the Hive oracle
// when hive is set.
func harness(t *testing.T, db string, hive bool) *Harness {
	t.Helper()
	conn := connect(t, db)
	var oracle *interop.Hive
	if hive {
		oracle = interop.HiveForTest(t)
	}
	h, err := New(context.Background(), conn, oracle, named(t))
	if err != nil {
		t.Fatal(err)
	}
	// icu_unicode_version() is PostgreSQL 17's; before it, the collation
	// version of "und-x-icu" names the ICU release (153.120 is ICU 72).
	var server, collVersion string
	if err := conn.QueryRow(context.Background(), `SELECT pg_catalog.current_setting('server_version'),
		coalesce(pg_catalog.pg_collation_actual_version(oid), '?') FROM pg_catalog.pg_collation WHERE collname = 'und-x-icu'`).Scan(&server, &collVersion); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL %s, collation version of und-x-icu %s", server, collVersion)
	return h
}

// TestMaskDifferential masks random values of every column type with
// every mask type on PostgreSQL, with the SQL pgranger emits, and through
// Hive's UDFs, and requires the same bytes, except where docs/masks.md
// names the difference. A mismatch nothing names is shrunk and printed as
// a regression case for testdata/regressions.
func TestMaskDifferential(t *testing.T) {
	seed := seedFromEnv(t)
	total := valuesFromEnv(t)
	h := harness(t, "maskdiff", true)
	t.Logf("seed %d (reproduce: PGRANGERTEST_MASK_SEED=%d PGRANGERTEST_MASK_VALUES=%d)", seed, seed, total)
	weights := 0
	for _, c := range Columns {
		weights += c.Weight
	}
	ctx := context.Background()
	t0 := time.Now()
	counts := map[string]int{}
	var unnamed []Mismatch
	values, compared := 0, 0
	share := make([]int, len(Columns))
	rest := total
	for i, c := range Columns {
		share[i] = max(1, total*c.Weight/weights)
		rest -= share[i]
	}
	share[0] += max(0, rest) // the rounding's remainder to text
	for i, c := range Columns {
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		vals := c.Values(r, share[i])
		customs := c.customs(r, vals)
		rows := make([]Row, len(vals))
		for k := range vals {
			rows[k] = Row{Value: vals[k], Custom: customs[k]}
		}
		ms, n, err := h.Check(ctx, c, rows)
		if err != nil {
			t.Fatalf("%s: %v", c.PG, err)
		}
		values += len(rows)
		compared += n
		for _, m := range ms {
			counts[m.Named]++
			if m.Named == "" {
				unnamed = append(unnamed, m)
			}
		}
	}
	var summary []string
	for name, n := range counts {
		if name != "" {
			summary = append(summary, fmt.Sprintf("%s %d", name, n))
		}
	}
	sort.Strings(summary)
	t.Logf("%d values of %d column types, %d masked results compared in %v; named differences: %s; unexplained: %d",
		values, len(Columns), compared, time.Since(t0).Round(time.Millisecond), strings.Join(summary, ", "), len(unnamed))
	reportUnnamed(t, h, unnamed)
}

func reportUnnamed(t *testing.T, h *Harness, unnamed []Mismatch) {
	t.Helper()
	for i, m := range unnamed {
		if i == maxShrunk {
			t.Errorf("… and %d more mismatches", len(unnamed)-maxShrunk)
			break
		}
		s, err := h.Shrink(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("PostgreSQL and Hive disagree: %s\nshrunk: %s\nto fix and keep as testdata/regressions/<name>.json:\n%s",
			m, s, RegressionOf(s, "<name>", "<why>").JSON())
	}
}

// TestEveryCodePoint masks a string of each code point, five times over,
// with every mask on text: every scalar value of the Basic Multilingual
// Plane (assigned or not, private use, noncharacters; NUL and the
// surrogates cannot be stored), and with PGRANGERTEST_MASK_ALL_CODEPOINTS=1
// those of every plane. So no character is classified differently by the
// server's ICU and by Java 17.
func TestEveryCodePoint(t *testing.T) {
	last := rune(0xFFFF)
	if os.Getenv("PGRANGERTEST_MASK_ALL_CODEPOINTS") == "1" {
		last = utf8.MaxRune
	}
	h := harness(t, "maskdiff_codepoints", true)
	c, _ := ColumnOf("text")
	var rows []Row
	for r := rune(1); r <= last; r++ {
		if utf8.ValidRune(r) {
			rows = append(rows, Row{Value: ptr(strings.Repeat(string(r), 5))})
		}
	}
	t0 := time.Now()
	ms, n, err := h.Check(context.Background(), c, rows)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d code points up to U+%04X, %d masked results compared in %v", len(rows), last, n, time.Since(t0).Round(time.Millisecond))
	var unnamed []Mismatch
	for _, m := range ms {
		if m.Named == "" {
			unnamed = append(unnamed, m)
		}
	}
	reportUnnamed(t, h, unnamed)
}

// TestRegressions replays the shrunk cases of testdata/regressions on
// PostgreSQL alone: each must give the value Hive gave.
func TestRegressions(t *testing.T) {
	regs, err := ReadRegressions("testdata/regressions")
	if err != nil {
		t.Fatal(err)
	}
	if len(regs) == 0 {
		t.Fatal("no regression cases in testdata/regressions")
	}
	h := harness(t, "maskdiff_regressions", false)
	for _, r := range regs {
		t.Run(r.Name, func(t *testing.T) {
			got, err := h.OnPostgres(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			if Show(got) != Show(r.Hive) {
				t.Errorf("%s on %s %s: PostgreSQL %s, Hive %s (%s)", r.Mask, r.Column, Describe(r.Value), Show(got), Show(r.Hive), r.Why)
			}
		})
	}
}

// TestRegressionsAgainstHive checks that Hive still gives each stored
// case's recorded value: a case written or edited by hand is Hive's word,
// not a guess.
func TestRegressionsAgainstHive(t *testing.T) {
	regs, err := ReadRegressions("testdata/regressions")
	if err != nil {
		t.Fatal(err)
	}
	h := harness(t, "maskdiff_regressions_hive", true)
	for _, r := range regs {
		got, err := h.OnHive(context.Background(), r)
		if err != nil {
			t.Fatalf("%s: %v", r.Name, err)
		}
		if Show(got) != Show(r.Hive) {
			t.Errorf("%s: Hive now gives %s, the case records %s", r.Name, Show(got), Show(r.Hive))
		}
	}
}
