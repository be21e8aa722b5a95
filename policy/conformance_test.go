package policy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgranger/pgranger/internal/testrepo"
	"github.com/pgranger/pgranger/policy/policytest"
)

// conformanceFiles lists Apache Ranger's own policy-engine test files in
// ../shared/ranger/conformance and its round2/ folder (files not named
// test_* there are companion documents, such as tag files), read in
// place beside the repository (testrepo.Shared: absent, the suite is
// skipped, or fails with CI=true; a conformance run that checks nothing
// must not pass in CI).
func conformanceFiles(t *testing.T) []string {
	t.Helper()
	dir := testrepo.Shared(t, "ranger", "conformance")
	top, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	round2, _ := filepath.Glob(filepath.Join(dir, "round2", "test_*.json"))
	if len(top) == 0 || len(round2) == 0 {
		testrepo.MissingShared(t, filepath.Join(dir, "round2"))
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
