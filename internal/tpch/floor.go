package tpch

import (
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/jackc/pgx/v5"
)

// FloorSchema holds plain views over the tables of Schema, each the SQL
// pgranger sends for the governed user's `SELECT * FROM <table>` (see
// BuildFloor).
const FloorSchema = "tpch_floor"

// BuildFloor creates schema FloorSchema on conn (a direct superuser
// connection) with one plain view per table of Schema whose query is
// rewritten(table): the SQL pgranger would send for the governed user's
// `SELECT * FROM tpch.<table>` (`pgranger check` prints it) — the
// table's row filter in the WHERE clause of a subquery, its masks (or
// stored masks) in the select list. The views return the same rows and
// values as the copies.
//
// A plain view has no barrier: the planner flattens it and pushes and
// orders every predicate of a query on it as it likes, leakproof or not.
// So a query on these views costs what pgranger's own filters and masks
// cost with no barrier at all. Any row-filter enforcement reading the
// source tables (pgranger's rewrite, PostgreSQL's row-level security,
// security-barrier views) must read the hidden rows and test the filter
// as these views do. It is a benchmark yardstick only:
// a user querying such views could make a predicate of theirs tell hidden
// rows' values, which is what pgranger's barrier prevents.
func BuildFloor(ctx context.Context, conn *pgx.Conn, rewritten func(table string) (string, error)) error {
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+FloorSchema); err != nil {
		return err
	}
	for _, t := range Tables {
		sql, err := rewritten(t)
		if err != nil {
			return fmt.Errorf("floor view of %s: %w", t, err)
		}
		view := fmt.Sprintf("CREATE VIEW %s.%s AS %s", FloorSchema, pgx.Identifier{t}.Sanitize(), sql)
		if _, err := conn.Exec(ctx, view); err != nil {
			return fmt.Errorf("%s: %w", view, err)
		}
	}
	return nil
}

// FloorQuery is the statement whose rewrite BuildFloor makes table's view.
func FloorQuery(table string) string {
	return "SELECT * FROM " + Schema + "." + pgx.Identifier{table}.Sanitize()
}

// RewrittenSQL runs cmd, a `pgranger check` of one allowed statement, and
// returns the SQL it prints pgranger would send ("rewritten SQL:" or "SQL
// sent unchanged:").
func RewrittenSQL(cmd *exec.Cmd) (string, error) {
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	_, sql, ok := strings.Cut(string(out), "rewritten SQL:\n")
	if !ok {
		_, sql, ok = strings.Cut(string(out), "SQL sent unchanged:\n") // a table no policy filters or masks
	}
	if !ok || strings.TrimSpace(sql) == "" {
		return "", fmt.Errorf("%s printed no rewritten SQL:\n%s", strings.Join(cmd.Args, " "), out)
	}
	return strings.TrimSpace(sql), nil
}
