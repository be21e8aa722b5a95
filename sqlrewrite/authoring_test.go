package sqlrewrite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pgranger/pgranger/policy"
)

// Authoring statements never reach the backend: a text that is exactly
// one is marked for pgwire's Author (and refused, for callers without
// one); one among other statements is refused; other labels and role
// grants stay ordinary refusals.
func TestAuthoringStatementsAreMarked(t *testing.T) {
	eng := testEngine(t)
	rw := New(Options{})
	for _, tc := range []struct{ sql, tag, msg string }{
		{"GRANT SELECT ON sales.orders TO carol", "GRANT", `pgranger: GRANT statements are not allowed through pgranger (user "bob")`},
		{"REVOKE ALL ON ALL TABLES IN SCHEMA sales FROM PUBLIC", "REVOKE", `pgranger: REVOKE statements are not allowed through pgranger (user "bob")`},
		{"CREATE POLICY p ON sales.orders USING (true)", "CREATE POLICY", `pgranger: CREATE POLICY statements are not allowed through pgranger (user "bob")`},
		{"ALTER POLICY p ON sales.orders USING (false)", "ALTER POLICY", `pgranger: ALTER POLICY statements are not allowed through pgranger (user "bob")`},
		{"ALTER POLICY p ON sales.orders RENAME TO q", "ALTER POLICY", `pgranger: ALTER POLICY statements are not allowed through pgranger (user "bob")`},
		{"DROP POLICY IF EXISTS p ON sales.orders", "DROP POLICY", `pgranger: DROP POLICY statements are not allowed through pgranger (user "bob")`},
		{"SECURITY LABEL FOR pgranger ON COLUMN sales.orders.ssn IS 'MASK'", "SECURITY LABEL", `pgranger: SECURITY LABEL statements are not allowed through pgranger (user "bob")`},
		{"SECURITY LABEL FOR pgranger_tags ON TABLE sales.orders IS NULL", "SECURITY LABEL", `pgranger: SECURITY LABEL statements are not allowed through pgranger (user "bob")`},
		{"SELECT 1; GRANT SELECT ON sales.orders TO carol", "", `pgranger: GRANT statements are not allowed through pgranger in a text of several statements: send it on its own (user "bob")`},
		{"SECURITY LABEL FOR anon ON COLUMN sales.orders.ssn IS 'MASKED WITH VALUE NULL'", "", `pgranger: SECURITY LABEL statements are not allowed through pgranger (user "bob")`},
		{"GRANT analysts TO carol", "", `pgranger: GRANT ROLE statements are not allowed through pgranger (user "bob")`},
	} {
		subj := testSubjects["bob"]
		sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo", SearchPath: []string{"$user", "public"}}
		env := &Env{Policy: policy.Snapshot{Engine: eng, Generation: 1}, Catalog: testCatalog(), Now: time.Now()}
		res := rw.Rewrite(context.Background(), env, sess, tc.sql)
		if res.Authoring != tc.tag || res.Err == nil || res.Err.Code != "42501" || res.Err.Message != tc.msg {
			t.Errorf("%s: authoring %q err %v", tc.sql, res.Authoring, res.Err)
			continue
		}
		// Every authoring refusal names the key; other refusals do not.
		if wantHint := strings.Contains(tc.msg, "GRANT statements") || tc.tag != ""; (res.Err.Hint == authoringHint) != wantHint {
			t.Errorf("%s: hint %q", tc.sql, res.Err.Hint)
		}
	}
}
