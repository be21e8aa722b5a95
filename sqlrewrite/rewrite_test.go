package sqlrewrite

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
)

// Golden-file tests of the rewriter. Each testdata/rewrite/NAME.sql holds
// cases:
//
//	-- case: what it shows
//	-- user: bob            (a user of testSubjects)
//	-- search_path: sales, public   (optional)
//	SELECT …;               (one SQL text, up to the next "-- case:")
//
// and NAME.golden holds, per case, the SQL pgranger sends to the backend
// or the denial ("ERROR 42501: …"). Run `go test ./sqlrewrite -update` to
// regenerate the golden files, then read the diff.
var update = flag.Bool("update", false, "rewrite the golden files")

// testSubjects are the identities golden cases run as.
var testSubjects = map[string]*policy.Subject{
	"alice": {User: "alice", Groups: []string{"compliance"}, Roles: []string{"auditor"}},
	"bob":   {User: "bob", Groups: []string{"analysts"}, Roles: []string{"analyst"}, Attributes: map[string]string{"region": "US"}},
	"carol": {User: "carol", Groups: []string{"support"}, Roles: []string{"support"}, Attributes: map[string]string{"region": "EU"}},
	"eve":   {User: "eve", Groups: []string{"analysts"}, Attributes: map[string]string{"region": "x' OR '1'='1"}},
	"admin": {User: "admin"},
}

func col(name string, oid uint32, typ string) catalog.Column {
	return catalog.Column{Name: name, TypeOID: oid, BaseOID: oid, TypMod: -1, TypeName: typ}
}

// testCatalog mirrors examples/demo/schema.sql plus relations for shapes
// the demo lacks (partitions, a view, a system relation).
func testCatalog() *catalog.Snapshot {
	orders := []catalog.Column{col("id", 23, "integer"), col("customer", 25, "text"), col("ssn", 25, "text"),
		col("email", 25, "text"), {Name: "amount", TypeOID: 1700, BaseOID: 1700, TypMod: 786438, TypeName: "numeric(12,2)"},
		col("region", 25, "text"), col("order_date", 1082, "date")}
	employees := []catalog.Column{col("id", 23, "integer"), col("name", 25, "text"), col("email", 25, "text"),
		col("salary", 23, "integer"), col("department", 25, "text"), col("hire_date", 1082, "date")}
	rels := []*catalog.Relation{
		{OID: 1001, Schema: "sales", Name: "orders", Kind: 'r', Owner: "postgres", Columns: orders},
		{OID: 1002, Schema: "hr", Name: "employees", Kind: 'r', Owner: "postgres", Columns: employees},
		{OID: 1003, Schema: "sales", Name: "orders_2024", Kind: 'r', Owner: "postgres", Columns: orders, RootSchema: "sales", RootName: "orders"},
		{OID: 1004, Schema: "sales", Name: "orders_view", Kind: 'v', Owner: "postgres", Columns: orders[:3]},
		{OID: 1005, Schema: "sales", Name: "regions", Kind: 'r', Owner: "postgres", Columns: []catalog.Column{col("region", 25, "text"), col("name", 25, "text")}},
		{OID: 1006, Schema: "public", Name: "orders", Kind: 'r', Owner: "postgres", Columns: []catalog.Column{col("id", 23, "integer")}},
		{OID: 2001, Schema: "pg_catalog", Name: "pg_class", Kind: 'r', Owner: "postgres", Columns: []catalog.Column{col("oid", 26, "oid"), col("relname", 19, "name")}},
		{OID: 2002, Schema: "pg_catalog", Name: "pg_stats", Kind: 'v', Owner: "postgres", Columns: []catalog.Column{col("attname", 19, "name")}},
	}
	return catalog.Static(1, rels, []string{"count", "lower", "upper", "now", "regexp_replace", "sha256", "encode",
		"convert_to", "query_to_xml", "set_config", "pg_sleep", "row_to_json", "coalesce", "generate_series", "length"})
}

func testEngine(t *testing.T) *policy.Engine {
	t.Helper()
	data, err := os.ReadFile("../examples/policies/hive.json")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ranger.ParseServicePolicies(data)
	if err != nil {
		t.Fatal(err)
	}
	sp.ServiceConfig["ranger.plugin.super.users"] = "admin"
	eng, err := policy.NewEngine(&ranger.Bundle{Policies: sp}, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

type goldenCase struct {
	name, user, sql string
	searchPath      []string
}

func parseCases(t *testing.T, path string) []goldenCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []goldenCase
	var cur *goldenCase
	var body []string
	flush := func() {
		if cur != nil {
			cur.sql = strings.TrimSpace(strings.Join(body, "\n"))
			out = append(out, *cur)
		}
		body = nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "-- case:"):
			flush()
			cur = &goldenCase{name: strings.TrimSpace(strings.TrimPrefix(line, "-- case:")), user: "bob", searchPath: []string{"$user", "public"}}
		case cur != nil && strings.HasPrefix(line, "-- user:") && len(body) == 0:
			cur.user = strings.TrimSpace(strings.TrimPrefix(line, "-- user:"))
		case cur != nil && strings.HasPrefix(line, "-- search_path:") && len(body) == 0:
			cur.searchPath = nil
			for _, s := range strings.Split(strings.TrimPrefix(line, "-- search_path:"), ",") {
				cur.searchPath = append(cur.searchPath, strings.TrimSpace(s))
			}
		case cur != nil:
			body = append(body, line)
		}
	}
	flush()
	return out
}

func TestRewriteGolden(t *testing.T) {
	eng := testEngine(t)
	files, _ := filepath.Glob("testdata/rewrite/*.sql")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".sql"), func(t *testing.T) {
			var got strings.Builder
			rw := New(Options{})
			for _, c := range parseCases(t, file) {
				subj, ok := testSubjects[c.user]
				if !ok {
					t.Fatalf("%s: unknown user %q", c.name, c.user)
				}
				sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo",
					SearchPath: c.searchPath, DefaultSearchPath: []string{"$user", "public"}}
				env := &Env{Policy: PolicyState{Engine: eng, Generation: 1}, Catalog: testCatalog(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
				res := rw.Rewrite(context.Background(), env, sess, c.sql)
				fmt.Fprintf(&got, "-- case: %s\n", c.name)
				if res.Err != nil {
					fmt.Fprintf(&got, "ERROR %s: %s\n", res.Err.Code, res.Err.Message)
					if res.Err.Detail != "" {
						fmt.Fprintf(&got, "DETAIL: %s\n", res.Err.Detail)
					}
				} else {
					if !res.Changed {
						got.WriteString("(unchanged)\n")
					}
					got.WriteString(res.SQL + "\n")
				}
				got.WriteString("\n")
			}
			golden := strings.TrimSuffix(file, ".sql") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got.String() != string(want) {
				t.Errorf("rewrite of %s differs from %s (run with -update and read the diff):\n%s", file, golden, diffLines(string(want), got.String()))
			}
		})
	}
}

// diffLines shows the first differing lines of two texts.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n want: %s\n  got: %s", i+1, wl, gl)
		}
	}
	return ""
}
