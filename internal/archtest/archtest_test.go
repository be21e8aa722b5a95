package archtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pgranger/pgranger/internal/testrepo"
)

const module = "github.com/pgranger/pgranger"

// rule is one row of the package map in docs/architecture.md.
type rule struct {
	layer      int
	imports    []string // may import (module packages, relative to the module)
	testsAlso  []string // tests may also import
	docLineNum int
}

// listedPackage is what `go list -json` says of one package.
type listedPackage struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// readRules parses the table under "## Package map and import rules":
// | `pkg` | layer | job | `a`, `b` or — | `c` or — |
func readRules(t *testing.T, r io.Reader) map[string]rule {
	t.Helper()
	rules := map[string]rule{}
	sc := bufio.NewScanner(r)
	inSection := false
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			inSection = line == "## Package map and import rules"
			continue
		}
		if !inSection || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 5 {
			t.Fatalf("docs/architecture.md:%d: want 5 cells (package, layer, job, may import, tests may also import), have %d", n, len(cells))
		}
		names := func(cell string) []string {
			var out []string
			for _, f := range strings.Split(cell, ",") {
				f = strings.TrimSpace(f)
				if f == "—" || f == "" {
					continue
				}
				if !strings.HasPrefix(f, "`") || !strings.HasSuffix(f, "`") {
					t.Fatalf("docs/architecture.md:%d: %q: want `package` or —", n, f)
				}
				out = append(out, strings.Trim(f, "`"))
			}
			return out
		}
		pkg := names(cells[0])
		layer, err := strconv.Atoi(strings.TrimSpace(cells[1]))
		if len(pkg) != 1 || err != nil {
			t.Fatalf("docs/architecture.md:%d: want one package and a layer number", n)
		}
		if _, dup := rules[pkg[0]]; dup {
			t.Fatalf("docs/architecture.md:%d: %s has two rows", n, pkg[0])
		}
		rules[pkg[0]] = rule{layer: layer, imports: names(cells[3]), testsAlso: names(cells[4]), docLineNum: n}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rules) == 0 {
		t.Fatal("docs/architecture.md: no package map found under \"## Package map and import rules\"")
	}
	return rules
}

func goList(t *testing.T, root string) []listedPackage {
	t.Helper()
	// The go command that runs the tests (GOROOT/bin, which go test
	// puts first on PATH), else the one on PATH.
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// local maps the module's import paths to the table's names and drops
// the rest (standard library, other modules).
func local(paths []string) []string {
	var out []string
	for _, p := range paths {
		if rel, ok := strings.CutPrefix(p, module+"/"); ok {
			out = append(out, rel)
		}
	}
	return out
}

func TestImportsFollowDocsArchitecture(t *testing.T) {
	root := testrepo.Root(t)
	f, err := os.Open(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rules := readRules(t, f)

	// The table itself: every import it allows is of a lower layer.
	for pkg, r := range rules {
		for _, imp := range r.imports {
			ir, ok := rules[imp]
			switch {
			case !ok:
				t.Errorf("docs/architecture.md:%d: %s may import %s, which has no row", r.docLineNum, pkg, imp)
			case ir.layer >= r.layer:
				t.Errorf("docs/architecture.md:%d: %s (layer %d) may import %s (layer %d): only lower layers", r.docLineNum, pkg, r.layer, imp, ir.layer)
			}
		}
		for _, imp := range r.testsAlso {
			if _, ok := rules[imp]; !ok {
				t.Errorf("docs/architecture.md:%d: %s's tests may import %s, which has no row", r.docLineNum, pkg, imp)
			}
		}
	}

	// The code: every package has a row, and imports only what it lists.
	seen := map[string]bool{}
	for _, p := range goList(t, root) {
		name, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok {
			t.Errorf("package %s: not under %s; give it a row in docs/architecture.md", p.ImportPath, module)
			continue
		}
		seen[name] = true
		r, ok := rules[name]
		if !ok {
			t.Errorf("package %s has no row in docs/architecture.md's package map: add one (its one job, its layer, what it may import)", name)
			continue
		}
		for _, imp := range local(p.Imports) {
			if !slices.Contains(r.imports, imp) {
				t.Errorf("%s imports %s, which docs/architecture.md (line %d) does not allow; %s", name, imp, r.docLineNum, advice(rules, name, imp))
			}
		}
		for _, imp := range local(append(p.TestImports, p.XTestImports...)) {
			if imp != name && !slices.Contains(r.imports, imp) && !slices.Contains(r.testsAlso, imp) {
				t.Errorf("tests of %s import %s, which docs/architecture.md (line %d) does not allow", name, imp, r.docLineNum)
			}
		}
	}
	for pkg, r := range rules {
		if !seen[pkg] {
			t.Errorf("docs/architecture.md:%d: %s is not a package of this module", r.docLineNum, pkg)
		}
	}
}

// advice says whether the import could be allowed at all.
func advice(rules map[string]rule, pkg, imp string) string {
	if ir, ok := rules[imp]; ok && ir.layer >= rules[pkg].layer {
		return fmt.Sprintf("%s is of layer %d, not below %s's %d: the dependency points the wrong way", imp, ir.layer, pkg, rules[pkg].layer)
	}
	return "if it belongs there, add it to the row (and say why in the commit)"
}

// forbidden are imports a package must not have even where the layers
// would allow them, with the reason: the package map says what a package
// may use, this what its job excludes.
var forbidden = map[string]map[string]string{
	// pgwire speaks the protocol: what a statement means, what the
	// policies decide and what is audited are decided in sqlrewrite,
	// policy and audit; pgwire hands SQL text over, relays the answer and
	// reports the outcome (docs/architecture.md, "Package map and import rules").
	"pgwire": {
		"policy":                              "decisions and audit decisions come with the rewrite (sqlrewrite.Result.Audit)",
		"policystate":                         "the policies in force come through sqlrewrite.PolicySource",
		"ranger":                              "Ranger's documents are the policy sources' business",
		"ranger/rangeradmin":                  "Ranger's documents are the policy sources' business",
		"rangerexpr":                          "expressions are evaluated in policy and sqlrewrite",
		"authoring":                           "authoring statements are handed to a pgwire.Author",
		"github.com/pganalyze/pg_query_go/v6": "pgwire never parses or inspects a syntax tree",
	},
}

func TestForbiddenImports(t *testing.T) {
	for _, p := range goList(t, testrepo.Root(t)) {
		name, _ := strings.CutPrefix(p.ImportPath, module+"/")
		rules, ok := forbidden[name]
		if !ok {
			continue
		}
		for _, imp := range p.Imports {
			rel, _ := strings.CutPrefix(imp, module+"/")
			if why, bad := rules[rel]; bad {
				t.Errorf("%s imports %s: %s", name, rel, why)
			}
		}
	}
}
