package rangertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/ranger/rangeradmin"
)

// The write side of the fake Ranger Admin (docs/authoring.md; in
// apache/ranger, ServiceREST.grantAccess/revokeAccess, PublicAPIsv2,
// TagREST.importServiceTags, RoleREST): what HiveServer2's GRANT and a
// policy-as-code tool send, with Ranger's checks and answers.
//
//   - POST /service/plugins/secure/services/grant|revoke/{svc}: the caller
//     may name another grantor only if it is an admin, a service admin or
//     listed in policy.grantrevoke.auth.users (else 403 "Invalid
//     grant/revoke request - contains grantor or userOwner
//     specification"); grantor and grantees must exist; the grantor needs
//     delegated admin covering every access on the resource (403 "User
//     doesn't have necessary permission to grant access"); the grant merges
//     into the exact-match policy or creates grant-<millis>; a revoke with
//     no exact match is a silent 200.
//   - the public v2 policy API: get and list (paged), search, create,
//     update and delete by name, 3006/3010 validation bodies, principals
//     that must exist, 403 for a writer without delegated admin, and no
//     version check on update.
//   - PUT /service/tags/importservicetags/ (admins only): add_or_update
//     replaces each resource's tag list.
//   - POST /service/public/v2/api/roles (admins only).
//
// Every change bumps the version of its document, which the download
// endpoints then serve. The delegated-admin evaluation here is the fake's
// own (wildcards, groups, public, "all"), not pgranger's policy engine, so
// the two check each other.

// writeRoute names the write endpoints for counting.
func isWritePath(p string) bool {
	for _, prefix := range []string{"/service/plugins/secure/services/", "/service/public/v2/api/", "/service/tags/importservicetags"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// SetGrantRevokeUsers sets the service's policy.grantrevoke.auth.users:
// accounts that may name another user as grantor (HiveServer2's principal).
func (s *Server) SetGrantRevokeUsers(users ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.grantRevokeUsers = append([]string(nil), users...)
}

// SetServiceAdmins sets the service's service.admin.users.
func (s *Server) SetServiceAdmins(users ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serviceAdmins = append([]string(nil), users...)
}

// SetUsers declares Ranger's users and their groups (the user store, whose
// version rises). Grantors, grantees and principals named in policies must
// be among them; "public" and the groups listed here exist.
func (s *Server) SetUsers(userGroups map[string][]string) error {
	_, err := s.Edit(rangeradmin.DocUserStore, func(m map[string]any) {
		ug := map[string]any{}
		for u, gs := range userGroups {
			list := make([]any, len(gs))
			for i, g := range gs {
				list[i] = g
			}
			ug[u] = list
		}
		m["userGroupMapping"] = ug
	})
	return err
}

// Writes counts the requests other than GET that reached a write endpoint
// (any outcome): zero means nothing was sent that could change Ranger.
func (s *Server) Writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

// WriteLog lists the write requests, "METHOD path status".
func (s *Server) WriteLog() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.writeLog...)
}

// Policies returns the policies Ranger holds now.
func (s *Server) Policies() (*ranger.ServicePolicies, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ranger.ParseServicePolicies(s.docLocked(rangeradmin.DocPolicies).body)
}

// Tags returns the tags Ranger holds now.
func (s *Server) Tags() (*ranger.ServiceTags, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ranger.ParseServiceTags(s.docLocked(rangeradmin.DocTags).body)
}

