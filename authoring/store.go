package authoring

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/ranger/rangeradmin"
)

// Store is where policies and tags are written: Ranger Admin
// (policy.source = "ranger") or the policy and tag files (policy.source =
// "file"). Reads are fresh — never the bundle in force — because a write
// changes what is there now. Each method records what it sent (sentLog)
// for the audit record.
type Store interface {
	// Policies reads the service's policies as they are now.
	Policies(ctx context.Context) (*ranger.ServicePolicies, error)
	Grant(ctx context.Context, req *ranger.GrantRevokeRequest) error
	Revoke(ctx context.Context, req *ranger.GrantRevokeRequest) error
	Create(ctx context.Context, p *ranger.RangerPolicy) error
	Update(ctx context.Context, name string, p *ranger.RangerPolicy) error
	Delete(ctx context.Context, name string) error
	// Tags reads the service's tags as they are now.
	Tags(ctx context.Context) (*ranger.ServiceTags, error)
	// SetTags makes tags the whole tag list of the resource (empty: no tags).
	SetTags(ctx context.Context, elements map[string]ranger.RangerPolicyResource, tags []ranger.RangerTag) error
}

// sentLog collects what a statement's writes sent, for its audit record.
type sentLog struct {
	mu      sync.Mutex
	entries []string
}

type sentKey struct{}

func withSentLog(ctx context.Context, l *sentLog) context.Context {
	return context.WithValue(ctx, sentKey{}, l)
}

func logSent(ctx context.Context, format string, args ...any) {
	if l, ok := ctx.Value(sentKey{}).(*sentLog); ok {
		l.mu.Lock()
		l.entries = append(l.entries, fmt.Sprintf(format, args...))
		l.mu.Unlock()
	}
}

func (l *sentLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.entries...)
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// RangerStore writes through Ranger Admin's REST API with pgranger's
// account (policy.ranger): the secure grant and revoke endpoints, the
// public v2 policy API and the tag import. Reads are plugin downloads
// that claim no version.
type RangerStore struct {
	Client *rangeradmin.AdminClient
}

func (s RangerStore) observe(ctx context.Context) context.Context {
	return rangeradmin.WithObserver(ctx, func(method, path string, body []byte, status int) {
		if body == nil {
			logSent(ctx, "%s %s → %d", method, path, status)
			return
		}
		logSent(ctx, "%s %s %s → %d", method, path, body, status)
	})
}

// Policies downloads the service's policies.
func (s RangerStore) Policies(ctx context.Context) (*ranger.ServicePolicies, error) {
	doc, err := s.Client.Download(ctx, rangeradmin.DocPolicies)
	if err != nil {
		return nil, err
	}
	return doc.(*ranger.ServicePolicies), nil
}

// Grant posts to the secure grant endpoint.
func (s RangerStore) Grant(ctx context.Context, req *ranger.GrantRevokeRequest) error {
	return s.Client.Grant(s.observe(ctx), req)
}

// Revoke posts to the secure revoke endpoint.
func (s RangerStore) Revoke(ctx context.Context, req *ranger.GrantRevokeRequest) error {
	return s.Client.Revoke(s.observe(ctx), req)
}

// Create posts the policy to the public API.
func (s RangerStore) Create(ctx context.Context, p *ranger.RangerPolicy) error {
	_, err := s.Client.CreatePolicy(s.observe(ctx), p)
	return err
}

// Update puts the policy by name.
func (s RangerStore) Update(ctx context.Context, name string, p *ranger.RangerPolicy) error {
	_, err := s.Client.UpdatePolicy(s.observe(ctx), name, p)
	return err
}

// Delete deletes the policy by name.
func (s RangerStore) Delete(ctx context.Context, name string) error {
	return s.Client.DeletePolicy(s.observe(ctx), name)
}

// Tags downloads the service's tags.
func (s RangerStore) Tags(ctx context.Context) (*ranger.ServiceTags, error) {
	doc, err := s.Client.Download(ctx, rangeradmin.DocTags)
	if err != nil {
		return nil, err
	}
	return doc.(*ranger.ServiceTags), nil
}

// SetTags imports the resource with its whole tag list (add_or_update).
func (s RangerStore) SetTags(ctx context.Context, elements map[string]ranger.RangerPolicyResource, tags []ranger.RangerTag) error {
	return s.Client.ImportTags(s.observe(ctx), ranger.TagPayload(s.Client.ServiceName(), elements, tags))
}

