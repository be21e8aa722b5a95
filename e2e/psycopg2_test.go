package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// psycopg2 (Debian python3-psycopg2) through pgranger. The system Python
// is used on purpose: python3 on PATH may be another interpreter (pyenv)
// that lacks Debian's module.
const systemPython = "/usr/bin/python3"

func TestPsycopg2(t *testing.T) {
	requireCluster(t)
	ensureDebianPackage(t, "python3-psycopg2", func() bool {
		return exec.Command(systemPython, "-c", "import psycopg2").Run() == nil
	})
	stored := storedOrders(t)
	bob := bobsOrders(stored)
	p := writerProxy(t, "py ") // bob may write mallory.loot
	run := runClient(t, time.Minute, "", nil, systemPython,
		filepath.Join(repoRoot, "e2e/testdata/clients/psycopg2_check.py"),
		p.dsn("bob", "bob"), p.dsn("carol", "carol"))
	if run.err != nil {
		t.Fatalf("psycopg2_check.py: %v\n%s\n%s", run.err, run.stdout, run.stderr)
	}
	byID := map[int]order{}
	for _, o := range stored {
		byID[o.id] = o
	}
	ssn := func(id int) string { return maskShowLast4(byID[id].ssn) }

	var want []string
	for _, o := range bob {
		if o.id > 1 {
			want = append(want, "params: "+bobRow(o))
		}
	}
	for _, o := range bob {
		if o.id >= 3 && o.id <= 5 {
			want = append(want, "params array: "+ssn(o.id)) // 4 is EU: filtered out
		}
	}
	want = append(want, "params named: 42")
	for _, o := range bob {
		want = append(want, fmt.Sprintf("named: %d|%s|%s", o.id, ssn(o.id), orNull(o.amount)))
	}
	var later []order
	for _, o := range bob {
		if o.id > 1 {
			later = append(later, o)
		}
	}
	want = append(want, fmt.Sprintf("fetchmany: %d|%s", later[0].id, maskHash(later[0].email)))
	for _, o := range later[1:] {
		want = append(want, fmt.Sprintf("fetchmany rest: %d|%s", o.id, maskHash(o.email)))
	}
	want = append(want,
		fmt.Sprintf("scroll first: %d|%s", bob[0].id, ssn(bob[0].id)),
		fmt.Sprintf("scroll first: %d|%s", bob[1].id, ssn(bob[1].id)),
		fmt.Sprintf("scroll again: %d|%s", bob[0].id, ssn(bob[0].id)),
	)
	for _, o := range bob {
		want = append(want, fmt.Sprintf("withhold: %d|%s", o.id, ssn(o.id)))
	}
	for _, o := range bob {
		want = append(want, fmt.Sprintf("copy table: %d|%s|%s", o.id, ssn(o.id), maskHash(o.email)))
	}
	want = append(want, "copy csv: id,ssn,amount")
	for _, o := range later {
		want = append(want, fmt.Sprintf("copy csv: %d,%s,%s", o.id, ssn(o.id), orNull(o.amount)))
	}
	want = append(want,
		"copy denied column: ERROR 42501",
		"copy from: ERROR 42501",
		"copy_expert from: 2",
		"copy_expert csv from: 1",
		"copy_from: 1",
		"executemany: 3",
		"returning: py ssn 1 "+ssn(1), // order 2 is EU: filtered out for bob
		"returning: py ssn 3 "+ssn(3),
	)
	written := []string{"py copy a", "py copy b", "py copy, csv", "py copy_from", "py many 0", "py many 1", "py many 2",
		"py ssn 1 " + ssn(1), "py ssn 3 " + ssn(3)}
	sort.Strings(written) // COLLATE "C"
	for _, v := range written {
		want = append(want, "written: "+v)
	}
	want = append(want,
		"txn first: "+ssn(5),
		"txn denied: ERROR 42501",
		"txn aborted: ERROR 25P02",
		"txn after rollback: "+ssn(3),
		"cancel: ERROR 57014",
		"after cancel: "+ssn(1),
		"notify: pgranger_e2e hello",
		"lobject: OperationalError True",
		"after lobject: "+ssn(3),
		"readonly: 5|"+ssn(5),
		"readonly oracle: 1",
		"readonly oracle: 3",
		"readonly oracle: 5",
		"readonly txn: on",
		"carol denied: ERROR 42501",
	)
	for _, o := range stored {
		if o.region == "EU" {
			want = append(want, fmt.Sprintf("carol: %d|NULL", o.id))
		}
	}
	expectLines(t, "psycopg2_check.py", run, want)
	equalLines(t, "mallory.loot", lootRows(t, "py "), written)
}
