package policy_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pgranger/pgranger/policy/policytest"
)

// conformanceDir finds ../shared/ranger/conformance relative to the
// repository root (the directory holding go.mod). The fixtures are Apache
// Ranger's own test data and are not part of this repository.
func conformanceDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "ranger", "conformance")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

func TestRangerConformance(t *testing.T) {
	dir := conformanceDir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		t.Skipf("Ranger conformance fixtures not found in %s; they are Apache Ranger's test data and live outside this repository", dir)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			suite, err := policytest.LoadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rep := suite.Run()
			t.Log(rep.String())
			for _, r := range rep.Results {
				switch r.Status {
				case policytest.Failed:
					t.Errorf("[%s] %s\n  want %s\n  got  %s", r.Kind, r.Case, r.Want, r.Got)
				case policytest.Different:
					t.Logf("known difference [%s] %s: %s (want %s, got %s)", r.Kind, r.Case, r.Reason, r.Want, r.Got)
				}
			}
		})
	}
}
