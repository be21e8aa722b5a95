package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// npm pg-copy-streams, the COPY library node-postgres users stream with.
const pgCopyStreamsVersion = "7.0.0"

// COPY through pgranger with node-postgres and pg-copy-streams
// (testdata/clients/nodepg_copy.js): COPY … TO STDOUT of a governed table
// and query — text, CSV and binary — delivers exactly the bytes pgx's
// CopyTo gets through pgranger, which are the masked, filtered values
// bob's SELECT returns; a denied COPY fails with 42501 and the connection
// goes on; COPY … FROM STDIN into a table bob may write stores the rows
// (sent in chunks that split a line), a denied one and a malformed row
// fail (42501, 22P04) and store nothing.
func TestNodePostgresCopy(t *testing.T) {
	requireCluster(t)
	node, modules := npmModules(t, fmt.Sprintf("node-pg-%s-copy-streams-%s", nodePgVersion, pgCopyStreamsVersion),
		"pg@"+nodePgVersion, "pg-copy-streams@"+pgCopyStreamsVersion)
	p := writerProxy(t, "nodecopy ")
	start := time.Now()
	run := runClient(t, time.Minute, "", []string{"NODE_PATH=" + modules}, node,
		filepath.Join(repoRoot, "e2e/testdata/clients/nodepg_copy.js"), p.dsn("bob", "bob"))
	if run.err != nil {
		t.Fatalf("nodepg_copy.js: %v\n%s\n%s", run.err, run.stdout, run.stderr)
	}
	t.Logf("nodepg_copy.js ran in %v", time.Since(start))
	got := map[string]string{}
	var names []string
	for _, l := range outputLines(run.stdout) {
		name, value, _ := strings.Cut(l, ": ")
		got[name] = value
		names = append(names, name)
	}
	copied := func(name string) []byte {
		t.Helper()
		b, err := base64.StdEncoding.DecodeString(got[name])
		if err != nil {
			t.Errorf("%s: %q is not base64: %v", name, got[name], err)
		}
		return b
	}

	// What the proxy gives pgx for the same COPY, and what bob's SELECT
	// returns: computed from the stored rows with bob's masks and filter.
	conn := connect(t, p, "bob")
	viaPgx := func(sql string) []byte {
		t.Helper()
		var buf bytes.Buffer
		if _, err := conn.PgConn().CopyTo(context.Background(), &buf, sql); err != nil {
			t.Fatalf("pgx %s: %v", sql, err)
		}
		return buf.Bytes()
	}
	bob := bobsOrders(storedOrders(t))
	var text, csv strings.Builder
	csv.WriteString("id,ssn,email,amount,order_date\n")
	for _, o := range bob {
		fmt.Fprintf(&text, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", o.id, o.customer, maskShowLast4(o.ssn), maskHash(o.email), orNull(o.amount), o.region, maskDateShowYear(o.orderDate))
		csv.WriteString(strings.ReplaceAll(bobRow(o), "|", ",") + "\n")
	}
	var selected []string
	for _, r := range rows(t, conn, "SELECT * FROM sales.orders ORDER BY id") {
		selected = append(selected, strings.ReplaceAll(r, "|", "\t"))
	}
	if strings.Join(selected, "\n")+"\n" != text.String() {
		t.Fatalf("bob's SELECT through pgranger:\n%s\nwant:\n%s", strings.Join(selected, "\n"), text.String())
	}

	for _, c := range []struct{ name, sql, want string }{
		{"to table text", "COPY sales.orders TO STDOUT", text.String()},
		{"to query csv", "COPY (SELECT id, ssn, email, amount, order_date FROM sales.orders ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)", csv.String()},
	} {
		b := copied(c.name)
		if string(b) != c.want {
			t.Errorf("%s: node got\n%s\nwant\n%s", c.name, b, c.want)
		}
		if pgxBytes := viaPgx(c.sql); !bytes.Equal(b, pgxBytes) {
			t.Errorf("%s: node and pgx got different bytes:\n%q\n%q", c.name, b, pgxBytes)
		}
	}
	bin := copied("to query binary")
	if pgxBytes := viaPgx("COPY (SELECT id, ssn FROM sales.orders ORDER BY id) TO STDOUT WITH (FORMAT binary)"); !bytes.Equal(bin, pgxBytes) || len(bin) == 0 {
		t.Errorf("binary COPY: node and pgx got different bytes:\n%q\n%q", bin, pgxBytes)
	}
	for _, o := range bob {
		if !bytes.Contains(bin, []byte(maskShowLast4(o.ssn))) || bytes.Contains(bin, []byte(*o.ssn)) {
			t.Errorf("binary COPY lacks the masked ssn of order %d or holds the stored one: %q", o.id, bin)
		}
	}

	const stored = "nodecopy a|nodecopy b|nodecopy c, quoted|nodecopy tab\there"
	want := map[string]string{
		"to denied":    "ERROR 42501",
		"after denial": "xxx-xx-3333",
		"from text":    "3",
		"from csv":     "1",
		"from denied":  "ERROR 42501",
		"from bad row": "ERROR 22P04",
		"read back":    stored,
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %q, want %q\nstderr:\n%s", name, got[name], w, run.stderr)
		}
	}
	if wantNames := "to table text,to query csv,to query binary,to denied,after denial,from text,from csv,from denied,from bad row,read back"; strings.Join(names, ",") != wantNames {
		t.Errorf("checks printed: %s\nwant: %s", strings.Join(names, ","), wantNames)
	}
	equalLines(t, "mallory.loot as stored", lootRows(t, "nodecopy "), strings.Split(stored, "|"))
}
