package pgwire

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgranger/pgranger/audit"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
)

// reloadingPolicies serves first to the first Snapshot call and then to
// every later one: the policies reload right after the first statement
// was decided.
type reloadingPolicies struct {
	calls       atomic.Int64
	first, then policy.Snapshot
}

func (p *reloadingPolicies) Snapshot() policy.Snapshot {
	if p.calls.Add(1) == 1 {
		return p.first
	}
	return p.then
}

type auditBuffer struct{ bytes.Buffer }

func (*auditBuffer) Close() error { return nil }

// A denial is audited as the policies that denied it say, with their
// version, even when other policies are in force by the time its record
// is written: here the reload turns auditing off (audit-none) and bumps
// the version, and the record still comes, with version 1.
func TestDenialAuditedUnderThePoliciesThatDenied(t *testing.T) {
	engine := func(version int64, mode string) *policy.Engine {
		sp := &ranger.ServicePolicies{ServiceName: "hive", PolicyVersion: version, AuditMode: mode}
		eng, err := policy.NewEngine(&ranger.Bundle{Policies: sp}, policy.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return eng
	}
	pols := &reloadingPolicies{
		first: policy.Snapshot{Engine: engine(1, ranger.AuditModeDefault), Generation: 1},
		then:  policy.Snapshot{Engine: engine(2, ranger.AuditModeNone), Generation: 2},
	}
	out := &auditBuffer{}
	log := audit.New(out, 16)
	h := newRelayHarnessWith(t, func(o *Options) { o.Policies, o.Audit = pols, log })
	h.send(&pgproto3.Query{String: "SELECT id FROM secret"})
	wantMessages(t, h.until("Z:I"), "E:ERROR:42501", "Z:I")
	if n := pols.calls.Load(); n < 1 {
		t.Fatalf("the policies were never asked")
	}
	h.terminate()
	log.Close()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 || lines[0] == "" {
		t.Fatalf("audit records: %q, want the denial's", out.String())
	}
	var rec struct {
		Result        int    `json:"result"`
		Action        string `json:"action"`
		Resource      string `json:"resource"`
		PolicyVersion *int64 `json:"policy_version"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Result != 0 || rec.Action != "SELECT" || rec.PolicyVersion == nil || *rec.PolicyVersion != 1 {
		t.Errorf("record %s: want the denial of a SELECT under policy version 1", lines[0])
	}
}
