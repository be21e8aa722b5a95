// Package policysync keeps a directory of policies, one JSON file per
// policy, in step with a service's policies in Ranger Admin or in the
// policy file: `pgranger policy export | diff | sync` (docs/authoring.md,
// "Policies as code").
//
// Policies are keyed by name within the service. A policy's file holds it
// without the fields the server manages (id, guid, version, times, who
// created and updated it, resourceSignature, serviceType), keys sorted,
// two-space indentation, empty values left out — so the file is what a
// reviewer reads and the same policy always gives the same bytes. Two
// policies compare equal when their files would be equal, ignoring the
// label managed-by:pgranger, which sync puts on what it writes and
// --prune uses to delete only what sync created.
package policysync

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/pgranger/pgranger/lint"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/ranger/rangeradmin"
)

// ManagedLabel marks the policies sync wrote.
const ManagedLabel = "managed-by:pgranger"

// serverFields are the fields Ranger Admin manages itself.
var serverFields = []string{"id", "guid", "version", "createTime", "updateTime", "createdBy", "updatedBy", "resourceSignature", "serviceType"}

// Source is where a service's policies are.
type Source interface {
	// Describe names the source for messages.
	Describe() string
	// List reads every policy of the service, and the service-def when the
	// source has one (nil: the stock hive def).
	List(ctx context.Context) ([]ranger.RangerPolicy, *ranger.RangerServiceDef, error)
	Create(ctx context.Context, p *ranger.RangerPolicy) error
	Update(ctx context.Context, name string, p *ranger.RangerPolicy) error
	Delete(ctx context.Context, name string) error
}

// Normalized is a policy as its file holds it, as a JSON document.
func Normalized(p ranger.RangerPolicy) ([]byte, error) {
	m, err := normalizedMap(p)
	if err != nil {
		return nil, err
	}
	return ranger.MarshalDocument(m)
}

func normalizedMap(p ranger.RangerPolicy) (map[string]any, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	for _, k := range serverFields {
		delete(m, k)
	}
	return m, nil
}

// comparable is the policy's file without the managed label.
func comparable(p ranger.RangerPolicy) (map[string]any, error) {
	p.PolicyLabels = withoutLabel(p.PolicyLabels, ManagedLabel)
	m, err := normalizedMap(p)
	if err != nil {
		return nil, err
	}
	// Round trip through the document form, so absent and empty agree.
	b, err := ranger.MarshalDocument(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

func withoutLabel(labels []string, label string) []string {
	var out []string
	for _, l := range labels {
		if l != label {
			out = append(out, l)
		}
	}
	return out
}

// FileName is the file a policy is exported to: its name in lower case,
// runs of other characters as one "-".
func FileName(name string) string {
	slug := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if slug == "" {
		slug = "policy"
	}
	return slug + ".json"
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// Export writes one file per policy of src into dir and returns how many.
// Two policies whose names give the same file name get -2, -3, ….
func Export(ctx context.Context, src Source, dir string) (int, error) {
	ps, _, err := src.List(ctx)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	used := map[string]bool{}
	for _, p := range ps {
		name := FileName(p.Name)
		for i := 2; used[name]; i++ {
			name = strings.TrimSuffix(FileName(p.Name), ".json") + fmt.Sprintf("-%d.json", i)
		}
		used[name] = true
		doc, err := Normalized(p)
		if err != nil {
			return 0, fmt.Errorf("policy %q: %w", p.Name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), doc, 0o644); err != nil {
			return 0, err
		}
	}
	return len(ps), nil
}

// ReadDir reads the policies of dir (every *.json file, one policy each).
func ReadDir(dir string) ([]ranger.RangerPolicy, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, err
		}
	}
	sort.Strings(files)
	var out []ranger.RangerPolicy
	byName := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var p ranger.RangerPolicy
		if err := json.Unmarshal(data, &p); err != nil {
			return nil, fmt.Errorf("%s: not a Ranger policy: %w", f, err)
		}
		if strings.TrimSpace(p.Name) == "" {
			return nil, fmt.Errorf("%s: the policy has no name", f)
		}
		if other, dup := byName[p.Name]; dup {
			return nil, fmt.Errorf("%s and %s both hold policy %q", other, f, p.Name)
		}
		byName[p.Name] = f
		out = append(out, p)
	}
	return out, nil
}

// Action is what sync does to one policy.
type Action string

