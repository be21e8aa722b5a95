package sqlrewrite

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
)

// TestRewriteGoldenPostgres runs every golden case that is one SELECT
// against a real PostgreSQL holding testCatalog's relations: when the
// user's text prepares and runs, the rewritten text must too, with the same
// result columns (names and type OIDs: the wrapper keeps the same visible
// name and the same columns in the same order, docs/security.md,
// "Mechanisms": The wrapper); when the user's text fails, the rewrite
// must not make it succeed. This catches what pg_query cannot: ambiguous or
// unknown names after wrapping, type errors in masks and filters. A case
// with a "-- pg:" note has an accepted difference: its rewrite need only
// prepare and run, or, for a note starting with "fails", must fail. And for
// every case that is one SELECT, pg_query's deparse of the user's own text
// (what the rewriter renders around its wrappers) must return the same rows.
func TestRewriteGoldenPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	ctx := context.Background()
	_, conn := pgDatabase(t, "demo", goldenSchemaSQL(testRelations()))
	eng := testEngine(t)
	files, _ := filepath.Glob("testdata/rewrite/*.sql")
	checked, deparsed := 0, 0
	executed := 0
	for _, file := range files {
		for _, gr := range runGoldenFile(t, eng, file) {
			tree, err := pg.Parse(gr.c.sql)
			name := filepath.Base(file) + ": " + gr.c.name
			if err == nil && (len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil) {
				// Other statements (DML, DDL, EXPLAIN, PREPARE/EXECUTE):
				// the rewrite must run wherever the user's text runs.
				if gr.res.Err == nil && gr.res.Changed && runnable(tree) {
					if err := goldenExecPG(ctx, conn, gr.c, gr.res.SQL, gr.res.Views); err != nil {
						t.Errorf("%s: %v\nuser SQL: %s\nrewritten: %s", name, err, gr.c.sql, gr.res.SQL)
					}
					executed++
				}
				continue
			}
			if err != nil {
				continue
			}
			// The rewriter sends pg_query's deparse of the tree: for the
			// user's own text it must return the same rows.
			if text, err := pg.Deparse(tree); err == nil && text != gr.c.sql {
				want, werr := goldenRows(ctx, conn, gr.c.searchPath, gr.c.sql)
				if werr == nil {
					got, gerr := goldenRows(ctx, conn, gr.c.searchPath, text)
					if gerr != nil || got != want {
						t.Errorf("%s: the deparsed text differs from the user's in PostgreSQL (%v)\nuser SQL: %s\ndeparsed: %s\n want %s\n  got %s", name, gerr, gr.c.sql, text, want, got)
					}
					deparsed++
				}
			}
			if gr.res.Err != nil || !gr.res.Changed {
				continue
			}
			if err := goldenComparePG(ctx, conn, gr.c, gr.res.SQL, gr.res.Views); err != nil {
				t.Errorf("%s: %v\nuser SQL: %s\nrewritten: %s", name, err, gr.c.sql, gr.res.SQL)
			}
			checked++
		}
	}
	t.Logf("%d rewritten SELECT cases checked against PostgreSQL, %d deparsed texts compared, %d other statements executed", checked, deparsed, executed)
}

// runnable reports whether a text can run without a client on the other
// end (COPY FROM STDIN needs one) and without state from earlier
// statements (cursors).
func runnable(tree *pg.ParseResult) bool {
	for _, st := range tree.Stmts {
		if c := st.Stmt.GetCopyStmt(); c != nil {
			return false
		}
		current := false
		walkNodes(st.Stmt, func(n *pg.Node) bool {
			current = current || n.GetCurrentOfExpr() != nil
			return true
		})
		if current {
			return false
		}
	}
	return true
}

// goldenExecPG runs the user's and the rewritten text (simple protocol,
// each in a transaction rolled back, prepared statements deallocated
// after): when the user's text runs, the rewrite must too. A "-- pg:"
// note starting with "fails" expects the rewrite to fail (a check
// option); any other note only requires the rewrite to run.
func goldenExecPG(ctx context.Context, conn *pgx.Conn, c goldenCase, rewritten string, views []View) error {
	var path []string
	for _, s := range c.searchPath {
		path = append(path, pgx.Identifier{s}.Sanitize())
	}
	run := func(sql string, views []View) error {
		if _, err := conn.Exec(ctx, "BEGIN; SET LOCAL statement_timeout = '5s'; SET LOCAL search_path = "+strings.Join(path, ", "), pgx.QueryExecModeSimpleProtocol); err != nil {
			return err
		}
		defer conn.Exec(ctx, "ROLLBACK; DEALLOCATE ALL", pgx.QueryExecModeSimpleProtocol)
		for _, v := range views {
			if _, err := conn.Exec(ctx, v.Create, pgx.QueryExecModeSimpleProtocol); err != nil {
				return fmt.Errorf("creating %s: %w", v.Name, err)
			}
		}
		_, err := conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
		return err
	}
	newErr := run(rewritten, views)
	switch {
	case strings.HasPrefix(c.pgNote, "fails"):
		if newErr == nil {
			return fmt.Errorf("the rewrite was expected to fail in PostgreSQL (%s) but runs", c.pgNote)
		}
		return nil
	case c.pgNote != "":
		if newErr != nil {
			return fmt.Errorf("the rewrite fails: %v", newErr)
		}
		return nil
	}
	if origErr := run(c.sql, nil); origErr == nil && newErr != nil {
		return fmt.Errorf("the user's text runs but the rewrite fails: %v", newErr)
	}
	return nil
}

