package pgwire

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/sqlstate"
)

// extended is one Parse/Bind/Describe/Execute of sql on the unnamed
// statement and portal, as pgx and JDBC send them in a pipeline.
func extended(sql string) []pgproto3.FrontendMessage {
	return []pgproto3.FrontendMessage{
		&pgproto3.Parse{Query: sql},
		&pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
	}
}

func pipeline(sqls ...string) []pgproto3.FrontendMessage {
	var out []pgproto3.FrontendMessage
	for _, sql := range sqls {
		out = append(out, extended(sql)...)
	}
	return append(out, &pgproto3.Sync{})
}

// waitSettled waits until the backend loop has popped every pending
// entry: the answers and the queue agree.
func waitSettled(t *testing.T, h *relayHarness) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if h.sess.queue.settled() {
			return
		}
	}
	t.Errorf("the pending queue still holds %d entries", h.sess.queue.n.Load())
}

func TestRelayPipelinedExtendedQueries(t *testing.T) {
	h := newRelayHarness(t)
	h.send(pipeline("SELECT 1", "SELECT id FROM t", "SELECT 2")...)
	one := []string{"1", "2", "T", "D:1", "C:SELECT 1"}
	want := append(append(append(append([]string{}, one...), one...), one...), "Z:I")
	wantMessages(t, h.until("Z:I"), want...)
	waitSettled(t, h)
	h.terminate()
	if len(h.pool.idle) != 1 {
		t.Errorf("the backend connection was not returned to the pool after a clean end")
	}
}

// Several simple Queries written at once are answered in order, each up
// to its own ReadyForQuery.
func TestRelayPipelinedSimpleQueries(t *testing.T) {
	h := newRelayHarness(t)
	h.send(&pgproto3.Query{String: "SELECT 1"}, &pgproto3.Query{String: "SELECT id FROM t"}, &pgproto3.Query{String: "BEGIN"},
		&pgproto3.Query{String: "SELECT 2"}, &pgproto3.Query{String: "COMMIT"})
	wantMessages(t, h.readyN(5),
		"T", "D:1", "C:SELECT 1", "Z:I",
		"T", "D:1", "C:SELECT 1", "Z:I",
		"C:BEGIN", "Z:T",
		"T", "D:1", "C:SELECT 1", "Z:T",
		"C:COMMIT", "Z:I")
	waitSettled(t, h)
	h.terminate()
}

// An error in the middle of a pipeline: the backend skips to Sync, and so
// must the pending queue, or every later answer would be matched with the
// wrong message. The next pipeline is answered normally.
func TestRelayErrorInTheMiddleOfAPipeline(t *testing.T) {
	h := newRelayHarness(t)
	h.send(pipeline("SELECT 1", "SELECT 1/0", "SELECT 2", "SELECT 3")...)
	wantMessages(t, h.until("Z:I"),
		"1", "2", "T", "D:1", "C:SELECT 1",
		"1", "2", "T", "E:ERROR:22012",
		"Z:I")
	waitSettled(t, h)
	h.send(pipeline("SELECT 4")...)
	wantMessages(t, h.until("Z:I"), "1", "2", "T", "D:1", "C:SELECT 1", "Z:I")
	waitSettled(t, h)
	h.terminate()
}

// A denied statement in a pipeline: its Parse reaches the backend as the
// denial statement, whose error the client sees as the denial (42501),
// and the rest of the pipeline is skipped as PostgreSQL skips it.
func TestRelayDenialInTheMiddleOfAPipeline(t *testing.T) {
	h := newRelayHarness(t)
	h.send(pipeline("SELECT 1", "SELECT id FROM secret", "SELECT 2")...)
	wantMessages(t, h.until("Z:I"),
		"1", "2", "T", "D:1", "C:SELECT 1",
		"E:ERROR:42501",
		"Z:I")
	waitSettled(t, h)
	for _, sql := range h.back.sqls() {
		if sql == "SELECT id FROM secret" {
			t.Errorf("the denied statement reached the backend")
		}
	}
	h.send(&pgproto3.Query{String: "SELECT id FROM secret"}, &pgproto3.Query{String: "SELECT 5"})
	wantMessages(t, h.readyN(2), "E:ERROR:42501", "Z:I", "T", "D:1", "C:SELECT 1", "Z:I")
	h.terminate()
}