// handleWrite serves the write endpoints; false when path is none of them.
func (s *Server) handleWrite(w http.ResponseWriter, r *http.Request) bool {
	p := r.URL.Path
	if !isWritePath(p) {
		return false
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method != http.MethodGet {
		s.writes++
	}
	rec := &statusRecorder{ResponseWriter: w}
	defer func() {
		s.writeLog = append(s.writeLog, fmt.Sprintf("%s %s %d", r.Method, r.URL.RequestURI(), rec.status))
	}()
	w = rec
	user, password, hasAuth := r.BasicAuth()
	if want, ok := s.accounts[user]; !hasAuth || !ok || want != password {
		w.Header().Set("WWW-Authenticate", `Basic realm="Ranger Admin"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"statusCode":401,"msgDesc":"Authentication Failed"}`)
		return true
	}
	if f := s.allFault; f != nil {
		writeFault(w, *f)
		return true
	}
	switch {
	case strings.HasPrefix(p, "/service/plugins/secure/services/grant/"):
		s.grantRevoke(w, r, user, strings.TrimPrefix(p, "/service/plugins/secure/services/grant/"), body, true)
	case strings.HasPrefix(p, "/service/plugins/secure/services/revoke/"):
		s.grantRevoke(w, r, user, strings.TrimPrefix(p, "/service/plugins/secure/services/revoke/"), body, false)
	case strings.HasPrefix(p, "/service/tags/importservicetags"):
		s.importTags(w, r, user, body)
	case strings.HasPrefix(p, "/service/public/v2/api/roles"):
		s.createRole(w, r, user, body)
	default:
		s.publicAPI(w, r, user, strings.TrimPrefix(p, "/service/public/v2/api"), body)
	}
	return true
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// serviceLocked checks the service name of a request (404 when unknown).
func (s *Server) serviceLocked(w http.ResponseWriter, svc string) bool {
	svc, _ = url.PathUnescape(svc)
	if svc != s.service || s.gone {
		vxResponse(w, http.StatusNotFound, rangeradmin.ServiceNotFoundMarker+": ServiceName="+svc)
		return false
	}
	return true
}

func (s *Server) isAdminLocked(user string) bool {
	return s.admins[user] || userAllowed(s.serviceAdmins, user)
}

// policiesLocked parses the policy document (once per version: a test
// creating hundreds of policies should not parse each one hundreds of
// times). The caller may change the result only to store it.
func (s *Server) policiesLocked() (*ranger.ServicePolicies, error) {
	d := s.docLocked(rangeradmin.DocPolicies)
	if d.parsed == nil {
		sp, err := ranger.ParseServicePolicies(d.body)
		if err != nil {
			return nil, err
		}
		d.parsed = sp
	}
	// A copy of the list, so a refused write leaves the document as it was.
	sp := *d.parsed
	sp.Policies = append([]ranger.RangerPolicy(nil), d.parsed.Policies...)
	return &sp, nil
}

// storePoliciesLocked writes sp back with its version raised by one.
func (s *Server) storePoliciesLocked(sp *ranger.ServicePolicies, now time.Time) {
	sp.Bump(now)
	body, _ := json.Marshal(sp)
	s.docs[rangeradmin.DocPolicies] = &document{body: body, version: sp.PolicyVersion, parsed: sp}
}

// knownLocked reports whether Ranger has the user, group or role.
func (s *Server) knownLocked(kind, name string) bool {
	switch kind {
	case "role":
		if roles, err := ranger.ParseRoles(s.docLocked(rangeradmin.DocRoles).body); err == nil {
			for _, r := range roles.RangerRoles {
				if r.Name == name {
					return true
				}
			}
		}
		return false
	case "group":
		if name == "public" {
			return true
		}
	}
	us, err := ranger.ParseUserStore(s.docLocked(rangeradmin.DocUserStore).body)
	if err != nil {
		return false
	}
	if kind == "user" {
		_, ok := us.UserGroupMapping[name]
		_, attr := us.UserAttrMapping[name]
		return ok || attr
	}
	if _, ok := us.GroupAttrMapping[name]; ok {
		return true
	}
	for _, gs := range us.UserGroupMapping {
		for _, g := range gs {
			if g == name {
				return true
			}
		}
	}
	return false
}

func (s *Server) groupsOfLocked(user string) []string {
	us, err := ranger.ParseUserStore(s.docLocked(rangeradmin.DocUserStore).body)
	if err != nil {
		return nil
	}
	return us.UserGroupMapping[user]
}

var hiveResources = map[string]bool{"database": true, "table": true, "column": true, "udf": true, "url": true, "hiveservice": true, "global": true}

var hiveAccessTypes = map[string]bool{"select": true, "update": true, "create": true, "drop": true, "alter": true, "index": true, "lock": true,
	"read": true, "write": true, "repladmin": true, "serviceadmin": true, "tempudfadmin": true, "refresh": true, "all": true}

func (s *Server) grantRevoke(w http.ResponseWriter, r *http.Request, caller, svc string, body []byte, grant bool) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if !s.serviceLocked(w, svc) {
		return
	}
	var req ranger.GrantRevokeRequest
	if err := json.Unmarshal(body, &req); err != nil {
		vxResponse(w, http.StatusBadRequest, "invalid request body: "+err.Error())
		return
	}
	if req.Grantor != caller && !s.isAdminLocked(caller) && !userAllowed(s.grantRevokeUsers, caller) {
		vxResponse(w, http.StatusForbidden, "Invalid grant/revoke request - contains grantor or userOwner specification")
		return
	}
	for k := range req.Resource {
		if !hiveResources[k] {
			vxResponse(w, http.StatusBadRequest, k+": is not a valid resource-type")
			return
		}
	}
	for _, a := range req.AccessTypes {
		if !hiveAccessTypes[strings.ToLower(a)] {
			vxResponse(w, http.StatusBadRequest, a+": is not a valid access-type")
			return
		}
	}
	if !s.knownLocked("user", req.Grantor) {
		vxResponse(w, http.StatusForbidden, "Grantor user "+req.Grantor+" doesn't exist")
		return
	}
	for kind, names := range map[string][]string{"user": req.Users, "group": req.Groups, "role": req.Roles} {
		for _, n := range names {
			if !s.knownLocked(kind, n) {
				vxResponse(w, http.StatusForbidden, "Grantee "+kind+" "+n+" doesn't exist")
				return
			}
		}
	}
	if len(req.Users) == 0 && len(req.Groups) == 0 && len(req.Roles) == 0 {
		vxResponse(w, http.StatusForbidden, "Grantee users/groups/roles list is empty")
		return
	}
	sp, err := s.policiesLocked()
	if err != nil {
		vxResponse(w, http.StatusInternalServerError, err.Error())
		return
	}
	resource := map[string][]string{}
	for k, v := range req.Resource {
		resource[k] = ranger.ResourceValues(v)
	}
	groups := append(append([]string(nil), req.GrantorGroups...), s.groupsOfLocked(req.Grantor)...)
	if !s.admins[req.Grantor] && !userAllowed(s.serviceAdmins, req.Grantor) && !delegatedAdmin(sp, req.Grantor, groups, resource, req.AccessTypes) {
		what := "grant"
		if !grant {
			what = "revoke"
		}
		vxResponse(w, http.StatusForbidden, "User doesn't have necessary permission to "+what+" access")
		return
	}
	now := time.Now()
	changed := true
	if grant {
		_, _, err = sp.ApplyGrant(&req, now)
	} else {
		var p *ranger.RangerPolicy
		p, changed, err = sp.ApplyRevoke(&req, now)
		changed = changed && p != nil
	}
	if err != nil {
		writeWriteError(w, err)
		return
	}
	if changed {
		s.storePoliciesLocked(sp, now)
	}
	writeJSON(w, http.StatusOK, map[string]any{"httpStatusCode": 200, "statusCode": 0})
}

// delegatedAdmin is Ranger's "may administer": enabled access policies
// whose resources match the request and whose allow items with
// delegateAdmin name the user (or one of its groups, or public) give,
// together, every access asked for ("all" gives every one).
func delegatedAdmin(sp *ranger.ServicePolicies, user string, groups []string, resource map[string][]string, accesses []string) bool {
	if len(accesses) == 0 {
		return false
	}
	missing := map[string]bool{}
	for _, a := range accesses {
		missing[strings.ToLower(a)] = true
	}
	for i := range sp.Policies {
		p := &sp.Policies[i]
		if !p.IsEnabled || p.PolicyType != ranger.PolicyTypeAccess || !policyMatches(p.Resources, resource) {
			continue
		}
		for _, it := range p.PolicyItems {
			if !it.DelegateAdmin || !itemNames(it, user, groups) {
				continue
			}
			for _, a := range it.Accesses {
				if !a.IsAllowed {
					continue
				}
				if strings.EqualFold(a.Type, "all") {
					return true
				}
				delete(missing, strings.ToLower(a.Type))
			}
		}
		if len(missing) == 0 {
			return true
		}
	}
	return false
}

func itemNames(it ranger.RangerPolicyItem, user string, groups []string) bool {
	for _, u := range it.Users {
		if u == user || u == "{USER}" {
			return true
		}
	}
	for _, g := range it.Groups {
		if g == "public" {
			return true
		}
		for _, mine := range groups {
			if g == mine {
				return true
			}
		}
	}
	return false
}

// policyMatches: every resource of the policy matches the request's
// values (glob wildcards, case-insensitive, excludes inverted); a value
// "*" in the request is a value like any other.
func policyMatches(policyRes map[string]ranger.RangerPolicyResource, req map[string][]string) bool {
	for name, pr := range policyRes {
		vals, ok := req[name]
		if !ok {
			return false
		}
		for _, v := range vals {
			hit := false
			for _, pat := range pr.Values {
				if m, _ := path.Match(strings.ToLower(pat), strings.ToLower(v)); m {
					hit = true
				}
			}
			if hit == pr.IsExcludes {
				return false
			}
		}
	}
	for name := range req {
		if _, ok := policyRes[name]; !ok {
			return false
		}
	}
	return true
}

func writeWriteError(w http.ResponseWriter, err error) {
	if we, ok := err.(*ranger.WriteError); ok {
		vxResponse(w, we.Status, we.Message)
		return
	}
	vxResponse(w, http.StatusBadRequest, err.Error())
}

// publicAPI serves /service/public/v2/api/... (rest is the part after /api).
func (s *Server) publicAPI(w http.ResponseWriter, r *http.Request, user, rest string, body []byte) {
	q := r.URL.Query()
	switch {
	case rest == "/policy" && r.Method == http.MethodGet:
		s.searchPolicies(w, q)
	case rest == "/policy" && r.Method == http.MethodPost:
		s.createPolicy(w, user, body)
	case rest == "/policy" && r.Method == http.MethodDelete:
		s.deletePolicy(w, user, q.Get("servicename"), q.Get("policyname"))
	case strings.HasPrefix(rest, "/service/"):
		parts := strings.SplitN(strings.TrimPrefix(rest, "/service/"), "/", 3) // svc, "policy", name
		if len(parts) < 2 || parts[1] != "policy" {
			http.NotFound(w, r)
			return
		}
		if !s.serviceLocked(w, parts[0]) {
			return
		}
		name := ""
		if len(parts) == 3 {
			name, _ = url.PathUnescape(parts[2])
		}
		switch {
		case name == "" && r.Method == http.MethodGet:
			s.listPolicies(w, q)
		case name != "" && r.Method == http.MethodGet:
			sp, _ := s.policiesLocked()
			p := sp.PolicyByName(name)
			if p == nil {
				vxResponse(w, http.StatusNotFound, fmt.Sprintf("Policy %s does not exist in service %s", name, s.service))
				return
			}
			out := *p
			out.Service = s.service
			writeJSON(w, http.StatusOK, out)
		case name != "" && r.Method == http.MethodPut:
			s.updatePolicy(w, user, name, body)
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) listPolicies(w http.ResponseWriter, q url.Values) {
	sp, err := s.policiesLocked()
	if err != nil {
		vxResponse(w, http.StatusInternalServerError, err.Error())
		return
	}
	start, _ := strconv.Atoi(q.Get("startIndex"))
	size, err := strconv.Atoi(q.Get("pageSize"))
	if err != nil || size <= 0 {
		size = 200
	}
	s.pageRequests++
	ps := sp.Policies
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].ID < ps[j].ID })
	page := []ranger.RangerPolicy{}
	for i := start; i < len(ps) && i < start+size; i++ {
		p := ps[i]
		p.Service = s.service // Ranger's answers always name the service
		page = append(page, p)
	}
	writeJSON(w, http.StatusOK, page)
}

