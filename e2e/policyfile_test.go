package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestPolicyEditTakesEffectWithoutRestart(t *testing.T) {
	p := startProxy(t, proxyOptions{})
	conn := connect(t, p, "bob")
	const q = "SELECT ssn FROM sales.orders WHERE id = $1"
	// pgx's default mode prepares the statement once and reuses it.
	equalLines(t, "before", rows(t, conn, q, 1), []string{"xxx-xx-1111"})

	doc := demoPolicies(t)
	items := doc.policy(t, 10)["dataMaskPolicyItems"].([]any)
	items[1].(map[string]any)["dataMaskInfo"] = map[string]any{"dataMaskType": "MASK_NULL"}
	doc.bump()
	p.writePolicies(t, doc.bytes(t))

	// The same connection, the same prepared statement: re-prepared under
	// the new policy before its next Bind.
	eventually(t, 5*time.Second, func() string {
		got := strings.Join(rows(t, conn, q, 1), ",")
		if got != "NULL" {
			return "bob still sees " + got + " after the mask became MASK_NULL"
		}
		return ""
	})
	equalLines(t, "new connection", rows(t, connect(t, p, "bob"), q, 1), []string{"NULL"})
}

func TestBrokenPolicyFileKeepsLastGoodThenDenies(t *testing.T) {
	p := startProxy(t, proxyOptions{env: map[string]string{"PGRANGER_POLICY__CACHE_TTL_SECS": "2"}})
	conn := connect(t, p, "bob")
	const q = "SELECT id, ssn FROM sales.orders ORDER BY id LIMIT 1"
	equalLines(t, "before", rows(t, conn, q, pgx.QueryExecModeSimpleProtocol), []string{"1|xxx-xx-1111"})
	// Prepared now (pgx's statement cache), bound again past the TTL.
	const prepared = "SELECT ssn FROM sales.orders WHERE id = $1"
	equalLines(t, "prepared before", rows(t, conn, prepared, 1), []string{"xxx-xx-1111"})

	p.writePolicies(t, []byte("this is not JSON {"))
	// The broken file is logged loudly, at level ERROR.
	if ev := p.waitEvent(t, 5*time.Second, "policy files rejected"); ev["level"] != "ERROR" {
		t.Errorf("the rejection is logged at %s, want ERROR", ev["level"])
	}
	// Within the TTL the last good policies stay in force.
	equalLines(t, "within ttl", rows(t, conn, q, pgx.QueryExecModeSimpleProtocol), []string{"1|xxx-xx-1111"})
	eventually(t, 5*time.Second, func() string {
		_, err := tryRows(conn, q, pgx.QueryExecModeSimpleProtocol)
		if sqlstate(err) != "42501" || !strings.Contains(err.Error(), "policies are unavailable") {
			return "past the TTL a governed statement must be denied, got " + errString(err)
		}
		return ""
	})
	// Prepared statements are denied too, and statements that read no
	// governed relation still run.
	if _, err := tryRows(conn, prepared, 1); sqlstate(err) != "42501" || !strings.Contains(err.Error(), "policies are unavailable") {
		t.Errorf("a statement prepared before, bound past the TTL: %v", err)
	}
	if _, err := tryRows(conn, "SELECT ssn FROM sales.orders WHERE id = $1 AND true", 1); sqlstate(err) != "42501" {
		t.Errorf("extended protocol past the TTL: %v", err)
	}
	equalLines(t, "ungoverned", rows(t, conn, "SELECT 1"), []string{"1"})

	p.writePolicies(t, demoPolicies(t).bytes(t))
	eventually(t, 5*time.Second, func() string {
		got, err := tryRows(conn, q, pgx.QueryExecModeSimpleProtocol)
		if err != nil || strings.Join(got, ",") != "1|xxx-xx-1111" {
			return "after a good file returns, enforcement resumes: " + errString(err)
		}
		return ""
	})
}

func TestUnparseableRowFilterDeniesTable(t *testing.T) {
	doc := demoPolicies(t)
	doc.add(rowFilterPolicy(900, "hr", "employees", []string{"analysts"}, "department = = 'x'"))
	p := startProxy(t, proxyOptions{policies: doc.bytes(t)})
	conn := connect(t, p, "bob")
	_, err := tryRows(conn, "SELECT id FROM hr.employees")
	if sqlstate(err) != "42501" || !strings.Contains(err.Error(), "row filter on hr.employees") {
		t.Fatalf("err = %v, want 42501 naming the row filter on hr.employees", err)
	}
	// Injection attempts through the filter text are not one expression.
	doc = demoPolicies(t)
	doc.add(rowFilterPolicy(901, "hr", "employees", []string{"analysts"}, "true; DROP TABLE hr.employees"))
	p.writePolicies(t, doc.bytes(t))
	eventually(t, 5*time.Second, func() string {
		_, err := tryRows(conn, "SELECT id FROM hr.employees")
		if sqlstate(err) != "42501" {
			return "a filter with a second statement must deny the table, got " + errString(err)
		}
		return ""
	})
}

func TestUnmappableMaskIsTypedNull(t *testing.T) {
	doc := demoPolicies(t)
	doc.add(maskPolicy(902, "hr", "employees", "name", []string{"public"}, "MASK_NOT_IN_SERVICEDEF", ""))
	doc.add(maskPolicy(903, "hr", "employees", "id", []string{"public"}, "MASK_NOT_IN_SERVICEDEF", ""))
	p := startProxy(t, proxyOptions{policies: doc.bytes(t)})
	conn := connect(t, p, "bob")
	equalLines(t, "typed NULL", rows(t, conn, "SELECT id, name, pg_typeof(id)::text, pg_typeof(name)::text FROM hr.employees ORDER BY 1 LIMIT 1"),
		[]string{"NULL|NULL|integer|text"})
}

func TestRowFilterMacroIsData(t *testing.T) {
	// An attribute value that tries to break out of its string stays a string.
	doc := demoPolicies(t)
	doc.add(rowFilterPolicy(904, "hr", "employees", []string{"analysts"}, "department = '${{USER.region}}'"))
	p := startProxy(t, proxyOptions{policies: doc.bytes(t)})
	conn := connect(t, p, "bob") // region = US: no employee matches
	equalLines(t, "bob", rows(t, conn, "SELECT id FROM hr.employees"), nil)
	ctx := context.Background()
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM hr.employees").Scan(&n); err != nil || n != 0 {
		t.Errorf("count = %d, %v", n, err)
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}
