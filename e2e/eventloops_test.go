package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// listen.event-loops = 2, what docs/configuration.md advises for many
// clients on the simple protocol: six concurrent sessions, dealt to both
// loops, see bob's exact masked rows with both protocols.
func TestTwoEventLoops(t *testing.T) {
	p := startProxy(t, proxyOptions{env: map[string]string{"PGRANGER_LISTEN__EVENT_LOOPS": "2"}})
	concurrentMaskedRows(t, p)
}

// GOMAXPROCS=1, what docs/performance.md suggests on a two-core host
// shared with PostgreSQL: the loop, and the goroutines that sessions
// analysing a new statement take from it, share one processor; six
// concurrent sessions, each sending a statement shape nobody sent before
// every other statement, see bob's exact masked rows.
func TestEventLoopOnOneProcessor(t *testing.T) {
	p := startProxy(t, proxyOptions{env: map[string]string{"GOMAXPROCS": "1"}})
	concurrentMaskedRows(t, p)
}

func concurrentMaskedRows(t *testing.T, p *proxy) {
	const query = "SELECT id, ssn, amount FROM sales.orders ORDER BY id"
	want := strings.Join([]string{"1|xxx-xx-1111|1200.50", "3|xxx-xx-3333|4410.25", "5|xxx-xx-5555|1780.00"}, "\n")
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, err := pgx.Connect(ctx, p.dsn("bob", "bob"))
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close(context.Background())
			for j := 0; j < 20; j++ {
				var args []any
				if j%2 == 0 {
					args = append(args, pgx.QueryExecModeSimpleProtocol)
				}
				got, err := tryRows(conn, query, args...)
				if err != nil {
					errs <- err
					return
				}
				if g := strings.Join(got, "\n"); g != want {
					errs <- fmt.Errorf("statement %d: got\n%s\nwant\n%s", j+1, g, want)
					return
				}
				// A column alias of its own: a template no cache holds,
				// parsed and analysed off the loop.
				fresh := fmt.Sprintf("SELECT ssn AS s%d_%d FROM sales.orders WHERE id = 1", i, j)
				got, err = tryRows(conn, fresh, args...)
				if err != nil {
					errs <- err
					return
				}
				if g := strings.Join(got, "\n"); g != "xxx-xx-1111" {
					errs <- fmt.Errorf("%s: got %q, want xxx-xx-1111", fresh, g)
					return
				}
			}
			errs <- nil
		}()
	}
	for i := 0; i < 6; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// Rows and statements larger than the event loop's 32 KiB read buffer
// (assembled on the loop a read at a time) arrive whole through the real
// proxy, with both protocols: a 300 KB value built on bob's masked ssn,
// and a statement carrying a 200 KB literal.
func TestEventLoopWideRowsAndLongStatements(t *testing.T) {
	p := startProxy(t, proxyOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, p.dsn("bob", "bob"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	long := strings.Repeat("y", 200000)
	for _, mode := range []any{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
		got, err := tryRows(conn, "SELECT ssn || repeat('w', 300000) FROM sales.orders WHERE id = 1", mode)
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		if want := "xxx-xx-1111" + strings.Repeat("w", 300000); len(got) != 1 || got[0] != want {
			t.Errorf("%v: the wide row came back as %d rows, first %d bytes", mode, len(got), len(strings.Join(got, "")))
		}
		got, err = tryRows(conn, "SELECT ssn FROM sales.orders WHERE id = 1 AND length('"+long+"') = 200000", mode)
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		if len(got) != 1 || got[0] != "xxx-xx-1111" {
			t.Errorf("%v: the long statement returned %q", mode, got)
		}
	}
}
