package sqlrewrite

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgranger/pgranger/internal/testpg"
)

// The package's tests that need PostgreSQL share one throwaway cluster
// (testpg.Shared), started by the first of them; each works in a database
// of its own.
func TestMain(m *testing.M) { testpg.Main(m) }

// pgDatabase creates database db on the shared cluster, runs setup in it
// as the superuser and returns a superuser connection to it, closed when
// the test ends. It skips the test when PostgreSQL is not installed.
func pgDatabase(t *testing.T, db, setup string) (*testpg.Cluster, *pgx.Conn) {
	t.Helper()
	shared := testpg.Shared(t)
	ctx := context.Background()
	if err := shared.CreateDatabase(ctx, db); err != nil {
		t.Fatal(err)
	}
	if setup != "" {
		if err := shared.Exec(ctx, db, setup); err != nil {
			t.Fatalf("setting up %s: %v", db, err)
		}
	}
	conn, err := pgx.Connect(ctx, shared.SuperDSN(db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return shared, conn
}