func TestRelayCopyFromClient(t *testing.T) {
	h := newRelayHarness(t)
	h.send(&pgproto3.Query{String: "COPY t FROM STDIN"})
	wantMessages(t, h.until("G"), "G")
	h.send(&pgproto3.CopyData{Data: []byte("1\n2\n")}, &pgproto3.CopyData{Data: []byte("3\n")}, &pgproto3.CopyDone{})
	wantMessages(t, h.until("Z:I"), "C:COPY 3", "Z:I")
	// A COPY the client abandons fails, and the session goes on.
	h.send(&pgproto3.Query{String: "COPY t FROM STDIN"})
	h.until("G")
	h.send(&pgproto3.CopyData{Data: []byte("1\n")}, &pgproto3.CopyFail{Message: "client gave up"})
	wantMessages(t, h.until("Z:I"), "E:ERROR:57014", "Z:I")
	h.send(&pgproto3.Query{String: "SELECT 1"})
	wantMessages(t, h.until("Z:I"), "T", "D:1", "C:SELECT 1", "Z:I")
	waitSettled(t, h)
	h.terminate()
}

func TestRelayCopyToClient(t *testing.T) {
	h := newRelayHarness(t)
	h.send(&pgproto3.Query{String: "COPY t TO STDOUT"})
	wantMessages(t, h.until("Z:I"), "H", "d:1\n", "d:2\n", "d:3\n", "c", "C:COPY 3", "Z:I")
	// The query form, as pg_dump and psql's \copy send it.
	h.send(&pgproto3.Query{String: "COPY (SELECT id FROM t) TO STDOUT"})
	wantMessages(t, h.until("Z:I"), "H", "d:1\n", "d:2\n", "d:3\n", "c", "C:COPY 3", "Z:I")
	waitSettled(t, h)
	h.terminate()
}

// A CancelRequest for pgranger's key reaches the backend with the
// backend's own key; the statement fails with 57014 and the session goes on.
func TestRelayCancel(t *testing.T) {
	h := newRelayHarness(t)
	h.send(&pgproto3.Query{String: "SELECT 'sleep'"})
	time.Sleep(20 * time.Millisecond)
	h.srv.cancel(h.pid, h.secret+1) // a wrong key cancels nothing
	h.srv.cancel(h.pid, h.secret)
	wantMessages(t, h.until("Z:I"), "E:ERROR:57014", "Z:I")
	h.send(&pgproto3.Query{String: "SELECT 1"})
	wantMessages(t, h.until("Z:I"), "T", "D:1", "C:SELECT 1", "Z:I")
	h.terminate()
}

// The backend connection vanishes in the middle of a statement: the
// client gets FATAL 08006 and its connection closes; the backend
// connection is discarded, not pooled.
func TestRelayBackendLost(t *testing.T) {
	h := newRelayHarness(t)
	h.send(&pgproto3.Query{String: "SELECT 1"})
	h.until("Z:I")
	h.send(&pgproto3.Query{String: "SELECT 'crash'"})
	wantMessages(t, h.until("E:FATAL:08006"), "E:FATAL:08006")
	if m, err := h.fe.Receive(); err == nil {
		t.Errorf("the client connection stayed open after the FATAL error: %s", summary(m))
	}
	select {
	case <-h.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the session did not end")
	}
	if len(h.pool.idle) != 0 || h.pool.open != 0 {
		t.Errorf("pool: %d idle, %d open; the lost connection must be discarded", len(h.pool.idle), h.pool.open)
	}
}

// The client leaves in the middle of a pipeline's results: finish cancels
// nothing it need not, rolls back, resets and pools the connection.
func TestRelayClientLeavesWithAnOpenTransaction(t *testing.T) {
	h := newRelayHarness(t)
	h.send(&pgproto3.Query{String: "BEGIN"}, &pgproto3.Query{String: "SELECT 1"})
	h.readyN(2)
	h.terminate()
	sqls := h.back.sqls()
	if n := len(sqls); n < 2 || sqls[n-2] != "ROLLBACK" || sqls[n-1] != "DISCARD ALL" {
		t.Errorf("the backend saw %q; want ROLLBACK and DISCARD ALL last", sqls)
	}
	if len(h.pool.idle) != 1 {
		t.Errorf("the reset connection was not pooled")
	}
}

// A revocation ends the session at its next statement boundary: the
// statement in flight completes and its result reaches the client, then
// the FATAL error; what the client sends after it does not run.
func TestRelayRevocationWaitsForTheStatementBoundary(t *testing.T) {
	h := newRelayHarness(t)
	h.send(&pgproto3.Query{String: "SELECT 'sleep'"})
	time.Sleep(20 * time.Millisecond)
	h.sess.revoke(fatalf(sqlstate.InvalidAuthorization, "revoked"), "session ended: test")
	if p := h.sess.life.current(); p != phaseRevoking {
		t.Fatalf("phase %d after revoke, want revoking", p)
	}
	h.srv.cancel(h.pid, h.secret)
	wantMessages(t, h.until("E:FATAL:28000"), "E:ERROR:57014", "Z:I", "E:FATAL:28000")
	<-h.done
	if p := h.sess.life.current(); p != phaseEnding && p != phaseDropping {
		t.Errorf("phase %d after the revocation ended the session", p)
	}
	if len(h.pool.idle) != 1 {
		t.Errorf("the connection of a revoked session is reset and pooled")
	}
}

