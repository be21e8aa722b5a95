package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
)

// The pgx rows of issue 5's client list that the other files do not
// cover: SendBatch pipelines that write, LISTEN/NOTIFY, cancellation
// through a context (pgxmodes_test.go has the read-only batches,
// dml_test.go CopyFrom, cancel_test.go CancelRequest).

// A batch is one pipeline (Parse/Describe of every statement, then
// Bind/Execute of each, one Sync): writes into a table bob may write and
// masked reads in one round trip, the INSERT … SELECT … RETURNING
// returning the masked values; a batch with a denied statement writes
// nothing.
func TestPgxBatchWrites(t *testing.T) {
	p := writerProxy(t, "pgx ")
	conn := connect(t, p, "bob")
	ctx := ctx(t)

	b := &pgx.Batch{}
	b.Queue("INSERT INTO mallory.loot (v) VALUES ($1), ($2)", "pgx a", "pgx b")
	b.Queue("SELECT ssn FROM sales.orders WHERE id = $1", 3)
	b.Queue("INSERT INTO mallory.loot (v) SELECT 'pgx ssn ' || id || ' ' || ssn FROM sales.orders WHERE id = ANY($1) ORDER BY id RETURNING v", []int{1, 2, 5})
	b.Queue("UPDATE mallory.loot SET v = v || '!' WHERE v = $1", "pgx b")
	b.Queue(`SELECT string_agg(v, ',' ORDER BY v COLLATE "C") FROM mallory.loot WHERE starts_with(v, 'pgx ')`)
	br := conn.SendBatch(ctx, b)
	tag, err := br.Exec()
	if err != nil || tag.String() != "INSERT 0 2" {
		t.Errorf("batch INSERT: %q %v", tag, err)
	}
	var ssn string
	if err := br.QueryRow().Scan(&ssn); err != nil || ssn != "xxx-xx-3333" {
		t.Errorf("batch SELECT: %q %v", ssn, err)
	}
	rs, err := br.Query()
	var returned []string
	if err == nil {
		returned, err = pgx.CollectRows(rs, pgx.RowTo[string])
	}
	// Order 2 is EU: filtered out for bob.
	equalLines(t, "batch INSERT … RETURNING", returned, []string{"pgx ssn 1 xxx-xx-1111", "pgx ssn 5 xxx-xx-5555"})
	if err != nil {
		t.Errorf("batch INSERT … RETURNING: %v", err)
	}
	if tag, err := br.Exec(); err != nil || tag.String() != "UPDATE 1" {
		t.Errorf("batch UPDATE: %q %v", tag, err)
	}
	var all string
	if err := br.QueryRow().Scan(&all); err != nil || all != "pgx a,pgx b!,pgx ssn 1 xxx-xx-1111,pgx ssn 5 xxx-xx-5555" {
		t.Errorf("batch read back: %q %v", all, err)
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}

	// A denied statement fails the batch at its prepare step, before
	// anything ran: the INSERT queued before it writes nothing.
	b = &pgx.Batch{}
	b.Queue("INSERT INTO mallory.loot (v) VALUES ($1)", "pgx denied batch")
	b.Queue("INSERT INTO sales.orders (id, customer, region) VALUES ($1, 'x', 'US')", 97)
	br = conn.SendBatch(ctx, b)
	if _, err := br.Exec(); sqlstate(err) != "42501" {
		t.Errorf("batch with a denied INSERT: err = %v, want 42501", err)
	}
	br.Close()
	equalLines(t, "mallory.loot", lootRows(t, "pgx "), []string{"pgx a", "pgx b!", "pgx ssn 1 xxx-xx-1111", "pgx ssn 5 xxx-xx-5555"})
}

