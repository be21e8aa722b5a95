package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// psqlAt runs psql through p as user with stdin as its input.
func psqlAt(t *testing.T, p *proxy, user, stdin string, args ...string) (string, string, error) {
	t.Helper()
	path, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("skipping: psql not installed (make test installs postgresql-client)")
	}
	cmd := exec.Command(path, append([]string{"-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", p.dsn(user, user)}, args...)...)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "LC_ALL=C")
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return strings.TrimRight(stdout.String(), "\n"), stderr.String(), err
}

// Writes through pgranger: COPY FROM STDIN (pgx CopyFrom, psql \copy),
// INSERT/UPDATE/DELETE with their command tags, CREATE TABLE and its use
// at once, SQL PREPARE through the extended protocol.
func TestWritesThroughTheProxy(t *testing.T) {
	p := startProxy(t, proxyOptions{
		policies: attackPolicies(t).bytes(t),
		env:      map[string]string{"PGRANGER_POLICY__ALLOW_DDL": "true"},
	})
	conn := connect(t, p, "bob")
	ctx := context.Background()
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, cluster.SuperDSN("demo"))
		if err == nil {
			c.Exec(ctx, "DELETE FROM mallory.loot; DROP TABLE IF EXISTS mallory.w1, mallory.w2")
			c.Close(ctx)
		}
	})

	// pgx CopyFrom: the COPY FROM STDIN sub-protocol, relayed raw.
	n, err := conn.CopyFrom(ctx, pgx.Identifier{"mallory", "loot"}, []string{"v"}, pgx.CopyFromRows([][]any{{"a"}, {"b"}, {"c"}}))
	if err != nil || n != 3 {
		t.Fatalf("CopyFrom: %d rows, %v", n, err)
	}
	equalLines(t, "after CopyFrom", rows(t, conn, "SELECT v FROM mallory.loot ORDER BY v"), []string{"a", "b", "c"})
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"vault", "accounts"}, []string{"id", "owner", "region"}, pgx.CopyFromRows([][]any{{9, "x", "US"}})); sqlstate(err) != "42501" {
		t.Errorf("CopyFrom into the vault: err = %v, want 42501", err)
	}
	// psql \copy … FROM STDIN (text rows on psql's stdin).
	out, errOut, err := psqlAt(t, p, "bob", "d\ne\n\\.\n", "-c", `\copy mallory.loot (v) FROM STDIN`, "-c", "SELECT count(*) FROM mallory.loot")
	if err != nil {
		t.Fatalf("psql \\copy: %v\n%s", err, errOut)
	}
	if !strings.HasSuffix(out, "5") {
		t.Errorf("psql \\copy: %q, want 5 rows afterwards", out)
	}
	_, errOut, err = psqlAt(t, p, "bob", "1\tx\tUS\n\\.\n", "-c", `\copy vault.accounts (id, owner, region) FROM STDIN`)
	if err == nil || !strings.Contains(errOut, "update access") {
		t.Errorf("psql \\copy into the vault: %v %s", err, errOut)
	}

	// Command tags.
	for _, c := range []struct {
		sql, tag string
	}{
		{"INSERT INTO mallory.loot VALUES ('f'), ('g')", "INSERT 0 2"},
		{"UPDATE mallory.loot SET v = upper(v) WHERE v IN ('f', 'g')", "UPDATE 2"},
		{"DELETE FROM mallory.loot WHERE v = 'F'", "DELETE 1"},
	} {
		tag, err := conn.Exec(ctx, c.sql)
		if err != nil || tag.String() != c.tag {
			t.Errorf("%s: tag %q, %v; want %q", c.sql, tag, err, c.tag)
		}
	}

	// Tables created one after the other are usable at once (the catalog
	// reloads for each new name, even within its rate limit).
	for _, name := range []string{"w1", "w2"} {
		if _, err := conn.Exec(ctx, "CREATE TABLE mallory."+name+" AS SELECT id, card FROM vault.accounts", pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatalf("CREATE TABLE mallory.%s: %v", name, err)
		}
		equalLines(t, name, rows(t, conn, "SELECT card FROM mallory."+name+" ORDER BY id"), []string{"xxxx-xxxx-xxxx-1234", "xxxx-xxxx-xxxx-5678"})
	}

	// SQL PREPARE through the extended protocol (Parse, then the re-check
	// at Bind must not take it for a duplicate), EXECUTE with arguments.
	if _, err := conn.Exec(ctx, "PREPARE q (int) AS SELECT card FROM vault.accounts WHERE id = $1"); err != nil {
		t.Fatalf("PREPARE: %v", err)
	}
	equalLines(t, "EXECUTE", rows(t, conn, "EXECUTE q(3)"), []string{"xxxx-xxxx-xxxx-5678"})
	equalLines(t, "EXECUTE, simple protocol", rows(t, conn, "EXECUTE q(1)", pgx.QueryExecModeSimpleProtocol), []string{"xxxx-xxxx-xxxx-1234"})
	if _, err := conn.Exec(ctx, "PREPARE q AS SELECT 1"); sqlstate(err) != "42P05" {
		t.Errorf("PREPARE of a taken name: err = %v, want 42P05", err)
	}
	if _, err := conn.Exec(ctx, "DEALLOCATE q"); err != nil {
		t.Errorf("DEALLOCATE: %v", err)
	}
	if _, err := tryRows(conn, "EXECUTE q(1)"); sqlstate(err) != "26000" {
		t.Errorf("EXECUTE after DEALLOCATE: err = %v, want 26000", err)
	}
}

// A statement prepared with SQL PREPARE runs under the policy in force at
// EXECUTE: a mask added later applies, a grant revoked later denies.
func TestSQLPrepareFollowsPolicyChanges(t *testing.T) {
	doc := attackPolicies(t)
	p := startProxy(t, proxyOptions{policies: doc.bytes(t)})
	conn := connect(t, p, "bob")
	if _, err := tryRows(conn, "PREPARE o AS SELECT owner FROM vault.accounts WHERE id = 1", pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	equalLines(t, "before", rows(t, conn, "EXECUTE o", pgx.QueryExecModeSimpleProtocol), []string{"Ann Visible"})
	doc.add(maskPolicy(970, "vault", "accounts", "owner", []string{"public"}, "MASK", ""))
	p.writePolicies(t, doc.bytes(t))
	eventually(t, 10*time.Second, func() string {
		got, err := tryRows(conn, "EXECUTE o", pgx.QueryExecModeSimpleProtocol)
		if err != nil || len(got) != 1 || got[0] != "Xxx Xxxxxxx" {
			return fmt.Sprintf("EXECUTE after a mask was added: %q, %v", got, err)
		}
		return ""
	})
	for _, pol := range doc.policies() {
		if pm := pol.(map[string]any); pm["id"] == 950 {
			pm["isEnabled"] = false // the grant on vault.* (attackPolicies)
		}
	}
	doc.bump()
	p.writePolicies(t, doc.bytes(t))
	eventually(t, 10*time.Second, func() string {
		got, err := tryRows(conn, "EXECUTE o", pgx.QueryExecModeSimpleProtocol)
		if sqlstate(err) != "42501" {
			return fmt.Sprintf("EXECUTE after the grant was disabled: %q, %v", got, err)
		}
		return ""
	})
}
