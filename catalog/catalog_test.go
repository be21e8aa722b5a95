package catalog

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgranger/pgranger/internal/testpg"
)

func TestEffectivePath(t *testing.T) {
	cases := []struct {
		path []string
		want []string
	}{
		{[]string{"$user", "public"}, []string{"pg_catalog", "bob", "public"}},
		{[]string{"sales", "pg_catalog"}, []string{"sales", "pg_catalog"}},
		{[]string{"pg_temp", "sales"}, []string{"pg_catalog", "sales"}},
		{nil, []string{"pg_catalog"}},
	}
	for _, c := range cases {
		if got := EffectivePath(c.path, "bob"); !reflect.DeepEqual(got, c.want) {
			t.Errorf("EffectivePath(%v) = %v, want %v", c.path, got, c.want)
		}
	}
}

func TestResolve(t *testing.T) {
	s := Static(1, []*Relation{
		{OID: 1, Schema: "public", Name: "orders", Kind: KindTable},
		{OID: 2, Schema: "sales", Name: "orders", Kind: KindTable},
		{OID: 3, Schema: "pg_catalog", Name: "pg_class", Kind: KindTable},
		{OID: 4, Schema: "public", Name: "pg_class", Kind: KindTable},
	}, nil)
	check := func(name string, path []string, wantOID uint32) {
		t.Helper()
		r, ok := s.Resolve(name, path, "bob")
		if !ok || r.OID != wantOID {
			t.Errorf("Resolve(%s, %v) = %v, want oid %d", name, path, r, wantOID)
		}
	}
	check("orders", []string{"$user", "public"}, 1)
	check("orders", []string{"sales", "public"}, 2)
	check("pg_class", []string{"public"}, 3)               // pg_catalog is searched first
	check("pg_class", []string{"public", "pg_catalog"}, 4) // unless the path places it later
	if _, ok := s.Resolve("orders", []string{"hr"}, "bob"); ok {
		t.Error("orders must not resolve on path hr")
	}
}

// The tests that need PostgreSQL share one cluster (testpg.Shared).
func TestMain(m *testing.M) { testpg.Main(m) }

// TestLoad reads a real database: columns in attnum order without dropped
// ones, domains' base types, partitions and inheritance children mapped to
// their root, and a version that moves only when something changed.
func TestLoad(t *testing.T) {
	const db = "catalog_load"
	c := testpg.Database(t, db)
	ctx := context.Background()
	if err := c.Exec(ctx, db, `
		CREATE DOMAIN posint AS integer CHECK (VALUE > 0);
		CREATE TABLE public.t (a int, gone text, b posint, c varchar(10));
		ALTER TABLE public.t DROP COLUMN gone;
		CREATE TABLE public.p (id int, d date) PARTITION BY RANGE (d);
		CREATE TABLE public.p_2024 PARTITION OF public.p FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
		CREATE TABLE public.sub_2024 PARTITION OF public.p FOR VALUES FROM ('2025-01-01') TO ('2026-01-01') PARTITION BY RANGE (d);
		CREATE TABLE public.leaf PARTITION OF public.sub_2024 FOR VALUES FROM ('2025-01-01') TO ('2025-06-01');
		CREATE TABLE public.parent (x int);
		CREATE TABLE public.child () INHERITS (public.parent);
		CREATE VIEW public.v AS SELECT a FROM public.t;`); err != nil {
		t.Fatal(err)
	}
	cat, err := Open(ctx, c.SuperDSN(db), db, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	s := cat.Current()
	if s.ServerEncoding != "UTF8" || !s.HasICU {
		t.Errorf("encoding %q, ICU %v", s.ServerEncoding, s.HasICU)
	}
	tbl, ok := s.Lookup("public", "t")
	if !ok {
		t.Fatal("public.t not found")
	}
	var names []string
	for _, col := range tbl.Columns {
		names = append(names, col.Name+":"+col.TypeName)
	}
	if want := []string{"a:integer", "b:public.posint", "c:character varying(10)"}; !reflect.DeepEqual(names, want) {
		t.Errorf("columns %v, want %v", names, want)
	}
	if b, _ := tbl.Column("b"); b.BaseOID != 23 || b.TypeOID == 23 {
		t.Errorf("domain column: type %d base %d", b.TypeOID, b.BaseOID)
	}
	for _, name := range []string{"p_2024", "leaf", "sub_2024"} {
		r, _ := s.Lookup("public", name)
		if r == nil || r.RootName != "p" {
			t.Errorf("%s root = %+v, want p", name, r)
		}
	}
	if r, _ := s.Lookup("public", "child"); r == nil || r.RootName != "parent" {
		t.Errorf("inheritance child root: %+v", r)
	}
	if r, _ := s.Lookup("public", "v"); r == nil || r.Kind != KindView {
		t.Errorf("view: %+v", r)
	}
	if !s.IsCatalogFunction("lower") || s.IsCatalogFunction("no_such_function") {
		t.Error("catalog functions")
	}

	v1 := s.Version
	s2, err := cat.Refresh(ctx, 0)
	if err != nil || s2.Version != v1 {
		t.Errorf("unchanged reload moved the version: %d → %d (%v)", v1, s2.Version, err)
	}
	if err := c.Exec(ctx, db, "ALTER TABLE public.t ADD COLUMN d text"); err != nil {
		t.Fatal(err)
	}
	s3, err := cat.Refresh(ctx, 0)
	if err != nil || s3.Version == v1 {
		t.Errorf("a new column must move the version (%v)", err)
	}

	// Two tables created in quick succession are both found: the second
	// Refresh within the interval waits for a reload instead of answering
	// from the snapshot taken before the table existed.
	for _, name := range []string{"quick1", "quick2"} {
		if err := c.Exec(ctx, db, "CREATE TABLE public."+name+" (a int)"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		s, err := cat.Refresh(ctx, 300*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.Lookup("public", name); !ok {
			t.Errorf("%s not found after Refresh", name)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Refresh took %v", d)
		}
	}
}

// TestBuiltinsMatchServer checks the embedded PostgreSQL 15 tables that
// Static snapshots use against a real server's pg_catalog.
func TestBuiltinsMatchServer(t *testing.T) {
	c := testpg.Shared(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.SuperDSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, builtinsSQL)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		if k := line[0]; k != 'O' && k != 'T' {
			got = append(got, line)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	want := strings.Split(strings.TrimSuffix(builtinsPG15, "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("builtins_pg15.tsv differs from this server's pg_catalog (%d lines, embedded %d); regenerate it from builtinsSQL on PostgreSQL 15", len(got), len(want))
	}
	// A fresh database shadows no operator, and no type but the row type
	// of information_schema's view _pg_user_mappings.
	var shadowed []string
	if err := conn.QueryRow(ctx, "SELECT array_agg(l ORDER BY l) FROM ("+builtinsSQL+") q(l) WHERE l ~ '^[OT]'").Scan(&shadowed); err != nil {
		t.Fatal(err)
	}
	if strings.Join(shadowed, "|") != "T\t_pg_user_mappings" {
		t.Errorf("shadowing lines on a fresh database: %q", shadowed)
	}
}