// LISTEN/NOTIFY between two sessions: a notification reaches an idle
// listener (WaitForNotification) and one that is running a query
// (NotificationResponse relayed between the query's messages); a payload
// computed from a masked column carries the masked value.
func TestPgxListenNotify(t *testing.T) {
	requireCluster(t)
	var mu sync.Mutex
	var seen []string
	cfg, err := pgx.ParseConfig(demoProxy.dsn("bob", "bob"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) {
		mu.Lock()
		seen = append(seen, n.Channel+" "+n.Payload)
		mu.Unlock()
	}
	ctx := ctx(t)
	listener, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close(context.Background())
	notifier := connect(t, demoProxy, "bob")
	if _, err := listener.Exec(ctx, "LISTEN pgranger_pgx"); err != nil {
		t.Fatal(err)
	}

	if _, err := notifier.Exec(ctx, "NOTIFY pgranger_pgx, 'idle'"); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := listener.PgConn().WaitForNotification(wctx); err != nil {
		t.Fatalf("WaitForNotification: %v", err)
	}

	// While the listener runs a query: the notification arrives with its
	// results, before ReadyForQuery.
	done := make(chan error, 1)
	go func() {
		time.Sleep(200 * time.Millisecond)
		_, err := notifier.Exec(ctx, "SELECT pg_notify('pgranger_pgx', ssn) FROM sales.orders WHERE id = 5")
		done <- err
	}()
	if _, err := listener.Exec(ctx, "SELECT pg_sleep(0.6)"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("pg_notify: %v", err)
	}
	// Transactional: a notification sent in a rolled-back transaction is
	// never delivered; one after UNLISTEN is not either.
	tx, err := notifier.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx.Exec(ctx, "NOTIFY pgranger_pgx, 'rolled back'")
	tx.Rollback(ctx)
	notifier.Exec(ctx, "NOTIFY pgranger_pgx, 'last'")
	if _, err := listener.Exec(ctx, "SELECT pg_sleep(0.2)"); err != nil {
		t.Fatal(err)
	}
	listener.Exec(ctx, "UNLISTEN pgranger_pgx")
	notifier.Exec(ctx, "NOTIFY pgranger_pgx, 'after unlisten'")
	listener.Exec(ctx, "SELECT pg_sleep(0.2)")
	mu.Lock()
	defer mu.Unlock()
	equalLines(t, "notifications", seen, []string{"pgranger_pgx idle", "pgranger_pgx xxx-xx-5555", "pgranger_pgx last"})
}

// Cancellation through a context. pgx's default gives up on the
// connection (it sets a deadline and closes it): pgranger must cancel the
// backend query of the vanished client rather than let it run on. With
// CancelRequestContextWatcherHandler pgx sends a CancelRequest instead:
// 57014, and the connection goes on.
func TestPgxContextCancel(t *testing.T) {
	requireCluster(t)
	marker := fmt.Sprintf("pgx_ctx_cancel_%d", time.Now().UnixNano())
	super, err := pgx.Connect(ctx(t), cluster.SuperDSN("demo"))
	if err != nil {
		t.Fatal(err)
	}
	defer super.Close(context.Background())
	running := func() (int, error) {
		var n int
		err := super.QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%'||$1||'%' AND pid <> pg_backend_pid()", marker).Scan(&n)
		return n, err
	}
	conn := connect(t, demoProxy, "bob")
	qctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := conn.Exec(qctx, "SELECT pg_sleep(30) AS "+marker)
		done <- err
	}()
	// The backend runs it (so the check below is not vacuous) …
	eventually(t, 10*time.Second, func() string {
		if n, err := running(); err != nil || n != 1 {
			return fmt.Sprintf("the backend does not run the query: %d %v", n, err)
		}
		return ""
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("default context handling: err = %v, want context.Canceled", err)
	}
	if !conn.IsClosed() {
		t.Errorf("pgx kept the connection after the context was cancelled")
	}
	// … and stops when the client has gone.
	eventually(t, 10*time.Second, func() string {
		if n, err := running(); err != nil || n != 0 {
			return fmt.Sprintf("the backend still runs the query of the client that went away: %d %v", n, err)
		}
		return ""
	})

	cfg, err := pgx.ParseConfig(demoProxy.dsn("bob", "bob"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: 10 * time.Second}
	}
	c2, err := pgx.ConnectConfig(ctx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close(context.Background())
	qctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	start := time.Now()
	_, err = c2.Exec(qctx, "SELECT pg_sleep(30)")
	cancel()
	if sqlstate(err) != "57014" || time.Since(start) > 5*time.Second {
		t.Errorf("cancel request through the context: err = %v after %v, want 57014", err, time.Since(start))
	}
	if c2.IsClosed() {
		t.Fatal("connection closed after a cancel request")
	}
	got, err := tryRows(c2, "SELECT ssn FROM sales.orders WHERE id = $1", 1)
	if err != nil || strings.Join(got, ",") != "xxx-xx-1111" {
		t.Errorf("after the cancel: %q %v", got, err)
	}
}