// goldenRows runs sql with the search_path and returns its rows as text,
// sorted (a deparse must not change which rows come back, and ORDER BY
// without ties is rare in the cases).
func goldenRows(ctx context.Context, conn *pgx.Conn, searchPath []string, sql string) (string, error) {
	var path []string
	for _, s := range searchPath {
		path = append(path, pgx.Identifier{s}.Sanitize())
	}
	if _, err := conn.Exec(ctx, "BEGIN; SET LOCAL statement_timeout = '5s'; SET LOCAL search_path = "+strings.Join(path, ", "), pgx.QueryExecModeSimpleProtocol); err != nil {
		return "", err
	}
	defer conn.Exec(ctx, "ROLLBACK", pgx.QueryExecModeSimpleProtocol)
	rows, err := conn.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return "", err
	}
	var out []string
	for rows.Next() {
		var cells []string
		for _, v := range rows.RawValues() {
			if v == nil {
				cells = append(cells, "NULL")
			} else {
				cells = append(cells, fmt.Sprintf("%q", v))
			}
		}
		out = append(out, "("+strings.Join(cells, ",")+")")
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", err
	}
	sort.Strings(out)
	return strings.Join(out, " "), nil
}

// goldenComparePG prepares and runs the user's and the rewritten text with
// the case's search_path, each in a transaction that is rolled back.
func goldenComparePG(ctx context.Context, conn *pgx.Conn, c goldenCase, rewritten string, views []View) error {
	var path []string
	for _, s := range c.searchPath {
		path = append(path, pgx.Identifier{s}.Sanitize())
	}
	run := func(sql string, views []View) (*pgconn.StatementDescription, error, error) {
		if _, err := conn.Exec(ctx, "BEGIN; SET LOCAL statement_timeout = '5s'; SET LOCAL search_path = "+strings.Join(path, ", "), pgx.QueryExecModeSimpleProtocol); err != nil {
			return nil, nil, err
		}
		defer conn.Exec(ctx, "ROLLBACK", pgx.QueryExecModeSimpleProtocol)
		for _, v := range views {
			if _, err := conn.Exec(ctx, v.Create, pgx.QueryExecModeSimpleProtocol); err != nil {
				return nil, fmt.Errorf("creating %s: %w", v.Name, err), nil
			}
		}
		desc, err := conn.Prepare(ctx, "", sql)
		if err != nil {
			return nil, err, nil
		}
		rows, err := conn.Query(ctx, sql, pgx.QueryExecModeExec)
		if err == nil {
			for rows.Next() {
			}
			rows.Close()
			err = rows.Err()
		}
		return desc, nil, err
	}
	newDesc, newPrep, newRun := run(rewritten, views)
	switch {
	case strings.HasPrefix(c.pgNote, "fails"):
		// An accepted limitation: the rewrite fails in PostgreSQL.
		if newPrep == nil && newRun == nil {
			return fmt.Errorf("the rewrite was expected to fail in PostgreSQL (%s) but runs", c.pgNote)
		}
		return nil
	case c.pgNote != "":
		// An accepted difference (Hive session functions, the type of a
		// whole-row reference): the rewrite must still prepare and run.
		if newPrep != nil || newRun != nil {
			return fmt.Errorf("the rewrite fails: %v %v", newPrep, newRun)
		}
		return nil
	}
	origDesc, origPrep, origRun := run(c.sql, nil)
	switch {
	case origPrep != nil && newPrep == nil:
		return fmt.Errorf("the user's text fails in PostgreSQL (%v) but the rewrite prepares", origPrep)
	case origPrep != nil:
		return nil // both fail to prepare: the client sees an error either way
	case newPrep != nil:
		return fmt.Errorf("the user's text prepares but the rewrite does not: %v", newPrep)
	}
	if got, want := fieldList(newDesc.Fields), fieldList(origDesc.Fields); got != want {
		return fmt.Errorf("result columns differ:\n want %s\n  got %s", want, got)
	}
	if origRun == nil && newRun != nil {
		return fmt.Errorf("the user's text runs but the rewrite fails: %v", newRun)
	}
	return nil
}

func fieldList(fs []pgconn.FieldDescription) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, fmt.Sprintf("%s:%d", f.Name, f.DataTypeOID))
	}
	return strings.Join(parts, ", ")
}

