package e2e

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Statements that nest too deeply for pg_query's C stack once killed the
// whole proxy. Two of the reported crashers, from a user with no access
// to anything, through both protocols: each is refused with 54001, and
// the proxy goes on serving that session and another.
func TestDeepStatementsRefusedProxyServesOn(t *testing.T) {
	p := startProxy(t, proxyOptions{extraConfig: "[[identity.users]]\nname = \"nobody\"\npassword = \"nobody\"\n"})
	// The limit follows the proxy's C stack, which it logs at start.
	listening := p.waitEvent(t, 5*time.Second, "pgranger listening")
	levels, _ := strconv.Atoi(listening["parse-tree-levels"])
	stack, _ := strconv.Atoi(listening["c-stack-bytes"])
	if levels == 0 || stack == 0 {
		t.Fatalf("the start-up log names no nesting limit: %v", listening)
	}
	allowed := "; at most " + thousands(levels) + " levels are allowed with this process's " + mib(stack) + " C stack (ulimit -s)"

	nobody := connect(t, p, "nobody")
	rep := strings.Repeat
	crossJoins := "SELECT 1 FROM sales.orders" + rep(" CROSS JOIN sales.orders", 30000)
	unions := "SELECT 1" + rep(" UNION ALL SELECT 1", 50000)

	// The extended protocol (pgx prepares the statement).
	_, err := tryRows(nobody, crossJoins)
	want := "pgranger: statement is nested too deeply to analyse safely: 30,000 joins on one path could make its parse tree 60,030 levels deep" + allowed
	if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || pe.Code != "54001" || pe.Message != want {
		t.Errorf("30,000 CROSS JOINs: %v\nwant 54001 %q", err, want)
	}
	// The simple protocol.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = nobody.PgConn().Exec(ctx, unions).ReadAll()
	want = "pgranger: statement is nested too deeply to analyse safely: 50,000 UNION, INTERSECT or EXCEPT branches on one path could make its parse tree 50,030 levels deep" + allowed
	if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || pe.Code != "54001" || pe.Message != want {
		t.Errorf("50,000 UNION ALL: %v\nwant 54001 %q", err, want)
	}

	select {
	case <-p.exited:
		t.Fatalf("the proxy exited (%v):\n%s", p.exitErr, p.log())
	default:
	}
	// The same session goes on, and so does another one, masks applied.
	equalLines(t, "nobody's next statement", rows(t, nobody, "SELECT 41 + 1"), []string{"42"})
	bob := connect(t, p, "bob")
	equalLines(t, "bob's session", rows(t, bob, "SELECT id, ssn FROM sales.orders ORDER BY id"),
		[]string{"1|xxx-xx-1111", "3|xxx-xx-3333", "5|xxx-xx-5555"})
}

// thousands formats n as pgranger's messages do: 10,922.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// mib formats a stack size as pgranger's messages do.
func mib(b int) string {
	if b%(1<<20) == 0 {
		return thousands(b>>20) + " MiB"
	}
	if b%(1<<10) == 0 {
		return thousands(b>>10) + " KiB"
	}
	return thousands(b) + " bytes"
}
