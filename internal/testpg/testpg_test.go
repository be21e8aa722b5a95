package testpg

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestStart(t *testing.T) {
	c := Start(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.SuperDSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var got string
	if err := conn.QueryRow(ctx, `SELECT regexp_replace('Ünïcødé ١٢٣ 漢字' COLLATE "und-x-icu", '[[:upper:]]', 'X', 'g')`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "Xnïcødé ١٢٣ 漢字" {
		t.Fatalf("got %q", got)
	}
}