// goldenSchemaSQL creates testCatalog's relations (system ones exist
// already) with a few rows, as in examples/demo/schema.sql.
// rootKind is the kind of the root of r among rels (0 when it is not
// there).
func rootKind(rels []*catalog.Relation, r *catalog.Relation) byte {
	for _, p := range rels {
		if p.Schema == r.RootSchema && p.Name == r.RootName {
			return p.Kind
		}
	}
	return 0
}

func goldenSchemaSQL(rels []*catalog.Relation) string {
	var b strings.Builder
	schemas := map[string]bool{"public": true}
	for _, r := range rels {
		if r.IsSystem() {
			continue
		}
		q := pgx.Identifier{r.Schema, r.Name}.Sanitize()
		if !schemas[r.Schema] {
			schemas[r.Schema] = true
			fmt.Fprintf(&b, "CREATE SCHEMA %s;\n", pgx.Identifier{r.Schema}.Sanitize())
		}
		var cols, extra []string
		var parent map[string]bool
		if r.RootName != "" && (r.RootSchema != r.Schema || r.RootName != r.Name) {
			parent = map[string]bool{}
			for _, p := range rels {
				if p.Schema == r.RootSchema && p.Name == r.RootName {
					for _, c := range p.Columns {
						parent[c.Name] = true
					}
				}
			}
		}
		for _, c := range r.Columns {
			def := pgx.Identifier{c.Name}.Sanitize() + " " + c.TypeName
			if c.Generated != "" {
				def += " GENERATED ALWAYS AS (" + c.Generated + ") STORED"
			}
			cols = append(cols, def)
			if parent != nil && !parent[c.Name] {
				extra = append(extra, def) // a child's own columns
			}
		}
		switch {
		case r.Kind == catalog.KindSequence:
			fmt.Fprintf(&b, "CREATE SEQUENCE %s;\n", q)
		case r.Kind == catalog.KindView && r.ViewDef != "":
			fmt.Fprintf(&b, "CREATE VIEW %s AS %s\n", q, r.ViewDef)
		case r.Kind == catalog.KindView:
			var sel []string
			for _, c := range r.Columns {
				sel = append(sel, "NULL::"+c.TypeName+" AS "+pgx.Identifier{c.Name}.Sanitize())
			}
			fmt.Fprintf(&b, "CREATE VIEW %s AS SELECT %s;\n", q, strings.Join(sel, ", "))
		case r.Kind == catalog.KindPartitionedTable:
			fmt.Fprintf(&b, "CREATE TABLE %s (%s) PARTITION BY LIST (%s);\n", q, strings.Join(cols, ", "), pgx.Identifier{r.Columns[0].Name}.Sanitize())
		case r.RootName != "" && rootKind(rels, r) == catalog.KindPartitionedTable:
			fmt.Fprintf(&b, "CREATE TABLE %s PARTITION OF %s DEFAULT;\n", q, pgx.Identifier{r.RootSchema, r.RootName}.Sanitize())
		case r.RootName != "" && (r.RootSchema != r.Schema || r.RootName != r.Name):
			fmt.Fprintf(&b, "CREATE TABLE %s (%s) INHERITS (%s);\n", q, strings.Join(extra, ", "), pgx.Identifier{r.RootSchema, r.RootName}.Sanitize())
		default:
			fmt.Fprintf(&b, "CREATE TABLE %s (%s);\n", q, strings.Join(cols, ", "))
		}
	}
	b.WriteString(`
INSERT INTO sales.orders VALUES
    (1, 'Ada Lovelace',    '111-11-1111', 'ada@example.com',    1200.50, 'US',   '2024-01-15'),
    (2, 'Alan Turing',     '222-22-2222', 'alan@example.com',    830.00, 'EU',   '2024-02-03'),
    (6, 'Donald Knuth',    '666-66-6666', 'don@example.com',     955.10, 'APAC', '2024-06-12'),
    (8, 'John Backus',     NULL,          NULL,                   42.00, 'APAC', NULL);
INSERT INTO sales.orders_2024 VALUES
    (9, 'Niklaus Wirth',   '999-99-9999', 'nik@example.com',     100.00, 'EU',   '2024-09-09');
INSERT INTO hr.employees VALUES
    (1, 'Margaret Hamilton', 'margaret@example.com', 185000, 'Engineering', '2019-09-01'),
    (2, 'Dennis Ritchie',    'dennis@example.com',   168000, 'Engineering', '2018-06-25');
INSERT INTO sales.regions VALUES ('US', 'United States'), ('EU', 'Europe');
INSERT INTO public.orders VALUES (1), (2);
INSERT INTO sales.ledger VALUES (1, 'DE89370400440532013000', 10.00, 'main'), (2, 'FR7630006000011234567890189', -5.00, 'hidden');
`)
	return b.String()
}
