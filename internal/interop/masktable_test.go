package interop

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgranger/pgranger/internal/testpg"
	"github.com/pgranger/pgranger/internal/testrepo"
	"github.com/pgranger/pgranger/sqlrewrite"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated mask table in docs/masks.md")

func TestMain(m *testing.M) { testpg.Main(m) }

// maskTableColumn is one column type of the table, named in each engine.
type maskTableColumn struct {
	hive, spark string
	pg          sqlrewrite.ColumnType
	values      []*string
}

func sp(s string) *string { return &s }

// maskTableColumns: the inputs the brief of docs/masks.md names (ASCII,
// accented, CJK, an emoji, punctuation, digits, dates, numbers, NULL),
// plus a supplementary character where Spark's MASK_SHOW_FIRST_4 splits
// it, and a date written as a string.
var maskTableColumns = []maskTableColumn{
	{"string", "string", sqlrewrite.ColumnType{OID: 25, TypMod: -1, SQLName: "text"}, []*string{
		sp("Hello World"), sp("Élodie Müller"), sp("東京都千代田区"), sp("hi 😀 there"), sp("a.b-c_d!?"),
		sp("4111-1111-1111-1234"), sp("abc😀def"), sp("2024-05-06"), nil}},
	{"int", "int", sqlrewrite.ColumnType{OID: 23, TypMod: -1, SQLName: "integer"}, []*string{sp("123456789"), sp("-42"), nil}},
	{"decimal(10,2)", "decimal(10,2)", sqlrewrite.ColumnType{OID: 1700, TypMod: (10<<16 | 2) + 4, SQLName: "numeric(10,2)"}, []*string{sp("1234.50"), nil}},
	{"date", "date", sqlrewrite.ColumnType{OID: 1082, TypMod: -1, SQLName: "date"}, []*string{sp("2024-05-06"), sp("1999-12-31"), nil}},
	{"timestamp", "timestamp", sqlrewrite.ColumnType{OID: 1114, TypMod: -1, SQLName: "timestamp without time zone"}, []*string{sp("2024-05-06 10:11:12.5"), nil}},
}

var maskTableTypes = []string{"MASK", "MASK_SHOW_LAST_4", "MASK_SHOW_FIRST_4", "MASK_HASH", "MASK_DATE_SHOW_YEAR", "MASK_NULL"}

// maskCell is one engine's answer for one value: a value, NULL, or a
// refusal (Spark's analysis error, pgranger's denial).
type maskCell struct {
	v      *string
	failed string
}

func (c maskCell) String() string {
	switch {
	case c.failed != "":
		return "*" + c.failed + "*"
	case c.v == nil:
		return "NULL"
	}
	return "`" + *c.v + "`"
}

func (c maskCell) same(o maskCell) bool {
	if (c.failed != "") != (o.failed != "") {
		return false
	}
	return c.failed != "" || show(c.v) == show(o.v)
}