// FileStore writes the policy and tag files of policy.source = "file",
// applying Ranger Admin's semantics itself (package ranger: the grant
// merge, grant-<millis>, the silent revoke, 3006 and 3010, the tag list
// replacing a resource's tags) and bumping the document's version.
type FileStore struct {
	Files *ranger.FileStore
}

// Policies reads the policy file.
func (s FileStore) Policies(context.Context) (*ranger.ServicePolicies, error) {
	return s.Files.Policies()
}

func (s FileStore) update(ctx context.Context, what string, change func(sp *ranger.ServicePolicies, now time.Time) (bool, error)) error {
	changed := false
	sp, err := s.Files.UpdatePolicies(func(sp *ranger.ServicePolicies, now time.Time) (bool, error) {
		c, err := change(sp, now)
		changed = c
		return c, err
	})
	path := s.Files.Paths().Policies
	switch {
	case err != nil:
		logSent(ctx, "file %s: %s → %v", path, what, err)
	case changed:
		logSent(ctx, "file %s: %s → policyVersion %d", path, what, sp.PolicyVersion)
	default:
		logSent(ctx, "file %s: %s → unchanged", path, what)
	}
	return err
}

// Grant applies Ranger's grant to the file.
func (s FileStore) Grant(ctx context.Context, req *ranger.GrantRevokeRequest) error {
	return s.update(ctx, "grant "+compactJSON(req), func(sp *ranger.ServicePolicies, now time.Time) (bool, error) {
		_, _, err := sp.ApplyGrant(req, now)
		return err == nil, err
	})
}

// Revoke applies Ranger's revoke to the file (no exact match: unchanged).
func (s FileStore) Revoke(ctx context.Context, req *ranger.GrantRevokeRequest) error {
	return s.update(ctx, "revoke "+compactJSON(req), func(sp *ranger.ServicePolicies, now time.Time) (bool, error) {
		_, changed, err := sp.ApplyRevoke(req, now)
		return changed, err
	})
}

// Create adds the policy to the file.
func (s FileStore) Create(ctx context.Context, p *ranger.RangerPolicy) error {
	return s.update(ctx, "create "+compactJSON(p), func(sp *ranger.ServicePolicies, now time.Time) (bool, error) {
		_, err := sp.CreatePolicy(*p, now)
		return err == nil, err
	})
}

// Update replaces the policy named name in the file.
func (s FileStore) Update(ctx context.Context, name string, p *ranger.RangerPolicy) error {
	return s.update(ctx, fmt.Sprintf("update %q %s", name, compactJSON(p)), func(sp *ranger.ServicePolicies, now time.Time) (bool, error) {
		_, err := sp.UpdatePolicy(name, *p, p.UpdatedBy, now)
		return err == nil, err
	})
}

// Delete removes the policy named name from the file.
func (s FileStore) Delete(ctx context.Context, name string) error {
	return s.update(ctx, fmt.Sprintf("delete %q", name), func(sp *ranger.ServicePolicies, _ time.Time) (bool, error) {
		err := sp.DeletePolicy(name)
		return err == nil, err
	})
}

// Tags reads the tag file.
func (s FileStore) Tags(context.Context) (*ranger.ServiceTags, error) {
	return s.Files.Tags()
}

// SetTags replaces the resource's tags in the tag file.
func (s FileStore) SetTags(ctx context.Context, elements map[string]ranger.RangerPolicyResource, tags []ranger.RangerTag) error {
	path := s.Files.Paths().Tags
	var serviceName string
	if sp, err := s.Files.Policies(); err == nil {
		serviceName = sp.ServiceName
	}
	what := fmt.Sprintf("tags %s = %v", compactJSON(elements), ranger.TagTypes(tags))
	st, err := s.Files.UpdateTags(func(st *ranger.ServiceTags, now time.Time) (bool, error) {
		return st.SetResourceTags(serviceName, elements, tags, now), nil
	})
	if err != nil {
		logSent(ctx, "file %s: %s → %v", path, what, err)
		return err
	}
	logSent(ctx, "file %s: %s → tagVersion %d", path, what, st.TagVersion)
	return nil
}
