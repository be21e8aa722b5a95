package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// A startup setting is a raw value, as in postgresql.conf: a list setting
// such as search_path=hr,sales (JDBC's currentSchema=hr,sales, libpq's
// PGOPTIONS='-c search_path=hr,sales') is two schemas on the backend, as on
// a direct connection — not the one quoted schema "hr,sales".
func TestStartupListSettingIsARawValue(t *testing.T) {
	requireCluster(t)
	for name, params := range map[string]map[string]string{
		"search_path parameter": {"search_path": "hr,sales"},
		"options":               {"options": "-c search_path=hr,sales"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := pgx.ParseConfig(demoProxy.dsn("bob", "bob"))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range params {
				cfg.RuntimeParams[k] = v
			}
			c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			conn, err := pgx.ConnectConfig(c, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(c)
			simple := pgx.QueryExecModeSimpleProtocol
			equalLines(t, "backend search_path", rows(t, conn, "SELECT current_setting('search_path'), current_schema()", simple), []string{"hr,sales|hr"})
			// Both schemas resolve, for pgranger and the backend alike.
			equalLines(t, "hr", rows(t, conn, "SELECT count(*) FROM employees"), []string{"3"})
			equalLines(t, "sales", rows(t, conn, "SELECT ssn FROM orders WHERE id = 1"), []string{"xxx-xx-1111"})
		})
	}
}
