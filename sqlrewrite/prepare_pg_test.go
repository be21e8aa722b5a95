package sqlrewrite

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// EXECUTE through pgranger against EXECUTE on PostgreSQL itself: the same
// PREPARE and EXECUTE, on the same data, as a user no policy restricts
// (so what is compared is the binding of the arguments, not a policy),
// must return the same rows, or fail with the same SQLSTATE and (unless
// the case says why not) the same message.
func TestExecuteLikePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	ctx := context.Background()
	_, conn := pgDatabase(t, "execute", goldenSchemaSQL(testRelations()))
	const byName = "PREPARE p (text) AS SELECT region FROM sales.regions WHERE name = $1"
	const double = "PREPARE q (int) AS SELECT $1 * 2 AS x, region FROM sales.regions ORDER BY region"
	// inValues: PostgreSQL refuses the argument where pgranger evaluates
	// it, a VALUES list, and names that place ("… are not allowed in
	// VALUES") instead of EXECUTE parameters.
	const inValues = "evaluated in VALUES"
	cases := []struct {
		prepare, execute string
		msgDiffers       string
	}{
		// Column references name nothing: the argument is evaluated in no
		// table's scope.
		{prepare: byName, execute: "EXECUTE p(name)"},
		{prepare: byName, execute: "EXECUTE p(regions.name)"},
		{prepare: byName, execute: "EXECUTE p(sales.regions.name)"},
		{prepare: byName, execute: "EXECUTE p(lower(name))"},
		{prepare: byName, execute: "EXECUTE p(max(name))"},
		{prepare: byName, execute: "EXECUTE p(x.*)"},
		// Values.
		{prepare: byName, execute: "EXECUTE p('Europe')"},
		{prepare: byName, execute: "EXECUTE p('Eur' || 'ope')"},
		{prepare: byName, execute: "EXECUTE p(NULL)"},
		{prepare: byName, execute: "EXECUTE p(1)"},
		{prepare: double, execute: "EXECUTE q(1 + 1)"},
		{prepare: double, execute: "EXECUTE q('5')"},
		{prepare: double, execute: "EXECUTE q(1.6)"},
		{prepare: double, execute: "EXECUTE q(abs(-3))"},
		{prepare: "PREPARE u AS SELECT region FROM sales.regions WHERE name = $1", execute: "EXECUTE u('Europe')"},
		{prepare: "PREPARE u AS SELECT region FROM sales.regions WHERE name = $1", execute: "EXECUTE u('Eu' || 'rope')"},
		{prepare: "PREPARE a (int[]) AS SELECT $1[2], $1", execute: "EXECUTE a(ARRAY[1, 2])"},
		{prepare: "PREPARE a (int[]) AS SELECT $1[2], $1", execute: "EXECUTE a(ARRAY[1, 1 + 1])"},
		{prepare: "PREPARE a (int[]) AS SELECT $1[2], $1", execute: "EXECUTE a('{3,4}')"},
		// A declared type's modifiers do not apply.
		{prepare: "PREPARE v (varchar(3), char(2), numeric(5,2), bit(2)) AS SELECT $1, $2, length($2), $3, $4",
			execute: "EXECUTE v('abcdef', 'abc', 1.234, B'101')"},
		{prepare: "PREPARE v (varchar(3), char(2), numeric(5,2), bit(2)) AS SELECT $1, $2, length($2), $3, $4",
			execute: "EXECUTE v(repeat('ab', 3), 'x' || 'yz', 1.0 / 3, B'1' || B'01')"},
		// Evaluated once, whatever the number of uses and rows.
		{prepare: "PREPARE r (float8) AS SELECT $1 = $1 AS same, $1 < 1 AS below FROM sales.regions", execute: "EXECUTE r(random())"},
		{prepare: "PREPARE r (float8) AS SELECT count(DISTINCT $1) FROM sales.regions, generate_series(1, 50)", execute: "EXECUTE r(random())"},
		// Refused, as PostgreSQL refuses them.
		{prepare: byName, execute: "EXECUTE p((SELECT 'Europe'))"},
		{prepare: byName, execute: "EXECUTE p(EXISTS (SELECT 1)::text)"},
		{prepare: byName, execute: "EXECUTE p(ARRAY(SELECT 1)::text)"},
		{prepare: byName, execute: "EXECUTE p($1)"},
		{prepare: byName, execute: "EXECUTE p(count(*)::text)", msgDiffers: inValues},
		{prepare: byName, execute: "EXECUTE p(max('x'))", msgDiffers: inValues},
		{prepare: double, execute: "EXECUTE q(1 + max(2))", msgDiffers: inValues},
		{prepare: byName, execute: "EXECUTE p((row_number() OVER ())::text)", msgDiffers: inValues},
		{prepare: byName, execute: "EXECUTE p(generate_series(1, 2)::text)", msgDiffers: inValues},
		{prepare: double, execute: "EXECUTE q(generate_series(1, 0))", msgDiffers: inValues},
		{prepare: byName, execute: "EXECUTE p(now() OVER ())", msgDiffers: "the call is qualified: pg_catalog.now"},
		{prepare: byName, execute: "EXECUTE p(no_such_function(1))"},
		{prepare: double, execute: "EXECUTE q(1 / 0)"},
		{prepare: double, execute: "EXECUTE q(1, 2)"},
		// Set operations, and a CTE of the statement's own.
		{prepare: "PREPARE s (text) AS SELECT $1 UNION ALL SELECT name FROM sales.regions WHERE name <> $1 ORDER BY 1", execute: "EXECUTE s(lower('EUROPE'))"},
		{prepare: "PREPARE w (text) AS WITH n AS (SELECT name FROM sales.regions WHERE name > $1) SELECT count(*), min(name) FROM n", execute: "EXECUTE w(substr('Ex', 1, 1))"},
		// Writes.
		{prepare: "PREPARE m (text) AS WITH s AS (SELECT 'US' AS region) MERGE INTO sales.regions r USING s ON r.region = s.region WHEN MATCHED THEN UPDATE SET name = $1",
			execute: "EXECUTE m(upper('x')); SELECT region, name FROM sales.regions ORDER BY 1"},
		{prepare: "PREPARE d (text) AS UPDATE sales.regions SET name = $1 WHERE region = 'US' RETURNING name, region", execute: "EXECUTE d(upper('usa'))"},
		{prepare: "PREPARE d (text, text) AS INSERT INTO sales.regions VALUES ($2, $1), ($1, $2) RETURNING *", execute: "EXECUTE d('x' || 'y', 'z')"},
	}
	// The documented differences (docs/security.md, "SQL PREPARE /
	// EXECUTE"): what PostgreSQL does, and what pgranger does instead.
	differences := []struct {
		prepare, execute string
		pgCode, got      string
	}{
		// An explicit cast to the parameter's type where PostgreSQL
		// applies an assignment cast.
		{prepare: double, execute: "EXECUTE q(true)", pgCode: "42804", got: "2|EU\n2|US"},
		{prepare: "PREPARE t (date) AS SELECT $1", execute: "EXECUTE t('2024-05-06'::text)", pgCode: "42804", got: "2024-05-06"},
		// An argument the statement never reads is not evaluated.
		{prepare: "PREPARE y (int) AS SELECT 1", execute: "EXECUTE y(1 / 0)", pgCode: "22012", got: "1"},
	}
	for _, c := range differences {
		name := c.prepare + "; " + c.execute
		if _, err := executeDirect(ctx, conn, c.prepare, c.execute); err == nil || err.Code != c.pgCode {
			t.Errorf("%s: PostgreSQL: %v, want SQLSTATE %s", name, err, c.pgCode)
		}
		res := rewriteAs(t, "admin", name, Options{})
		if res.Err != nil {
			t.Errorf("%s: %v", name, res.Err)
			continue
		}
		if got, err := executeRewritten(ctx, conn, res.SQL); err != nil || got != c.got {
			t.Errorf("%s: through pgranger %q, %v; want %q", name, got, err, c.got)
		}
	}
	for _, c := range cases {
		name := c.prepare + "; " + c.execute
		want, wantErr := executeDirect(ctx, conn, c.prepare, c.execute)
		res := rewriteAs(t, "admin", name, Options{})
		var got string
		gotErr := res.Err
		if gotErr == nil {
			var err error
			got, err = executeRewritten(ctx, conn, res.SQL)
			if err != nil {
				var pe *pgconn.PgError
				if !errors.As(err, &pe) {
					t.Fatalf("%s: %v", name, err)
				}
				gotErr = &Error{Code: pe.Code, Message: pe.Message}
			}
		}
		switch {
		case wantErr == nil && gotErr != nil:
			t.Errorf("%s:\n PostgreSQL returns %q\n through pgranger: ERROR %s: %s\n rewritten: %s", name, want, gotErr.Code, gotErr.Message, res.SQL)
		case wantErr != nil && gotErr == nil:
			t.Errorf("%s:\n PostgreSQL: ERROR %s: %s\n through pgranger returns %q\n rewritten: %s", name, wantErr.Code, wantErr.Message, got, res.SQL)
		case wantErr != nil && (gotErr.Code != wantErr.Code || c.msgDiffers == "" && gotErr.Message != wantErr.Message):
			t.Errorf("%s:\n PostgreSQL: ERROR %s: %s\n through pgranger: ERROR %s: %s", name, wantErr.Code, wantErr.Message, gotErr.Code, gotErr.Message)
		case wantErr != nil && c.msgDiffers != "" && gotErr.Message == wantErr.Message:
			t.Errorf("%s: the message is PostgreSQL's now (%s); drop the note %q", name, gotErr.Message, c.msgDiffers)
		case wantErr == nil && got != want:
			t.Errorf("%s:\n PostgreSQL returns %q\n through pgranger %q\n rewritten: %s", name, want, got, res.SQL)
		}
	}
}