// The idle timeout ends an idle session with 57P05; while a statement
// runs, it does not start.
func TestRelayIdleTimeout(t *testing.T) {
	h := newRelayHarness(t, func(c *config.Config) { c.Listen.IdleTimeoutSecs = 1 })
	h.send(&pgproto3.Query{String: "SELECT 1"})
	h.until("Z:I")
	start := time.Now()
	wantMessages(t, h.until("E:FATAL:57P05"), "E:FATAL:57P05")
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("ended after %v, before the timeout", d)
	}
	<-h.done
}

// LOG and DEBUG messages of the backend never reach the client, in the
// simple and the extended protocol; NOTICE, WARNING and INFO reach it
// exactly as the backend sent them (docs/security.md "Session
// settings").
func TestRelayDropsLogAndDebugNotices(t *testing.T) {
	h := newRelayHarness(t)
	passed := []string{"N:NOTICE:a notice", "N:WARNING:a warning", "N:INFO:an info"}
	h.send(&pgproto3.Query{String: "SELECT 'notices'"})
	wantMessages(t, h.until("Z:I"), append(append([]string{}, passed...), "T", "D:1", "C:SELECT 1", "Z:I")...)
	h.send(pipeline("SELECT 'notices'")...)
	wantMessages(t, h.until("Z:I"), append(append([]string{"1", "2", "T"}, passed...), "D:1", "C:SELECT 1", "Z:I")...)

	// Field for field, as sent.
	h.send(&pgproto3.Query{String: "SELECT 'notices'"})
	var got []*pgproto3.NoticeResponse
	for {
		m, err := h.fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := m.(*pgproto3.NoticeResponse); ok {
			c := *n
			got = append(got, &c)
		}
		if _, ok := m.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	want := relayNotices[3:6]
	if len(got) != len(want) {
		t.Fatalf("got %d notices, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("notice %d: got %+v, want %+v", i, *got[i], *want[i])
		}
	}
	waitSettled(t, h)
	h.terminate()
}

// Every relay test again over Unix-domain socket pairs read and written
// with raw system calls, as pgranger's own connections are (rawio.go):
// net.Pipe, which the other runs use, has no buffer and no poller.
func TestRelayOverSockets(t *testing.T) {
	relayOverSockets = true
	defer func() { relayOverSockets = false }()
	for name, f := range map[string]func(*testing.T){
		"PipelinedExtendedQueries":               TestRelayPipelinedExtendedQueries,
		"PipelinedSimpleQueries":                 TestRelayPipelinedSimpleQueries,
		"ErrorInTheMiddleOfAPipeline":            TestRelayErrorInTheMiddleOfAPipeline,
		"DenialInTheMiddleOfAPipeline":           TestRelayDenialInTheMiddleOfAPipeline,
		"CopyFromClient":                         TestRelayCopyFromClient,
		"CopyToClient":                           TestRelayCopyToClient,
		"Cancel":                                 TestRelayCancel,
		"BackendLost":                            TestRelayBackendLost,
		"ClientLeavesWithAnOpenTransaction":      TestRelayClientLeavesWithAnOpenTransaction,
		"RevocationWaitsForTheStatementBoundary": TestRelayRevocationWaitsForTheStatementBoundary,
		"IdleTimeout":                            TestRelayIdleTimeout,
		"SlowClientStallsNoOtherSession":         TestRelaySlowClientStallsNoOtherSession,
		"CatalogReloadStallsNoOtherSession":      TestRelayCatalogReloadStallsNoOtherSession,
		"DropsLogAndDebugNotices":                TestRelayDropsLogAndDebugNotices,
		"LargeFrames":                            TestRelayLargeFrames,
	} {
		t.Run(name, f)
	}
}

// A client that stops reading a large result holds up its own session
// only: other sessions' statements are answered meanwhile, and once the
// client reads again every row arrives.
func TestRelaySlowClientStallsNoOtherSession(t *testing.T) {
	const rows = 200_000 // 20 MB of DataRows
	slow := newRelayHarness(t)
	others := []*relayHarness{}
	for i := 0; i < 3; i++ {
		others = append(others, newRelayHarness(t))
	}
	slow.send(&pgproto3.Query{String: fmt.Sprintf("SELECT 'rows %d'", rows)})
	// The stream is held up: the fake backend has written what the
	// sockets and the proxy's buffers take and waits.
	stalled := func() bool {
		before := slow.back.rowsFlushed.Load()
		time.Sleep(50 * time.Millisecond)
		return before > 0 && slow.back.rowsFlushed.Load() == before
	}
	for deadline := time.Now().Add(5 * time.Second); !stalled(); {
		if time.Now().After(deadline) {
			t.Fatalf("the result did not stall behind the client that does not read (%d rows written)", slow.back.rowsFlushed.Load())
		}
	}

	start := time.Now()
	for i := 0; i < 20; i++ {
		for _, h := range others {
			h.send(&pgproto3.Query{String: "SELECT 1"})
			wantMessages(t, h.readyN(1), "T", "D:1", "C:SELECT 1", "Z:I")
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("60 statements of other sessions took %s while one client did not read", d)
	}

	n := 0
	for {
		m, err := slow.fe.Receive()
		if err != nil {
			t.Fatalf("after %d rows: %v", n, err)
		}
		switch m := m.(type) {
		case *pgproto3.DataRow:
			if len(m.Values) != 1 || len(m.Values[0]) != 100 {
				t.Fatalf("row %d: %q", n, m.Values)
			}
			n++
		case *pgproto3.CommandComplete:
			if got, want := string(m.CommandTag), fmt.Sprintf("SELECT %d", rows); got != want {
				t.Errorf("command tag %q, want %q", got, want)
			}
		case *pgproto3.ReadyForQuery:
			if n != rows {
				t.Errorf("%d rows arrived, want %d", n, rows)
			}
			slow.terminate()
			for _, h := range others {
				h.terminate()
			}
			return
		}
	}
}

// A statement naming a relation the catalog does not know waits for a
// forced catalog reload; other sessions are answered meanwhile, and the
// waiting session then gets its answer and goes on.
func TestRelayCatalogReloadStallsNoOtherSession(t *testing.T) {
	relayRefreshDelay = 1500 * time.Millisecond
	defer func() { relayRefreshDelay = 0 }()
	waiting := newRelayHarness(t)
	others := []*relayHarness{}
	for i := 0; i < 3; i++ {
		others = append(others, newRelayHarness(t))
	}
	reloads := relayRefreshes.Load()
	waiting.send(&pgproto3.Query{String: "SELECT * FROM public.not_there"})
	for deadline := time.Now().Add(5 * time.Second); relayRefreshes.Load() == reloads; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the statement naming an unknown relation did not reload the catalog")
		}
	}

	start := time.Now()
	for i := 0; i < 20; i++ {
		for _, h := range others {
			h.send(&pgproto3.Query{String: "SELECT 1"})
			wantMessages(t, h.readyN(1), "T", "D:1", "C:SELECT 1", "Z:I")
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("60 statements of other sessions took %s while one session waited for a catalog reload", d)
	}
	got := waiting.readyN(1)
	if len(got) != 2 || !strings.HasPrefix(got[0], "E:ERROR:42P01") || got[1] != "Z:I" {
		t.Errorf("the waiting session got %v, want a 42P01 error and ReadyForQuery", got)
	}
	waiting.send(&pgproto3.Query{String: "SELECT 1"})
	wantMessages(t, waiting.readyN(1), "T", "D:1", "C:SELECT 1", "Z:I")
	waiting.terminate()
	for _, h := range others {
		h.terminate()
	}
}

// A frame larger than the 32 KiB read buffers — a wide row from the
// backend, a long statement from the client, with either protocol —
// arrives whole, and small frames go on after it.
func TestRelayLargeFrames(t *testing.T) {
	h := newRelayHarness(t)
	wide := "D:" + strings.Repeat("w", 300000)
	h.send(&pgproto3.Query{String: "SELECT 'wide 300000'"})
	wantMessages(t, h.readyN(1), "T", wide, "C:SELECT 1", "Z:I")
	h.send(&pgproto3.Parse{Query: "SELECT 'wide 100000'"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	wantMessages(t, h.readyN(1), "1", "2", "D:"+strings.Repeat("w", 100000), "C:SELECT 1", "Z:I")

	literal := strings.Repeat("y", 200000)
	long := "SELECT id FROM t WHERE id = 1 AND '" + literal + "' <> ''"
	h.send(&pgproto3.Query{String: long})
	wantMessages(t, h.readyN(1), "T", "D:1", "C:SELECT 1", "Z:I")
	h.send(&pgproto3.Parse{Query: long + " AND id < 2"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	wantMessages(t, h.readyN(1), "1", "2", "D:1", "C:SELECT 1", "Z:I")
	sqls := h.back.sqls()
	if n := len(sqls); n < 2 || !strings.Contains(sqls[n-2], "'"+literal+"'") || !strings.Contains(sqls[n-1], "'"+literal+"'") {
		t.Errorf("the backend did not get the long statements whole")
	}
	// Small frames go on as before after the large ones.
	h.send(&pgproto3.Query{String: "SELECT 'rows 3'"})
	wantMessages(t, h.readyN(1), "T", "D:"+strings.Repeat("x", 100), "D:"+strings.Repeat("x", 100), "D:"+strings.Repeat("x", 100), "C:SELECT 3", "Z:I")
	h.terminate()
}
