package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// COPY … TO STDOUT reads through the same wrappers as a query: masked
// values, filtered rows, in text, CSV and binary formats.
func TestCopyToStdout(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	cases := []struct{ sql, want string }{
		{"COPY sales.orders (id, ssn) TO STDOUT", "1\txxx-xx-1111\n3\txxx-xx-3333\n5\txxx-xx-5555\n"},
		{"COPY (SELECT id, ssn, amount FROM sales.orders WHERE id > 1 ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)", "id,ssn,amount\n3,xxx-xx-3333,4410.25\n5,xxx-xx-5555,1780.00\n"},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		if _, err := conn.PgConn().CopyTo(context.Background(), &buf, c.sql); err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if buf.String() != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.sql, buf.String(), c.want)
		}
	}
	var bin bytes.Buffer
	if _, err := conn.PgConn().CopyTo(context.Background(), &bin, "COPY (SELECT ssn FROM sales.orders WHERE id = 1) TO STDOUT WITH (FORMAT binary)"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(bin.Bytes(), []byte("xxx-xx-1111")) || bytes.Contains(bin.Bytes(), []byte("111-11-1111")) {
		t.Errorf("binary COPY: %q", bin.Bytes())
	}
	for _, sql := range []string{"COPY hr.employees (salary) TO STDOUT", "COPY sales.orders TO '/tmp/pgranger-x'", "COPY sales.orders FROM STDIN"} {
		if _, err := conn.PgConn().CopyTo(context.Background(), &bin, sql); sqlstate(err) != "42501" {
			t.Errorf("%s: err = %v, want 42501", sql, err)
		}
	}
}

func TestPsqlCopy(t *testing.T) {
	out, errOut, err := psql(t, "carol", "-c", `\copy (SELECT id, ssn, amount FROM sales.orders ORDER BY id) TO STDOUT WITH (FORMAT csv)`)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if want := "2,xxx-xx-2222,\n4,xxx-xx-4444,\n7,xxx-xx-7777,"; strings.TrimSpace(out) != want {
		t.Errorf("\\copy output:\n%s\nwant:\n%s", out, want)
	}
}