// The actions of a plan.
const (
	Create    Action = "create"
	Update    Action = "update"
	Unchanged Action = "unchanged"
	Drift     Action = "drift" // in the source, not in the directory
)

// Step is one policy's entry in a plan.
type Step struct {
	Action  Action
	Name    string
	Changed []string            // the top-level fields an update changes
	Want    ranger.RangerPolicy // the directory's policy (Create, Update)
	Managed bool                // Drift: the source's policy carries ManagedLabel
}

// Plan compares the directory's policies with the source's.
type Plan struct {
	Steps []Step
	Def   *ranger.RangerServiceDef // the source's service-def (nil: stock)
}

// InStep reports whether nothing is to be created, updated, or drifted.
func (p *Plan) InStep() bool {
	for _, s := range p.Steps {
		if s.Action != Unchanged {
			return false
		}
	}
	return true
}

// Count returns how many steps have action a.
func (p *Plan) Count(a Action) int {
	n := 0
	for _, s := range p.Steps {
		if s.Action == a {
			n++
		}
	}
	return n
}

// Compare builds the plan of dir's policies against src's, in name order.
func Compare(ctx context.Context, src Source, want []ranger.RangerPolicy, service string) (*Plan, error) {
	have, def, err := src.List(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]ranger.RangerPolicy{}
	for _, p := range have {
		byName[p.Name] = p
	}
	plan := &Plan{Def: def}
	seen := map[string]bool{}
	for _, w := range want {
		if w.Service != "" && w.Service != service {
			return nil, fmt.Errorf("policy %q is for service %q, not %q", w.Name, w.Service, service)
		}
		seen[w.Name] = true
		h, ok := byName[w.Name]
		if !ok {
			plan.Steps = append(plan.Steps, Step{Action: Create, Name: w.Name, Want: w})
			continue
		}
		changed, err := changedFields(h, w)
		if err != nil {
			return nil, fmt.Errorf("policy %q: %w", w.Name, err)
		}
		if len(changed) == 0 {
			plan.Steps = append(plan.Steps, Step{Action: Unchanged, Name: w.Name})
		} else {
			plan.Steps = append(plan.Steps, Step{Action: Update, Name: w.Name, Changed: changed, Want: w})
		}
	}
	for _, h := range have {
		if !seen[h.Name] {
			managed := false
			for _, l := range h.PolicyLabels {
				managed = managed || l == ManagedLabel
			}
			plan.Steps = append(plan.Steps, Step{Action: Drift, Name: h.Name, Managed: managed})
		}
	}
	sort.SliceStable(plan.Steps, func(i, j int) bool { return plan.Steps[i].Name < plan.Steps[j].Name })
	return plan, nil
}