// PageRequests counts the list requests (paging).
func (s *Server) PageRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pageRequests
}

func (s *Server) searchPolicies(w http.ResponseWriter, q url.Values) {
	sp, err := s.policiesLocked()
	if err != nil {
		vxResponse(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := []ranger.RangerPolicy{}
	for _, p := range sp.Policies {
		if svc := q.Get("serviceName"); svc != "" && svc != s.service {
			continue
		}
		if name := q.Get("policyName"); name != "" && p.Name != name {
			continue
		}
		if t := q.Get("policyType"); t != "" && t != strconv.Itoa(p.PolicyType) {
			continue
		}
		if l := q.Get("policyLabel"); l != "" && !contains(p.PolicyLabels, l) {
			continue
		}
		ok := true
		for k, vs := range q {
			name, isRes := strings.CutPrefix(k, "resource:")
			if !isRes {
				continue
			}
			pr, has := p.Resources[name]
			if !has || !policyMatches(map[string]ranger.RangerPolicyResource{name: pr}, map[string][]string{name: vs}) {
				ok = false
			}
		}
		if ok {
			out = append(out, p)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// mayWritePolicyLocked is Ranger's check for a non-admin writer: delegated
// admin on the policy's resources for the access types it names (select
// for mask and row-filter policies).
func (s *Server) mayWritePolicyLocked(w http.ResponseWriter, user string, sp *ranger.ServicePolicies, p *ranger.RangerPolicy) bool {
	if s.isAdminLocked(user) {
		return true
	}
	accesses := map[string]bool{}
	for _, it := range p.PolicyItems {
		for _, a := range it.Accesses {
			accesses[strings.ToLower(a.Type)] = true
		}
	}
	if p.PolicyType != ranger.PolicyTypeAccess {
		accesses["select"] = true
	}
	var list []string
	for a := range accesses {
		list = append(list, a)
	}
	for _, res := range expand(p.Resources) {
		if len(list) == 0 || !delegatedAdmin(sp, user, s.groupsOfLocked(user), res, list) {
			vxResponse(w, http.StatusForbidden, fmt.Sprintf("User '%s' does not have delegated-admin privilege on given resources", user))
			return false
		}
	}
	return true
}

// expand turns a policy's resources into one request per value combination.
func expand(res map[string]ranger.RangerPolicyResource) []map[string][]string {
	out := []map[string][]string{{}}
	names := make([]string, 0, len(res))
	for n := range res {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var next []map[string][]string
		for _, partial := range out {
			for _, v := range res[n].Values {
				m := map[string][]string{}
				for k, vs := range partial {
					m[k] = vs
				}
				m[n] = []string{v}
				next = append(next, m)
			}
		}
		out = next
	}
	return out
}

// principalsExistLocked is Ranger's check that the users and groups an
// item names exist (400 "Operation denied. …").
func (s *Server) principalsExistLocked(w http.ResponseWriter, p *ranger.RangerPolicy) bool {
	var items []ranger.RangerPolicyItem
	items = append(items, p.PolicyItems...)
	items = append(items, p.DenyPolicyItems...)
	items = append(items, p.AllowExceptions...)
	items = append(items, p.DenyExceptions...)
	for _, it := range p.DataMaskPolicyItems {
		items = append(items, it.RangerPolicyItem)
	}
	for _, it := range p.RowFilterPolicyItems {
		items = append(items, it.RangerPolicyItem)
	}
	for _, it := range items {
		for _, u := range it.Users {
			if !strings.HasPrefix(u, "{") && !s.knownLocked("user", u) {
				vxResponse(w, http.StatusBadRequest, "Operation denied. User name: "+u+" specified in policy does not exist in ranger admin.")
				return false
			}
		}
		for _, g := range it.Groups {
			if !s.knownLocked("group", g) {
				vxResponse(w, http.StatusBadRequest, "Operation denied. Group name: "+g+" specified in policy does not exist in ranger admin.")
				return false
			}
		}
		for _, r := range it.Roles {
			if !s.knownLocked("role", r) {
				vxResponse(w, http.StatusBadRequest, "Operation denied. Role name: "+r+" specified in policy does not exist in ranger admin.")
				return false
			}
		}
	}
	return true
}

func (s *Server) createPolicy(w http.ResponseWriter, user string, body []byte) {
	var p ranger.RangerPolicy
	if err := json.Unmarshal(body, &p); err != nil {
		vxResponse(w, http.StatusBadRequest, "invalid policy: "+err.Error())
		return
	}
	if !s.serviceLocked(w, p.Service) {
		return
	}
	sp, err := s.policiesLocked()
	if err != nil {
		vxResponse(w, http.StatusInternalServerError, err.Error())
		return
	}
	if !s.mayWritePolicyLocked(w, user, sp, &p) || !s.principalsExistLocked(w, &p) {
		return
	}
	p.CreatedBy = user
	now := time.Now()
	created, err := sp.CreatePolicy(p, now)
	if err != nil {
		writeWriteError(w, err)
		return
	}
	out := *created
	s.storePoliciesLocked(sp, now)
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) updatePolicy(w http.ResponseWriter, user, name string, body []byte) {
	var p ranger.RangerPolicy
	if err := json.Unmarshal(body, &p); err != nil {
		vxResponse(w, http.StatusBadRequest, "invalid policy: "+err.Error())
		return
	}
	if p.Service != "" && p.Service != s.service {
		vxResponse(w, http.StatusBadRequest, "service name mismatch")
		return
	}
	sp, err := s.policiesLocked()
	if err != nil {
		vxResponse(w, http.StatusInternalServerError, err.Error())
		return
	}
	if old := sp.PolicyByName(name); old != nil && !s.mayWritePolicyLocked(w, user, sp, old) {
		return
	}
	if !s.mayWritePolicyLocked(w, user, sp, &p) || !s.principalsExistLocked(w, &p) {
		return
	}
	now := time.Now()
	updated, err := sp.UpdatePolicy(name, p, user, now)
	if err != nil {
		writeWriteError(w, err)
		return
	}
	out := *updated
	s.storePoliciesLocked(sp, now)
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) deletePolicy(w http.ResponseWriter, user, svc, name string) {
	if !s.serviceLocked(w, svc) {
		return
	}
	sp, err := s.policiesLocked()
	if err != nil {
		vxResponse(w, http.StatusInternalServerError, err.Error())
		return
	}
	if old := sp.PolicyByName(name); old != nil && !s.mayWritePolicyLocked(w, user, sp, old) {
		return
	}
	if err := sp.DeletePolicy(name); err != nil {
		writeWriteError(w, err)
		return
	}
	s.storePoliciesLocked(sp, time.Now())
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) importTags(w http.ResponseWriter, r *http.Request, user string, body []byte) {
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if !s.admins[user] {
		vxResponse(w, http.StatusForbidden, "User '"+user+"' does not have permission to import tags")
		return
	}
	in, err := ranger.ParseServiceTags(body)
	if err != nil {
		vxResponse(w, http.StatusBadRequest, err.Error())
		return
	}
	if !s.serviceLocked(w, in.ServiceName) {
		return
	}
	if in.Op != "" && in.Op != "add_or_update" {
		vxResponse(w, http.StatusBadRequest, "op "+in.Op+" is not supported by this test server")
		return
	}
	st, err := ranger.ParseServiceTags(s.docLocked(rangeradmin.DocTags).body)
	if err != nil {
		vxResponse(w, http.StatusInternalServerError, err.Error())
		return
	}
	now := time.Now()
	st.ImportAddOrUpdate(in, now)
	st.Bump(now)
	doc, _ := ranger.MarshalDocument(st)
	s.docs[rangeradmin.DocTags] = &document{body: doc, version: st.TagVersion}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) createRole(w http.ResponseWriter, r *http.Request, user string, body []byte) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if !s.admins[user] {
		vxResponse(w, http.StatusForbidden, "User '"+user+"' does not have permission to create roles")
		return
	}
	var role ranger.RangerRole
	if err := json.Unmarshal(body, &role); err != nil || role.Name == "" {
		vxResponse(w, http.StatusBadRequest, "invalid role")
		return
	}
	roles, err := ranger.ParseRoles(s.docLocked(rangeradmin.DocRoles).body)
	if err != nil {
		vxResponse(w, http.StatusInternalServerError, err.Error())
		return
	}
	for _, have := range roles.RangerRoles {
		if have.Name == role.Name {
			vxResponse(w, http.StatusBadRequest, "Role with name: "+role.Name+" already exists")
			return
		}
	}
	role.ID = int64(len(roles.RangerRoles) + 1)
	role.IsEnabled = true
	roles.RangerRoles = append(roles.RangerRoles, role)
	if roles.RoleVersion < 0 {
		roles.RoleVersion = 0
	}
	roles.RoleVersion++
	doc, _ := ranger.MarshalDocument(roles)
	s.docs[rangeradmin.DocRoles] = &document{body: doc, version: roles.RoleVersion}
	writeJSON(w, http.StatusOK, role)
}