// executeDirect runs PREPARE and EXECUTE on PostgreSQL in a transaction
// rolled back, and returns EXECUTE's rows (or its error).
func executeDirect(ctx context.Context, conn *pgx.Conn, prepare, execute string) (string, *Error) {
	defer func() { conn.PgConn().Exec(ctx, "ROLLBACK; DEALLOCATE ALL").ReadAll() }()
	if _, err := conn.PgConn().Exec(ctx, "BEGIN; "+prepare).ReadAll(); err != nil {
		return "", &Error{Code: "setup", Message: err.Error()}
	}
	out, err := lastResult(ctx, conn, execute)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return "", &Error{Code: pe.Code, Message: pe.Message}
		}
		return "", &Error{Code: "client", Message: err.Error()}
	}
	return out, nil
}

// executeRewritten runs what pgranger sends in a transaction rolled back
// and returns the last statement's rows.
func executeRewritten(ctx context.Context, conn *pgx.Conn, sql string) (string, error) {
	defer func() { conn.PgConn().Exec(ctx, "ROLLBACK; DEALLOCATE ALL").ReadAll() }()
	if _, err := conn.PgConn().Exec(ctx, "BEGIN").ReadAll(); err != nil {
		return "", err
	}
	return lastResult(ctx, conn, sql)
}

// lastResult runs a simple query and renders the rows of its last
// statement, one line each, values separated by "|".
func lastResult(ctx context.Context, conn *pgx.Conn, sql string) (string, error) {
	results, err := conn.PgConn().Exec(ctx, sql).ReadAll()
	if err != nil {
		return "", err
	}
	if len(results) == 0 {
		return "", nil
	}
	var lines []string
	for _, row := range results[len(results)-1].Rows {
		cells := make([]string, len(row))
		for i, v := range row {
			if v == nil {
				cells[i] = "NULL"
			} else {
				cells[i] = string(v)
			}
		}
		lines = append(lines, strings.Join(cells, "|"))
	}
	return strings.Join(lines, "\n"), nil
}
