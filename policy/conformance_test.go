package policy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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

// conformanceFiles lists the test files of ../shared/ranger/conformance
// and its round2/ folder (files not named test_* there are companion
// documents, such as tag files). Missing fixtures fail the test: a
// conformance run that checks nothing must not pass. Set
// PGRANGER_NO_RANGER_FIXTURES=1 to skip instead, where the folder is
// knowingly absent.
func conformanceFiles(t *testing.T) []string {
	t.Helper()
	dir := conformanceDir(t)
	top, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	round2, _ := filepath.Glob(filepath.Join(dir, "round2", "test_*.json"))
	if len(top) == 0 || len(round2) == 0 {
		msg := "Ranger conformance fixtures not found in " + dir + " (or its round2/): they are Apache Ranger's test data and live beside the repository, in ../shared"
		if os.Getenv("PGRANGER_NO_RANGER_FIXTURES") == "1" {
			t.Skip("SKIPPED: " + msg)
		}
		t.Fatal(msg + "; set PGRANGER_NO_RANGER_FIXTURES=1 to skip")
	}
	return append(top, round2...)
}

func runSuite(t *testing.T, f string) policytest.Report {
	t.Helper()
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
	return rep
}

func TestRangerConformance(t *testing.T) {
	for _, f := range conformanceFiles(t) {
		name := filepath.Base(f)
		if strings.Contains(f, string(filepath.Separator)+"round2"+string(filepath.Separator)) {
			name = "round2/" + name
		}
		t.Run(name, func(t *testing.T) {
			if rep := runSuite(t, f); rep.Passed+rep.Known == 0 {
				t.Errorf("no cases ran")
			}
		})
	}
}

// TestRangerPolicyEngineDir runs every hive-service test file of a
// checkout of apache/ranger's agents-common/src/test/resources/policyengine
// named by RANGER_POLICYENGINE_DIR: a development check of the whole
// folder, not part of the regular run (the folder is not in the
// repository or in ../shared).
func TestRangerPolicyEngineDir(t *testing.T) {
	dir := os.Getenv("RANGER_POLICYENGINE_DIR")
	if dir == "" {
		t.Skip("set RANGER_POLICYENGINE_DIR to apache/ranger's agents-common/src/test/resources/policyengine")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "test_policyengine_*.json"))
	ran := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			ServiceDef struct {
				Name string `json:"name"`
			} `json:"serviceDef"`
		}
		if json.Unmarshal(data, &head) != nil || head.ServiceDef.Name != "hive" {
			continue
		}
		ran++
		t.Run(filepath.Base(f), func(t *testing.T) { runSuite(t, f) })
	}
	if ran == 0 {
		t.Fatalf("no hive-service test files in %s", dir)
	}
}
