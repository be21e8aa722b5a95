package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgranger/pgranger/internal/testrepo"
)

// TestMaskExamplesThroughProxy runs every vector of the shared
// mask-examples.json (the values Hive's mask UDFs return) through the
// built proxy against real PostgreSQL and compares the exact text a client
// receives.
func TestMaskExamplesThroughProxy(t *testing.T) {
	requireCluster(t)
	raw, err := os.ReadFile(testrepo.Shared(t, "ranger", "mask-examples.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Vectors []struct {
			Mask     string            `json:"mask"`
			Type     string            `json:"type"`
			Input    any               `json:"input"`
			Expected any               `json:"expected"`
			Config   map[string]string `json:"config"`
		} `json:"vectors"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // 9223372036854775807 must not become a float
	if err := dec.Decode(&file); err != nil {
		t.Fatal(err)
	}
	pgType := map[string]string{"text": "text", "int": "integer", "smallint": "smallint", "bigint": "bigint",
		"date": "date", "decimal": "numeric", "double": "double precision", "varchar": "varchar", "string": "text"}

	ctx := context.Background()
	var ddl strings.Builder
	sha256Doc, sha512Doc := demoPolicies(t), demoPolicies(t)
	for _, d := range []policyDoc{sha256Doc, sha512Doc} {
		d.add(accessPolicy(950, "maskex", "*", "*", []string{"public"}))
	}
	type check struct {
		name, table, want string
		sha512            bool
	}
	var checks []check
	for i, v := range file.Vectors {
		typ, ok := pgType[v.Type]
		if !ok {
			t.Fatalf("vector %d: unknown type %q", i, v.Type)
		}
		table := fmt.Sprintf("v%02d", i)
		input := "NULL"
		if v.Input != nil {
			input = "'" + strings.ReplaceAll(fmt.Sprint(v.Input), "'", "''") + "'"
		}
		fmt.Fprintf(&ddl, "DROP TABLE IF EXISTS maskex.%[1]s; CREATE TABLE maskex.%[1]s (v %[2]s); INSERT INTO maskex.%[1]s VALUES (%[3]s::%[2]s);\n", table, typ, input)
		want := "NULL"
		if v.Expected != nil {
			want = fmt.Sprint(v.Expected)
		}
		if v.Type == "date" && want == "0000-01-01" {
			want = "0001-01-01 BC" // Hive's year 0 is 1 BC in PostgreSQL: the same day
		}
		sha512 := v.Config["hive.masking.algo"] == "sha512"
		doc := sha256Doc
		if sha512 {
			doc = sha512Doc
		}
		doc.add(maskPolicy(1000+i, "maskex", table, "v", []string{"public"}, v.Mask, ""))
		checks = append(checks, check{name: fmt.Sprintf("%s %s %v", v.Mask, v.Type, v.Input), table: table, want: want, sha512: sha512})
	}
	if err := cluster.Exec(ctx, "demo", ddl.String()); err != nil {
		t.Fatal(err)
	}
	p256 := startProxy(t, proxyOptions{policies: sha256Doc.bytes(t)})
	p512 := startProxy(t, proxyOptions{policies: sha512Doc.bytes(t), env: map[string]string{"PGRANGER_POLICY__HASH_ALGO": "sha512"}})
	c256, c512 := connect(t, p256, "bob"), connect(t, p512, "bob")

	passed := 0
	for _, c := range checks {
		conn := c256
		if c.sha512 {
			conn = c512
		}
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
			got, err := tryRows(conn, "SELECT v FROM maskex."+c.table, mode)
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			if len(got) != 1 || got[0] != c.want {
				t.Errorf("%s (%v): got %q, want %q", c.name, mode, got, c.want)
				continue
			}
			if mode == pgx.QueryExecModeSimpleProtocol {
				passed++
			}
		}
	}
	t.Logf("mask examples through the proxy: %d/%d passed", passed, len(checks))
}