func changedFields(have, want ranger.RangerPolicy) ([]string, error) {
	if want.Service == "" {
		want.Service = have.Service
	}
	h, err := comparable(have)
	if err != nil {
		return nil, err
	}
	w, err := comparable(want)
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for k := range h {
		keys[k] = true
	}
	for k := range w {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		a, _ := json.Marshal(h[k])
		b, _ := json.Marshal(w[k])
		if string(a) != string(b) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Print writes the plan, one line per policy, and a summary.
func (p *Plan) Print(w io.Writer, prune bool) {
	for _, s := range p.Steps {
		switch s.Action {
		case Update:
			fmt.Fprintf(w, "%-9s %s: %s\n", s.Action, s.Name, strings.Join(s.Changed, ", "))
		case Drift:
			note := ""
			if s.Managed && prune {
				note = " (managed by pgranger: --prune deletes it)"
			}
			fmt.Fprintf(w, "%-9s %s%s\n", s.Action, s.Name, note)
		default:
			fmt.Fprintf(w, "%-9s %s\n", s.Action, s.Name)
		}
	}
	fmt.Fprintf(w, "%d to create, %d to update, %d unchanged, %d drift\n", p.Count(Create), p.Count(Update), p.Count(Unchanged), p.Count(Drift))
}

// Lint returns the lint errors of the directory's policies (warnings do
// not stop a sync).
func Lint(want []ranger.RangerPolicy, service string, def *ranger.RangerServiceDef, at time.Time) []lint.Finding {
	var errs []lint.Finding
	for _, f := range lint.Policies(&ranger.ServicePolicies{ServiceName: service, Policies: want, ServiceDef: def}, at) {
		if f.Severity() == lint.Error {
			errs = append(errs, f)
		}
	}
	return errs
}

// Apply carries out the plan's creates and updates (and, with prune, the
// deletes of drifted policies carrying ManagedLabel); what it wrote gets
// ManagedLabel. It reports each write to out and stops at the first error.
func Apply(ctx context.Context, src Source, plan *Plan, service string, prune bool, out io.Writer) (int, error) {
	written := 0
	for _, s := range plan.Steps {
		var err error
		switch s.Action {
		case Create, Update:
			p := s.Want
			p.Service = service
			p.PolicyLabels = append(withoutLabel(p.PolicyLabels, ManagedLabel), ManagedLabel)
			p.ID, p.GUID, p.Version = 0, "", 0
			if s.Action == Create {
				err = src.Create(ctx, &p)
			} else {
				err = src.Update(ctx, s.Name, &p)
			}
		case Drift:
			if !prune || !s.Managed {
				continue
			}
			err = src.Delete(ctx, s.Name)
		default:
			continue
		}
		verb := map[Action]string{Create: "created", Update: "updated", Drift: "deleted"}[s.Action]
		if err != nil {
			return written, fmt.Errorf("policy %q: %w", s.Name, err)
		}
		written++
		fmt.Fprintf(out, "%-9s %s\n", verb, s.Name)
	}
	return written, nil
}

// RangerSource is a service in Ranger Admin, through the public API (the
// list is paged).
type RangerSource struct {
	Client *rangeradmin.AdminClient
}

// Describe names the service and admin.
func (r RangerSource) Describe() string {
	return fmt.Sprintf("service %q in Ranger Admin %s", r.Client.ServiceName(), strings.Join(r.Client.URLs(), ","))
}

// List pages through the service's policies.
func (r RangerSource) List(ctx context.Context) ([]ranger.RangerPolicy, *ranger.RangerServiceDef, error) {
	ps, err := r.Client.ListPolicies(ctx)
	return withService(ps, r.Client.ServiceName()), nil, err
}

// withService names the service in policies that do not (a hand-written
// policy file; Ranger Admin always does).
func withService(ps []ranger.RangerPolicy, service string) []ranger.RangerPolicy {
	for i := range ps {
		if ps[i].Service == "" {
			ps[i].Service = service
		}
	}
	return ps
}

// Create creates p.
func (r RangerSource) Create(ctx context.Context, p *ranger.RangerPolicy) error {
	_, err := r.Client.CreatePolicy(ctx, p)
	return err
}

// Update replaces the policy named name.
func (r RangerSource) Update(ctx context.Context, name string, p *ranger.RangerPolicy) error {
	_, err := r.Client.UpdatePolicy(ctx, name, p)
	return err
}

// Delete deletes the policy named name.
func (r RangerSource) Delete(ctx context.Context, name string) error {
	return r.Client.DeletePolicy(ctx, name)
}

// FileSource is the policy file of policy.source = "file".
type FileSource struct {
	Files *ranger.FileStore
}

// Describe names the file.
func (f FileSource) Describe() string { return "policy file " + f.Files.Paths().Policies }

// List reads the file.
func (f FileSource) List(context.Context) ([]ranger.RangerPolicy, *ranger.RangerServiceDef, error) {
	sp, err := f.Files.Policies()
	if err != nil {
		return nil, nil, err
	}
	return withService(sp.Policies, sp.ServiceName), sp.ServiceDef, nil
}

func (f FileSource) update(change func(sp *ranger.ServicePolicies, now time.Time) error) error {
	_, err := f.Files.UpdatePolicies(func(sp *ranger.ServicePolicies, now time.Time) (bool, error) {
		err := change(sp, now)
		return err == nil, err
	})
	return err
}

// Create adds p to the file.
func (f FileSource) Create(_ context.Context, p *ranger.RangerPolicy) error {
	return f.update(func(sp *ranger.ServicePolicies, now time.Time) error {
		_, err := sp.CreatePolicy(*p, now)
		return err
	})
}

// Update replaces the policy named name in the file.
func (f FileSource) Update(_ context.Context, name string, p *ranger.RangerPolicy) error {
	return f.update(func(sp *ranger.ServicePolicies, now time.Time) error {
		_, err := sp.UpdatePolicy(name, *p, "pgranger policy sync", now)
		return err
	})
}

// Delete removes the policy named name from the file.
func (f FileSource) Delete(_ context.Context, name string) error {
	return f.update(func(sp *ranger.ServicePolicies, _ time.Time) error { return sp.DeletePolicy(name) })
}
