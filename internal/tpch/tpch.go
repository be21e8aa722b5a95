// Package tpch loads TPC-H-shaped data, builds the physical copies a
// governed user's view of it amounts to, and runs the 22 TPC-H queries, for
// the differential test (e2e/tpch_test.go) and the benchmark (bench -tpch).
//
// The tables of schema tpch are read through pgranger by a user whose
// policies (policies.json) filter customer, orders and supplier and mask
// seven columns. The copies in schema tpch_copy are written directly to
// PostgreSQL from what that user reads, so they hold exactly the rows and
// masked values the user may SELECT. A governed query should return what
// the same query returns on the copies, at about the copies' cost
// (docs/performance.md, "TPC-H").
package tpch

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/*.sql queries/*.sql policies.json
var files embed.FS

const (
	// Schema holds the governed tables.
	Schema = "tpch"
	// CopySchema holds the physical filtered-and-masked copies.
	CopySchema = "tpch_copy"
	// ServiceName is the Ranger service of policies.json.
	ServiceName = "tpch_hive"
	// Group is the group policies.json governs.
	Group = "tpch_analysts"
)

// Tables are the TPC-H tables, in load order.
var Tables = []string{"region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"}

// Policies is the Ranger policy bundle (ServicePolicies JSON) for Group:
// select on every tpch table, row filters on customer, orders and
// supplier, masks on c_phone, c_address, c_name, s_phone, s_address,
// o_clerk and o_comment.
func Policies() []byte { return mustRead("policies.json") }

// Query is one of the 22 TPC-H queries, unqualified: it runs against the
// schema on the session's search_path.
type Query struct {
	Name string // "q01" … "q22"
	SQL  string
}

// Queries returns the 22 queries in order.
func Queries() []Query {
	entries, err := files.ReadDir("queries")
	if err != nil {
		panic(err)
	}
	var qs []Query
	for _, e := range entries {
		qs = append(qs, Query{Name: strings.TrimSuffix(e.Name(), ".sql"), SQL: string(mustRead(path.Join("queries", e.Name())))})
	}
	return qs
}

func mustRead(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(err) // embedded: cannot happen
	}
	return b
}

// execFile runs an embedded SQL file as one simple-protocol Query on conn,
// with search_path set to schema.
func execFile(ctx context.Context, conn *pgx.Conn, schema, name string) error {
	if err := setSearchPath(ctx, conn, schema); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, string(mustRead(name)), pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("%s in schema %s: %w", name, schema, err)
	}
	return nil
}

func setSearchPath(ctx context.Context, conn *pgx.Conn, schema string) error {
	_, err := conn.Exec(ctx, "SET search_path TO "+pgx.Identifier{schema}.Sanitize(), pgx.QueryExecModeSimpleProtocol)
	return err
}

// Load creates schema Schema on conn (a direct superuser connection) and
// fills it at scale (1 = TPC-H's SF 1, 6 million lineitems; 0.025 about
// 150,000) with sql/data.sql, then adds keys and indexes, grants select to
// reader (the proxy's service role) and vacuums and analyzes the tables.
func Load(ctx context.Context, conn *pgx.Conn, scale float64, reader string) error {
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+Schema); err != nil {
		return err
	}
	if err := execFile(ctx, conn, Schema, "sql/schema.sql"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "SET tpch.scale = "+quote(strconv.FormatFloat(scale, 'f', -1, 64)), pgx.QueryExecModeSimpleProtocol); err != nil {
		return err
	}
	if err := execFile(ctx, conn, Schema, "sql/data.sql"); err != nil {
		return err
	}
	if err := execFile(ctx, conn, Schema, "sql/indexes.sql"); err != nil {
		return err
	}
	role := pgx.Identifier{reader}.Sanitize()
	if _, err := conn.Exec(ctx, fmt.Sprintf("GRANT USAGE ON SCHEMA %s TO %s; GRANT SELECT ON ALL TABLES IN SCHEMA %s TO %s",
		Schema, role, Schema, role), pgx.QueryExecModeSimpleProtocol); err != nil {
		return err
	}
	return analyze(ctx, conn, Schema)
}

// BuildCopies creates schema CopySchema on direct (a superuser connection
// to the backend) with the tables of schema.sql, fills every table with
// what governed (a connection through pgranger as the governed user)
// reads of the same table in Schema — COPY … TO STDOUT, which pgranger
// rewrites to its filtered and masked SELECT — then adds the same keys and
// indexes and vacuums and analyzes the tables.
func BuildCopies(ctx context.Context, governed, direct *pgx.Conn) error {
	if _, err := direct.Exec(ctx, "CREATE SCHEMA "+CopySchema); err != nil {
		return err
	}
	if err := execFile(ctx, direct, CopySchema, "sql/schema.sql"); err != nil {
		return err
	}
	for _, t := range Tables {
		if err := copyTable(ctx, governed, direct, t); err != nil {
			return fmt.Errorf("copying %s: %w", t, err)
		}
	}
	if err := execFile(ctx, direct, CopySchema, "sql/indexes.sql"); err != nil {
		return err
	}
	return analyze(ctx, direct, CopySchema)
}

// copyTable streams one table from the governed read into its copy.
func copyTable(ctx context.Context, governed, direct *pgx.Conn, table string) error {
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := governed.PgConn().CopyTo(ctx, w, fmt.Sprintf("COPY %s.%s TO STDOUT", Schema, table))
		w.CloseWithError(err) // nil: the reader sees EOF
		done <- err
	}()
	_, err := direct.PgConn().CopyFrom(ctx, r, fmt.Sprintf("COPY %s.%s FROM STDIN", CopySchema, table))
	r.CloseWithError(io.ErrClosedPipe) // unblocks the writer if CopyFrom stopped early
	if rerr := <-done; rerr != nil {
		return fmt.Errorf("reading through pgranger: %w", rerr)
	}
	return err
}

// analyze vacuums and analyzes the tables of schema: statistics for the
// planner, and the visibility map set, so freshly loaded tables and
// freshly copied ones are read alike (index-only scans, no per-row
// visibility checks).
func analyze(ctx context.Context, conn *pgx.Conn, schema string) error {
	names := make([]string, len(Tables))
	for i, t := range Tables {
		names[i] = schema + "." + t
	}
	_, err := conn.Exec(ctx, "VACUUM (ANALYZE) "+strings.Join(names, ", "), pgx.QueryExecModeSimpleProtocol)
	return err
}

// Counts returns the row count of every table of schema, "table=n" in
// Tables' order.
func Counts(ctx context.Context, conn *pgx.Conn, schema string) ([]string, error) {
	var out []string
	for _, t := range Tables {
		var n int64
		if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s.%s", schema, t), pgx.QueryExecModeSimpleProtocol).Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("%s=%d", t, n))
	}
	return out, nil
}

// UseSchema sets the session's search_path to schema, so the unqualified
// queries read it.
func UseSchema(ctx context.Context, conn *pgx.Conn, schema string) error {
	return setSearchPath(ctx, conn, schema)
}

// Run executes sql in mode and returns the result as lines: first the
// column names, then every row as its values in text format joined by
// "|", NULL as "NULL" — what a user reads, comparable byte for byte.
func Run(ctx context.Context, conn *pgx.Conn, sql string, mode pgx.QueryExecMode) ([]string, error) {
	rows, err := conn.Query(ctx, sql, mode, pgx.QueryResultFormats{pgx.TextFormatCode})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for _, f := range rows.FieldDescriptions() {
		names = append(names, f.Name)
	}
	out := []string{strings.Join(names, "|")}
	for rows.Next() {
		vals := rows.RawValues()
		parts := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				parts[i] = "NULL"
			} else {
				parts[i] = string(v)
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	return out, rows.Err()
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// FilterIndexes gives every index of a row-filtered table in Schema a
// partial twin whose predicate is the table's row filter (the policies of
// Policies), and analyzes the tables. The copies' indexes hold only the
// rows the user sees; these are the same indexes on the source, which a
// deployment can build for the filters its users read through (a probe
// of such an index needs no heap visit to check the filter, so an
// index-only scan stays one). It returns the statements it ran.
func FilterIndexes(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	var bundle struct {
		Policies []struct {
			PolicyType int `json:"policyType"`
			Resources  map[string]struct {
				Values []string `json:"values"`
			} `json:"resources"`
			RowFilterPolicyItems []struct {
				RowFilterInfo struct {
					FilterExpr string `json:"filterExpr"`
				} `json:"rowFilterInfo"`
			} `json:"rowFilterPolicyItems"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(Policies(), &bundle); err != nil {
		return nil, err
	}
	var done []string
	for _, p := range bundle.Policies {
		if p.PolicyType != 2 || len(p.Resources["table"].Values) != 1 || len(p.RowFilterPolicyItems) != 1 {
			continue
		}
		table, filter := p.Resources["table"].Values[0], p.RowFilterPolicyItems[0].RowFilterInfo.FilterExpr
		rows, err := conn.Query(ctx, `SELECT c.relname, pg_get_indexdef(i.indexrelid)
			FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
			WHERE i.indrelid = (quote_ident($1) || '.' || quote_ident($2))::regclass AND i.indpred IS NULL ORDER BY 1`, Schema, table)
		if err != nil {
			return nil, err
		}
		var defs [][2]string
		for rows.Next() {
			var name, def string
			if err := rows.Scan(&name, &def); err != nil {
				rows.Close()
				return nil, err
			}
			defs = append(defs, [2]string{name, def})
		}
		rows.Close()
		if rows.Err() != nil {
			return nil, rows.Err()
		}
		for _, d := range defs {
			// "CREATE [UNIQUE] INDEX name ON schema.table USING …": the
			// twin is named name_visible and has the filter as predicate.
			stmt := strings.Replace(d[1], " INDEX "+d[0]+" ON ", " INDEX "+d[0]+"_visible ON ", 1) + " WHERE " + filter
			if _, err := conn.Exec(ctx, stmt); err != nil {
				return nil, fmt.Errorf("%s: %w", stmt, err)
			}
			done = append(done, stmt)
		}
		if _, err := conn.Exec(ctx, "ANALYZE "+Schema+"."+table); err != nil {
			return nil, err
		}
	}
	return done, nil
}
