package e2e

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Helpers for the allowed write path of the real-client tests: bob has
// update access on mallory.* in attackPolicies (and the demo policies
// otherwise), so each client writes rows into mallory.loot, reads them
// back and leaves the table as it found it.

// writerProxy starts a proxy with the demo policies plus attackPolicies'
// grants, and deletes the rows whose v starts with prefix when the test
// ends (mallory.loot is shared with dml_test.go and attack_test.go, which
// expect it empty).
func writerProxy(t *testing.T, prefix string) *proxy {
	t.Helper()
	p := startProxy(t, proxyOptions{policies: attackPolicies(t).bytes(t)})
	t.Cleanup(func() { deleteLoot(t, prefix) })
	return p
}

func deleteLoot(t *testing.T, prefix string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, cluster.SuperDSN("demo"))
	if err != nil {
		t.Errorf("cleaning mallory.loot: %v", err)
		return
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "DELETE FROM mallory.loot WHERE starts_with(v, $1)", prefix); err != nil {
		t.Errorf("cleaning mallory.loot: %v", err)
	}
}

// lootRows are the rows of mallory.loot starting with prefix, read
// directly as the superuser: what the client wrote, not what pgranger
// shows.
func lootRows(t *testing.T, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, cluster.SuperDSN("demo"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rs, err := c.Query(ctx, `SELECT v FROM mallory.loot WHERE starts_with(v, $1) ORDER BY v COLLATE "C"`, prefix)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rs, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}
