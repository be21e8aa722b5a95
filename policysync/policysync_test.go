package policysync

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/ranger/rangeradmin"
	"github.com/pgranger/pgranger/ranger/rangertest"
)

const doc = `{"serviceName":"hive","policyVersion":4,"policies":[
 {"id":1,"guid":"g1","version":3,"createTime":1700000000000,"createdBy":"admin","name":"sales all","isEnabled":true,
  "policyLabels":["owner:sales"],
  "resources":{"database":{"values":["sales"]},"table":{"values":["*"]},"column":{"values":["*"]}},
  "policyItems":[{"groups":["analysts"],"accesses":[{"type":"select","isAllowed":true}]}]},
 {"id":2,"name":"orders ssn","isEnabled":true,"policyType":1,"policyLabels":["owner:sales"],
  "resources":{"database":{"values":["sales"]},"table":{"values":["orders"]},"column":{"values":["ssn"]}},
  "dataMaskPolicyItems":[{"groups":["public"],"accesses":[{"type":"select","isAllowed":true}],"dataMaskInfo":{"dataMaskType":"MASK_SHOW_LAST_4"}}]}
]}`

type source struct {
	Source
	writes func() int
}

func fileSource(t *testing.T) source {
	path := filepath.Join(t.TempDir(), "hive.json")
	os.WriteFile(path, []byte(doc), 0o644)
	fs := ranger.NewFileStore(ranger.FilePaths{Policies: path})
	return source{FileSource{Files: fs}, func() int {
		sp, _ := fs.Policies()
		return int(sp.PolicyVersion - 4)
	}}
}

