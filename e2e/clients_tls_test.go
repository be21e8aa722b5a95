package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// JDBC, psycopg2 and node-postgres negotiate TLS with pgranger
// (listen.tls-cert, require-tls) and verify its certificate.
func TestClientsOverTLS(t *testing.T) {
	requireCluster(t)
	cert, key := writeSelfSigned(t, t.TempDir())
	p := startProxy(t, proxyOptions{env: map[string]string{
		"PGRANGER_LISTEN__TLS_CERT": cert, "PGRANGER_LISTEN__TLS_KEY": key, "PGRANGER_LISTEN__REQUIRE_TLS": "true",
	}})
	const q = "SELECT ssn FROM sales.orders WHERE id = 1"
	want := []string{"xxx-xx-1111"}

	t.Run("jdbc", func(t *testing.T) {
		java, cp := jdbcProgram(t)
		url := jdbcURL(p.addr, "bob", "bob") + "&sslmode=verify-full&sslrootcert=" + cert
		run := runClient(t, time.Minute, "", nil, java, "-cp", cp, "ClientCheck", "query", url, q)
		if run.err != nil {
			t.Fatalf("%v\n%s%s", run.err, run.stdout, run.stderr)
		}
		expectLines(t, "JDBC over TLS", run, []string{"query: " + want[0]})
	})
	t.Run("psycopg2", func(t *testing.T) {
		ensureDebianPackage(t, "python3-psycopg2", func() bool {
			return exec.Command(systemPython, "-c", "import psycopg2").Run() == nil
		})
		dsn := strings.Replace(p.dsn("bob", "bob"), "sslmode=disable", "sslmode=verify-full&sslrootcert="+cert, 1)
		run := runClient(t, time.Minute, "", nil, systemPython, "-c", `
import sys, psycopg2
c = psycopg2.connect(sys.argv[1])
cur = c.cursor()
cur.execute(sys.argv[2])
assert c.info.ssl_in_use
for r in cur.fetchall():
    print(r[0])
`, dsn, q)
		if run.err != nil {
			t.Fatalf("%v\n%s%s", run.err, run.stdout, run.stderr)
		}
		expectLines(t, "psycopg2 over TLS", run, want)
	})
	t.Run("node-postgres", func(t *testing.T) {
		node, modules := nodePgModules(t)
		run := runClient(t, time.Minute, "", []string{"NODE_PATH=" + modules}, node, "-e", `
const pg = require('pg');
const fs = require('fs');
const [url, ca, sql] = process.argv.slice(1);
(async () => {
  const c = new pg.Client({ connectionString: url, ssl: { ca: fs.readFileSync(ca), servername: '127.0.0.1' } });
  await c.connect();
  if (!c.connection.stream.encrypted) throw new Error('not TLS');
  const r = await c.query(sql);
  for (const row of r.rows) console.log(row.ssn);
  await c.end();
})().catch((e) => { console.error(e); process.exit(1); });
`, strings.Replace(p.dsn("bob", "bob"), "?sslmode=disable", "", 1), cert, q)
		if run.err != nil {
			t.Fatalf("%v\n%s%s", run.err, run.stdout, run.stderr)
		}
		expectLines(t, "node-postgres over TLS", run, want)
	})
}
