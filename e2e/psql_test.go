package e2e

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// psql runs the real psql client through the demo proxy and returns its
// stdout and stderr (unaligned, tuples only, no psqlrc).
func psql(t *testing.T, user string, args ...string) (string, string, error) {
	t.Helper()
	requireCluster(t)
	path, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("skipping: psql not installed (make test installs postgresql-client)")
	}
	cmd := exec.Command(path, append([]string{"-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", demoProxy.dsn(user, user)}, args...)...)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "LC_ALL=C")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return strings.TrimRight(stdout.String(), "\n"), stderr.String(), err
}

func TestPsqlMaskedOutput(t *testing.T) {
	out, errOut, err := psql(t, "bob", "-c", "SELECT id, ssn, email, amount FROM sales.orders ORDER BY id")
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, errOut)
	}
	want := strings.Join([]string{
		"1|xxx-xx-1111|b5fc85e55755f9e0d030a10ab4429b6b2944855f9a0d60077fe832becbc41d72|1200.50",
		"3|xxx-xx-3333|" + sha256hex("grace@example.com") + "|4410.25",
		"5|xxx-xx-5555|" + sha256hex("barbara@example.com") + "|1780.00",
	}, "\n")
	if out != want {
		t.Errorf("psql output:\n%s\nwant:\n%s", out, want)
	}
}

func TestPsqlMultiStatementWithDeniedSecondStatement(t *testing.T) {
	// One denial rejects the whole string before anything runs.
	out, errOut, err := psql(t, "carol", "-c", "SELECT 'first ran'; SELECT name FROM hr.employees")
	if err == nil {
		t.Fatal("psql should fail")
	}
	if strings.Contains(out, "first ran") {
		t.Errorf("the first statement ran although the second was denied: %q", out)
	}
	if !strings.Contains(errOut, "ERROR:  pgranger: permission denied") || !strings.Contains(errOut, "hr.employees") {
		t.Errorf("stderr = %q", errOut)
	}
}

func TestPsqlDescribe(t *testing.T) {
	// psql's catalog queries pass (pg_catalog is not governed by Ranger).
	out, errOut, err := psql(t, "bob", "-c", `\d sales.orders`)
	if err != nil {
		t.Fatalf("\\d: %v\n%s", err, errOut)
	}
	for _, col := range []string{"id|integer", "ssn|text", "amount|numeric(12,2)", "order_date|date"} {
		if !strings.Contains(out, col) {
			t.Errorf("\\d sales.orders lacks %q:\n%s", col, out)
		}
	}
	out, errOut, err = psql(t, "bob", "-c", `\dt sales.*`)
	if err != nil || !strings.Contains(out, "sales|orders|table|postgres") {
		t.Errorf("\\dt sales.*: %v\n%s%s", err, out, errOut)
	}
}

func TestPsqlSyntaxErrorIsTheParsersMessage(t *testing.T) {
	_, errOut, err := psql(t, "bob", "-c", "SELECT id FRM sales.orders")
	if err == nil || !strings.Contains(errOut, `ERROR:  syntax error at or near "sales"`) {
		t.Errorf("err = %v, stderr = %q", err, errOut)
	}
}