func rangerSource(t *testing.T) source {
	srv, err := rangertest.New("hive", "admin", "pw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	srv.AddAccount("admin", "pw", true)
	srv.SetDocument(rangeradmin.DocPolicies, []byte(doc))
	srv.SetUsers(map[string][]string{"bob": {"analysts"}})
	c, err := rangeradmin.NewAdminClient(rangeradmin.AdminClientConfig{URLs: []string{srv.URL()}, User: "admin",
		Password: func() (string, error) { return "pw", nil }, ServiceName: "hive", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return source{RangerSource{Client: c}, srv.Writes}
}

func bothSources(t *testing.T, f func(t *testing.T, s source)) {
	t.Run("file", func(t *testing.T) { f(t, fileSource(t)) })
	t.Run("ranger", func(t *testing.T) { f(t, rangerSource(t)) })
}

func plan(t *testing.T, s source, dir string) (*Plan, string) {
	t.Helper()
	want, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compare(context.Background(), s, want, "hive")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	p.Print(&b, true)
	return p, b.String()
}

// export → edit → diff (not in step) → sync → diff (in step) → sync
// writes nothing; against the policy file and Ranger Admin alike.
func TestExportDiffSync(t *testing.T) {
	bothSources(t, func(t *testing.T, s source) {
		ctx := context.Background()
		dir := t.TempDir()
		if n, err := Export(ctx, s, dir); err != nil || n != 2 {
			t.Fatalf("export: %d %v", n, err)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "sales-all.json"))
		want := `{
  "isAuditEnabled": true,
  "isDenyAllElse": false,
  "isEnabled": true,
  "name": "sales all",
  "policyItems": [
    {
      "accesses": [
        {
          "isAllowed": true,
          "type": "select"
        }
      ],
      "delegateAdmin": false,
      "groups": [
        "analysts"
      ]
    }
  ],
  "policyLabels": [
    "owner:sales"
  ],
  "policyPriority": 0,
  "policyType": 0,
  "resources": {
    "column": {
      "isExcludes": false,
      "isRecursive": false,
      "values": [
        "*"
      ]
    },
    "database": {
      "isExcludes": false,
      "isRecursive": false,
      "values": [
        "sales"
      ]
    },
    "table": {
      "isExcludes": false,
      "isRecursive": false,
      "values": [
        "*"
      ]
    }
  },
  "service": "hive"
}
`
		if string(got) != want {
			t.Errorf("exported file:\n%s", got)
		}
		if p, out := plan(t, s, dir); !p.InStep() || out != "unchanged orders ssn\nunchanged sales all\n0 to create, 0 to update, 2 unchanged, 0 drift\n" {
			t.Errorf("right after export:\n%s", out)
		}
		// Edit: a mask changes, a policy is added.
		ssn, _ := os.ReadFile(filepath.Join(dir, "orders-ssn.json"))
		os.WriteFile(filepath.Join(dir, "orders-ssn.json"), bytes.Replace(ssn, []byte("MASK_SHOW_LAST_4"), []byte("MASK_HASH"), 1), 0o644)
		os.WriteFile(filepath.Join(dir, "new.json"), []byte(`{"name":"bob orders","resources":{"database":{"values":["sales"]},"table":{"values":["orders"]},"column":{"values":["id"]}},
		  "policyItems":[{"users":["bob"],"accesses":[{"type":"select"}]}]}`), 0o644)
		p, out := plan(t, s, dir)
		if p.InStep() || out != "create    bob orders\nupdate    orders ssn: dataMaskPolicyItems\nunchanged sales all\n1 to create, 1 to update, 1 unchanged, 0 drift\n" {
			t.Errorf("after the edit:\n%s", out)
		}
		before := s.writes()
		var log bytes.Buffer
		if n, err := Apply(ctx, s, p, "hive", false, &log); err != nil || n != 2 || log.String() != "created   bob orders\nupdated   orders ssn\n" {
			t.Fatalf("sync: %d %v\n%s", n, err, log.String())
		}
		if s.writes()-before != 2 {
			t.Errorf("%d writes", s.writes()-before)
		}
		if p, out := plan(t, s, dir); !p.InStep() {
			t.Errorf("after sync:\n%s", out)
		}
		// A second sync writes nothing.
		p, _ = plan(t, s, dir)
		before = s.writes()
		if n, err := Apply(ctx, s, p, "hive", true, &log); n != 0 || err != nil || s.writes() != before {
			t.Errorf("second sync: %d %v", n, err)
		}
		// What sync wrote carries the label; --prune deletes only that.
		ps, _, _ := s.List(ctx)
		for _, q := range ps {
			labelled := strings.Contains(strings.Join(q.PolicyLabels, ","), ManagedLabel)
			if labelled != (q.Name != "sales all") {
				t.Errorf("%s: labels %v", q.Name, q.PolicyLabels)
			}
		}
		os.Remove(filepath.Join(dir, "new.json"))
		os.Remove(filepath.Join(dir, "sales-all.json"))
		p, out = plan(t, s, dir)
		if out != "drift     bob orders (managed by pgranger: --prune deletes it)\nunchanged orders ssn\ndrift     sales all\n0 to create, 0 to update, 1 unchanged, 2 drift\n" {
			t.Errorf("drift:\n%s", out)
		}
		log.Reset()
		if n, err := Apply(ctx, s, p, "hive", true, &log); err != nil || n != 1 || log.String() != "deleted   bob orders\n" {
			t.Errorf("prune: %d %v %s", n, err, log.String())
		}
		ps, _, _ = s.List(ctx)
		if len(ps) != 2 {
			t.Errorf("after prune: %d policies (sales all, not managed, stays)", len(ps))
		}
	})
}

func TestLintErrorsStopSync(t *testing.T) {
	want := []ranger.RangerPolicy{{Name: "public everything", IsEnabled: true,
		Resources:   map[string]ranger.RangerPolicyResource{"database": {Values: []string{"*"}}, "table": {Values: []string{"*"}}, "column": {Values: []string{"*"}}},
		PolicyItems: []ranger.RangerPolicyItem{{Groups: []string{"public"}, Accesses: []ranger.RangerPolicyItemAccess{{Type: "select", IsAllowed: true}}}}}}
	errs := Lint(want, "hive", nil, time.Now())
	if len(errs) != 1 || !strings.Contains(errs[0].String(), "grants group public select on wildcard resource") {
		t.Errorf("lint: %v", errs)
	}
}

func TestReadDirRefusesDuplicatesAndNamelessPolicies(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.json"), []byte(`{"name":"p"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "b.json"), []byte(`{"name":"p"}`), 0o644)
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), `both hold policy "p"`) {
		t.Errorf("duplicates: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "b.json"), []byte(`{"description":"x"}`), 0o644)
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "the policy has no name") {
		t.Errorf("nameless: %v", err)
	}
}