// TestMaskTable masks the same inputs with each Ranger mask type in
// HiveServer2 (Hive's UDFs, cast back to the column type as Ranger's Hive
// plugin does), in Spark (the expressions Kyuubi's plugin writes, run by
// Spark 3.5) and in PostgreSQL through pgranger's mask SQL in both
// dialects. pgranger's "hive" dialect must give Hive's results and its
// "spark" dialect Spark's, value for value (a query Spark cannot analyse
// is one pgranger denies). The table of all four is docs/masks.md's
// "The engines side by side"; -update-docs rewrites it.
func TestMaskTable(t *testing.T) {
	h := HiveForTest(t)
	s := SparkForTest(t)
	c := testpg.Database(t, "masktable")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.SuperDSN("masktable"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tr := transformers(t)

	var doc strings.Builder
	for _, mt := range maskTableTypes {
		fmt.Fprintf(&doc, "\n**%s**\n\n| column | value | HiveServer2 | Spark + Kyuubi | pgranger `hive` | pgranger `spark` |\n|---|---|---|---|---|---|\n", mt)
		for _, col := range maskTableColumns {
			hive := hiveMask(t, h, tr, mt, col.hive, true, col.values)
			spark := sparkCells(ctx, t, s, mt, col)
			pgHive := pgMaskCells(ctx, t, conn, mt, col, sqlrewrite.MaskDialectHive)
			pgSpark := pgMaskCells(ctx, t, conn, mt, col, sqlrewrite.MaskDialectSpark)
			for i, v := range col.values {
				hc := maskCell{v: hive[i]}
				if !astronomical(pgHive[i]).same(hc) {
					t.Errorf("%s on %s %s: pgranger hive %s, HiveServer2 %s", mt, col.pg.SQLName, show(v), pgHive[i], hc)
				}
				if !pgSpark[i].same(spark[i]) {
					t.Errorf("%s on %s %s: pgranger spark %s, Spark %s", mt, col.pg.SQLName, show(v), pgSpark[i], spark[i])
				}
				fmt.Fprintf(&doc, "| %s | %s | %s | %s | %s | %s |\n", col.pg.SQLName, maskCell{v: v}, hc, spark[i], pgHive[i], pgSpark[i])
			}
		}
	}
	checkGeneratedDoc(t, "docs/masks.md", "mask table", doc.String())
}

// astronomical writes PostgreSQL's "yyyy-mm-dd BC" as Hive prints the same
// day, with the astronomical year (1 BC is year 0000): the two engines'
// ways of printing one date.
func astronomical(c maskCell) maskCell {
	if c.v == nil || !strings.HasSuffix(*c.v, " BC") || len(*c.v) != len("0001-01-01 BC") {
		return c
	}
	var y int
	if _, err := fmt.Sscanf((*c.v)[:4], "%d", &y); err != nil {
		return c
	}
	s := fmt.Sprintf("%04d%s", 1-y, (*c.v)[4:10])
	return maskCell{v: &s}
}

// sparkCells asks Spark; an analysis error fails every value.
func sparkCells(ctx context.Context, t *testing.T, s *Spark, mt string, col maskTableColumn) []maskCell {
	t.Helper()
	out := make([]maskCell, len(col.values))
	res, err := s.Mask(ctx, SparkMaskRequest{MaskType: mt, Type: col.spark, Values: col.values})
	if err != nil {
		if _, ok := err.(*OracleError); !ok || !strings.Contains(err.Error(), "AnalysisException") {
			t.Fatalf("Spark, %s on %s: %v", mt, col.spark, err)
		}
		for i := range out {
			out[i].failed = "query fails"
		}
		return out
	}
	for i, r := range res.Results {
		out[i].v = r
	}
	return out
}

// pgMaskCells evaluates pgranger's mask SQL for the column over the
// values in PostgreSQL, as text; a mask that cannot be built is pgranger's
// denial.
func pgMaskCells(ctx context.Context, t *testing.T, conn *pgx.Conn, mt string, col maskTableColumn, dialect string) []maskCell {
	t.Helper()
	out := make([]maskCell, len(col.values))
	expr, err := sqlrewrite.MaskSQL(mt, col.pg, "c", sqlrewrite.MaskOptions{Dialect: dialect})
	if err != nil {
		for i := range out {
			out[i].failed = "denied"
		}
		return out
	}
	var rows []string
	for i, v := range col.values {
		lit := "NULL"
		if v != nil {
			lit = "'" + strings.ReplaceAll(*v, "'", "''") + "'"
		}
		rows = append(rows, fmt.Sprintf("(%d, %s::%s)", i, lit, col.pg.SQLName))
	}
	q := "SELECT (" + expr + ")::text FROM (VALUES " + strings.Join(rows, ", ") + ") AS v(i, c) ORDER BY i"
	r, err := conn.Query(ctx, q)
	if err != nil {
		t.Fatalf("%s on %s (%s): %v\n%s", mt, col.pg.SQLName, dialect, err, q)
	}
	defer r.Close()
	i := 0
	for r.Next() {
		if err := r.Scan(&out[i].v); err != nil {
			t.Fatal(err)
		}
		i++
	}
	if err := r.Err(); err != nil {
		t.Fatalf("%s on %s (%s): %v\n%s", mt, col.pg.SQLName, dialect, err, q)
	}
	return out
}

// checkGeneratedDoc compares the text between the markers
// "<!-- BEGIN <name> -->" and "<!-- END <name> -->" of a document with
// want; with -update-docs it writes want there instead.
func checkGeneratedDoc(t *testing.T, rel, name, want string) {
	t.Helper()
	path := filepath.Join(testrepo.Root(t), rel)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	begin := "<!-- BEGIN " + name + " (generated by go test ./internal/interop -run TestMaskTable -update-docs) -->\n"
	end := "<!-- END " + name + " -->"
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q section", rel, begin, end)
	}
	got := doc[i+len(begin) : j]
	if got == want {
		return
	}
	if *updateDocs {
		if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s rewritten", rel, name)
		return
	}
	t.Errorf("%s: the %s differs from what the engines answer now; run go test ./internal/interop -run TestMaskTable -update-docs and read the diff", rel, name)
}
