package e2e

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// A view never launders a mask or a row filter: it is expanded into its
// definition and the policies of the table it reads apply.
func TestViewKeepsTableMasksAndFilter(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		equalLines(t, mode.String(), rows(t, conn, "SELECT id, ssn FROM sales.orders_view ORDER BY id", mode),
			[]string{"1|xxx-xx-1111", "3|xxx-xx-3333", "5|xxx-xx-5555"})
	}
	alice := connect(t, demoProxy, "alice")
	if got := rows(t, alice, "SELECT count(*) FROM sales.orders_view"); strings.Join(got, "") != "8" {
		t.Errorf("alice through the view: %v", got)
	}
}

// The view is a resource of its own: access to it is what a user needs
// (carol is denied hr.employees but granted hr.directory), while the
// table's masks still apply inside it.
func TestViewIsAResourceOfItsOwn(t *testing.T) {
	doc := demoPolicies(t)
	doc.add(accessPolicy(906, "hr", "directory", "*", []string{"support"}))
	p := startProxy(t, proxyOptions{policies: doc.bytes(t)})
	carol := connect(t, p, "carol")
	if _, err := tryRows(carol, "SELECT name FROM hr.employees"); sqlstate(err) != "42501" {
		t.Fatalf("carol must still be denied the table: %v", err)
	}
	equalLines(t, "directory", rows(t, carol, "SELECT id, name, email FROM hr.directory ORDER BY id"), []string{
		"1|Margaret Hamilton|*****@example.com",
		"2|Katherine Johnson|*****@example.com",
		"3|Dennis Ritchie|*****@example.com",
	})
	// Without a grant on the view, the view is denied like any table.
	bob := connect(t, p, "bob")
	if _, err := tryRows(bob, "SELECT name FROM hr.directory"); sqlstate(err) != "42501" || !strings.Contains(err.Error(), "hr.directory") {
		t.Errorf("bob without a policy on hr.directory: %v", err)
	}
}
