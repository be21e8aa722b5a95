package sqlrewrite

import (
	"context"
	"testing"
	"time"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/sqlstate"
)

// rewriteAs rewrites one text for a user of testSubjects, as the golden
// cases do.
func rewriteAs(t *testing.T, user, sql string, opts Options) *Result {
	t.Helper()
	return rewriteIn(t, testCatalog(), user, sql, opts)
}

func rewriteIn(t *testing.T, snap *catalog.Snapshot, user, sql string, opts Options) *Result {
	t.Helper()
	subj, ok := testSubjects[user]
	if !ok {
		t.Fatalf("unknown user %q", user)
	}
	sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo",
		SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
	env := &Env{Policy: policy.Snapshot{Engine: testEngine(t), Generation: 1}, Catalog: snap, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return New(opts).Rewrite(context.Background(), env, sess, sql)
}

// An access denial carries the Ranger request it answers as data (what
// the audit record names), beside the text the client reads; the text is
// asserted byte for byte by the golden files.
func TestDenialFields(t *testing.T) {
	apply := Options{DMLRowFilter: DMLRowFilterApply}
	ddl := Options{AllowDDL: true}
	cases := []struct {
		name, user, sql string
		opts            Options
		want            Denial
		detail          string
	}{
		{"column denied", "bob", "SELECT salary FROM hr.employees", Options{},
			Denial{Database: "hr", Table: "employees", Column: "salary", Access: "select", PolicyID: 3},
			"Ranger resource database=hr, table=employees, column=salary: denied by policy 3"},
		{"table denied (a read of no column)", "carol", "SELECT count(*) FROM hr.employees", Options{},
			Denial{Database: "hr", Table: "employees", Access: "select", PolicyID: 2},
			"Ranger resource database=hr, table=employees: denied by policy 2"},
		{"udf denied", "bob", "SELECT public.my_udf(id) FROM sales.orders", Options{},
			Denial{Database: "public", UDF: "my_udf", Access: "select"},
			"Ranger resource database=public, udf=my_udf: no policy grants select"},
		{"update of a column denied", "bob", "UPDATE hr.employees SET salary = 1", apply,
			Denial{Database: "hr", Table: "employees", Column: "salary", Access: "update", PolicyID: 909},
			"Ranger resource database=hr, table=employees, column=salary: denied by policy 909"},
		{"DML reading a denied column", "bob", "UPDATE hr.employees SET name = 'x' WHERE salary > 0", apply,
			Denial{Database: "hr", Table: "employees", Column: "salary", Access: "select", PolicyID: 3},
			"Ranger resource database=hr, table=employees, column=salary: denied by policy 3"},
		{"INSERT without update on the table", "dave", "INSERT INTO public.orders VALUES (1)", Options{},
			Denial{Database: "public", Table: "orders", Access: "update"},
			"Ranger resource database=public, table=orders: no policy grants update"},
		{"a write blocked by a row filter (no access policy decided)", "bob", "DELETE FROM sales.orders", Options{},
			Denial{Database: "sales", Table: "orders", Access: "update"},
			"Ranger resource database=sales, table=orders"},
		{"create denied", "bob", "CREATE TABLE sales.copy AS SELECT 1", ddl,
			Denial{Database: "sales", Table: "copy", Access: "create"},
			"Ranger resource database=sales, table=copy: no policy grants create"},
		{"drop denied", "bob", "DROP TABLE public.orders", ddl,
			Denial{Database: "public", Table: "orders", Access: "drop"},
			"Ranger resource database=public, table=orders: no policy grants drop"},
		{"foreign key to a denied column (no Detail)", "bob", "CREATE TABLE bob.t (s int, FOREIGN KEY (s) REFERENCES hr.employees (salary))", ddl,
			Denial{Database: "hr", Table: "employees", Column: "salary", Access: "select", PolicyID: 3}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := rewriteAs(t, c.user, c.sql, c.opts)
			if res.Err == nil {
				t.Fatalf("%s: allowed, want a denial", c.sql)
			}
			if res.Err.Code != sqlstate.InsufficientPrivilege || res.Err.Detail != c.detail {
				t.Errorf("%s: %s %q DETAIL %q, want 42501 DETAIL %q", c.sql, res.Err.Code, res.Err.Message, res.Err.Detail, c.detail)
			}
			if res.Err.Denied == nil {
				t.Fatalf("%s: %s has no Denied", c.sql, res.Err.Message)
			}
			if *res.Err.Denied != c.want {
				t.Errorf("%s: Denied = %+v, want %+v", c.sql, *res.Err.Denied, c.want)
			}
		})
	}
}

// A refusal that is not Ranger's answer about one resource names none.
func TestRefusalsWithoutDenial(t *testing.T) {
	for _, sql := range []string{
		"SELECT pg_read_file('/etc/passwd')",      // a function pgranger never allows
		"SELECT ssn FROM sales.orders FOR UPDATE", // a statement shape pgranger refuses
		"SELECT FROM WHERE",                       // a syntax error
	} {
		res := rewriteAs(t, "bob", sql, Options{})
		if res.Err == nil {
			t.Fatalf("%s: allowed", sql)
		}
		if res.Err.Denied != nil {
			t.Errorf("%s: %s names a denied resource %+v", sql, res.Err.Message, *res.Err.Denied)
		}
	}
}
