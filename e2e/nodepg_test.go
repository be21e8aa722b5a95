package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// node-postgres (npm pg) through pgranger. The module is installed once
// into the client cache (clientCacheDir) and reused by later runs.
const nodePgVersion = "8.23.1"

func nodePgModules(t *testing.T) (node, modules string) {
	t.Helper()
	return npmModules(t, "node-pg-"+nodePgVersion, "pg@"+nodePgVersion)
}

// npmModules returns node and a node_modules directory holding the npm
// packages, installed into the client cache directory name on first use
// (nodejs and npm from Debian when missing). It skips loudly only when
// the packages cannot be installed.
func npmModules(t *testing.T, name string, packages ...string) (node, modules string) {
	t.Helper()
	ensureDebianPackage(t, "nodejs", func() bool { _, err := exec.LookPath("node"); return err == nil })
	ensureDebianPackage(t, "npm", func() bool { _, err := exec.LookPath("npm"); return err == nil })
	node, _ = exec.LookPath("node")
	dir := filepath.Join(clientCacheDir(t), name)
	modules = filepath.Join(dir, "node_modules")
	installed := func() bool {
		for _, p := range packages {
			pkg := p[:strings.LastIndex(p, "@")]
			if _, err := os.Stat(filepath.Join(modules, pkg, "package.json")); err != nil {
				return false
			}
		}
		return true
	}
	if installed() {
		return node, modules
	}
	npm, _ := exec.LookPath("npm")
	tmp, err := os.MkdirTemp(filepath.Dir(dir), name+"-install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	args := append([]string{"install", "--prefix", tmp, "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error"}, packages...)
	run := runClient(t, 3*time.Minute, tmp, nil, npm, args...)
	if run.err != nil {
		skipLoudly(t, "cannot install npm %s (is the npm registry reachable?): %v\n%s%s", strings.Join(packages, " "), run.err, run.stdout, run.stderr)
	}
	// Another run may have finished first; either copy is complete.
	if err := os.Rename(tmp, dir); err != nil && !installed() {
		t.Fatal(err)
	}
	return node, modules
}

func TestNodePostgres(t *testing.T) {
	requireCluster(t)
	node, modules := nodePgModules(t)
	stored := storedOrders(t)
	bob := bobsOrders(stored)
	p := writerProxy(t, "node ") // bob may write mallory.loot
	run := runClient(t, time.Minute, "", []string{"NODE_PATH=" + modules}, node,
		filepath.Join(repoRoot, "e2e/testdata/clients/nodepg_check.js"),
		p.dsn("bob", "bob"), p.dsn("carol", "carol"))
	if run.err != nil {
		t.Fatalf("nodepg_check.js: %v\n%s\n%s", run.err, run.stdout, run.stderr)
	}
	byID := map[int]order{}
	for _, o := range stored {
		byID[o.id] = o
	}
	named := func(id int) string {
		o := byID[id]
		if o.region != "US" {
			return "(none)"
		}
		return fmt.Sprintf("%d|%s|%s", id, maskShowLast4(o.ssn), maskHash(o.email))
	}
	var want []string
	for _, o := range bob {
		if o.id > 1 {
			want = append(want, "params: "+bobRow(o))
		}
	}
	for _, o := range bob {
		if o.id >= 3 && o.id <= 5 {
			want = append(want, fmt.Sprintf("params array: %d|%s", o.id, maskShowLast4(o.ssn)))
		}
	}
	want = append(want, "fields: id:23 ssn:25 amount:1700")
	for _, id := range []int{1, 3, 5, 2} {
		want = append(want, fmt.Sprintf("named %d: %s", id, named(id)))
	}
	want = append(want,
		"named denied 1: ERROR 42501",
		"named denied 2: ERROR 42501",
		"named insert: ERROR 42501",
		"named returning: INSERT 1 node a|6",
		"named returning: INSERT 1 node b|6",
		"named masked returning 1: 1 node ssn 1 "+maskShowLast4(byID[1].ssn),
		"named masked returning 2: 0 ", // EU: filtered out for bob
		"named masked returning 3: 1 node ssn 3 "+maskShowLast4(byID[3].ssn),
		"named again: "+named(3),
		"txn denied: ERROR 42501",
		"txn aborted: ERROR 25P02",
		"txn after rollback: "+named(5),
	)
	// The INSERT before the denial was rolled back with the transaction.
	written := []string{"node a", "node b", "node ssn 1 " + maskShowLast4(byID[1].ssn), "node ssn 3 " + maskShowLast4(byID[3].ssn)}
	for _, v := range written {
		want = append(want, "written: "+v)
	}
	want = append(want, "carol denied: ERROR 42501")
	for _, o := range stored {
		if o.region == "EU" {
			want = append(want, fmt.Sprintf("carol: %d|NULL", o.id))
		}
	}
	expectLines(t, "nodepg_check.js", run, want)
	equalLines(t, "mallory.loot", lootRows(t, "node "), written)
}
