// Package rangertest is a Ranger-Admin-compatible HTTP server for tests.
//
// It serves the four plugin downloads on Ranger's secure paths
// (/service/plugins/secure/policies/download/{svc},
// /service/tags/secure/download/{svc}, /service/roles/secure/download/{svc},
// /service/xusers/secure/download/{svc}) with Ranger's parameters and status
// codes (docs/ranger.md; in apache/ranger, security-admin's ServiceREST,
// TagREST, RoleREST and XUserREST):
//
//   - HTTP basic authentication; a missing or wrong password is 401, an
//     authenticated user who is neither an admin nor listed in the
//     service's policy.download.auth.users (tag.download.auth.users for
//     tags) is 403;
//   - an unknown service is 404 with a VXResponse carrying
//     RANGER_ERROR_SERVICE_NOT_FOUND;
//   - the version parameter (lastKnownVersion, lastKnownRoleVersion,
//     lastKnownUserStoreVersion) equal to the current version is 304 with no
//     body, anything else 200 with the document;
//   - the plain (unauthenticated) paths answer 400, as Ranger 2.9+ does when
//     unauthenticated download is not enabled.
//
// It also answers the write APIs HiveServer2 and policy-as-code tools use
// (writes.go): grant and revoke, the public v2 policy API, the tag import
// and role creation, with Ranger's checks, and bumps the version of what
// they change.
//
// Tests can make it fail (any status and body), hang, answer garbage, lose
// the service, stop listening and come back on the same address, and bump
// document versions. It counts requests and remembers their parameters. It
// listens on 127.0.0.1 only. A real Ranger Admin (a JVM, a database, Solr)
// cannot run in CI; this server is held to the formats a real one speaks.
package rangertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/ranger/rangeradmin"
)

// Server is a running test Ranger Admin.
type Server struct {
	service string

	mu            sync.Mutex
	addr          string
	ln            net.Listener
	srv           *http.Server
	accounts      map[string]string // user → password
	admins        map[string]bool
	downloadUsers []string // policy.download.auth.users
	tagUsers      []string // tag.download.auth.users
	docs          map[rangeradmin.Document]*document
	faults        map[rangeradmin.Document]fault // per document; "" key below for all
	allFault      *fault
	hang          chan struct{} // non-nil while hanging: closed to release
	gone          bool
	garbage       map[rangeradmin.Document]bool
	notModified   int // 304 or 204
	plainAllowed  bool
	counts        map[rangeradmin.Document]int
	queries       map[rangeradmin.Document]url.Values
	users         map[rangeradmin.Document]string

	// The write side (writes.go).
	grantRevokeUsers []string // policy.grantrevoke.auth.users
	serviceAdmins    []string // service.admin.users
	writes           int
	writeLog         []string
	pageRequests     int
}

type document struct {
	body    []byte
	version int64
	parsed  *ranger.ServicePolicies // policies only: the body parsed (writes.go)
}

type fault struct {
	status int
	body   string
}

// New starts a server for service on a free loopback port. user/password is
// the account the plugin authenticates with; it is listed in the service's
// policy.download.auth.users and tag.download.auth.users. Every document is
// an empty one of version 1 until set.
func New(service, user, password string) (*Server, error) {
	s := &Server{
		service:       service,
		accounts:      map[string]string{user: password},
		admins:        map[string]bool{},
		downloadUsers: []string{user},
		tagUsers:      []string{user},
		docs:          map[rangeradmin.Document]*document{},
		faults:        map[rangeradmin.Document]fault{},
		garbage:       map[rangeradmin.Document]bool{},
		notModified:   http.StatusNotModified,
		counts:        map[rangeradmin.Document]int{},
		queries:       map[rangeradmin.Document]url.Values{},
		users:         map[rangeradmin.Document]string{},
	}
	if err := s.listen("127.0.0.1:0"); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) listen(addr string) error {
	var ln net.Listener
	var err error
	// Coming back on the same port can race with the old socket's close.
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(s.handle), ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	s.ln, s.srv, s.addr = ln, srv, ln.Addr().String()
	s.mu.Unlock()
	go srv.Serve(ln)
	return nil
}

// Handler returns the server's handler, to serve it another way (TLS).
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.handle) }

// URL is the base URL to configure as policy.ranger.url.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "http://" + s.addr
}

// Stop closes the listener and every open connection: Ranger is down
// (connections are refused) until Start.
func (s *Server) Stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv, s.ln = nil, nil
	if s.hang != nil {
		close(s.hang)
		s.hang = nil
	}
	s.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// Start listens again on the address of the first start.
func (s *Server) Start() error {
	s.mu.Lock()
	running, addr := s.srv != nil, s.addr
	s.mu.Unlock()
	if running {
		return nil
	}
	return s.listen(addr)
}

// Close stops the server for good.
func (s *Server) Close() { s.Stop() }

// SetCredentials replaces the accounts with one: user/password.
func (s *Server) SetCredentials(user, password string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accounts = map[string]string{user: password}
}

// AddAccount adds an account; admin accounts may download everything.
func (s *Server) AddAccount(user, password string, admin bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accounts[user] = password
	s.admins[user] = admin
}

// SetDownloadUsers sets the service's policy.download.auth.users (policies,
// roles, user store) and tag.download.auth.users ("*" = everyone).
func (s *Server) SetDownloadUsers(users ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.downloadUsers = append([]string(nil), users...)
	s.tagUsers = append([]string(nil), users...)
}

// SetDocument serves body for doc; its version is read from the document's
// own version field (policyVersion, tagVersion, roleVersion,
// userStoreVersion; -1 when absent). body need not be valid JSON (then the
// version is -1).
func (s *Server) SetDocument(doc rangeradmin.Document, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.docs[doc] = &document{body: append([]byte(nil), body...), version: versionOf(doc, body)}
}

// SetDocumentFile serves the file at path for doc.
func (s *Server) SetDocumentFile(doc rangeradmin.Document, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s.SetDocument(doc, b)
	return nil
}

// Document returns the body served for doc and its version.
func (s *Server) Document(doc rangeradmin.Document) ([]byte, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.docLocked(doc)
	return append([]byte(nil), d.body...), d.version
}

// Edit changes doc as generic JSON, raises its version by one (as Ranger
// does on every change) and returns the new version.
func (s *Server) Edit(doc rangeradmin.Document, edit func(m map[string]any)) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.docLocked(doc)
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(d.body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return 0, fmt.Errorf("rangertest: %s is not a JSON object: %w", doc, err)
	}
	if edit != nil {
		edit(m)
	}
	v := d.version + 1
	m[versionField(doc)] = v
	body, err := json.Marshal(m)
	if err != nil {
		return 0, err
	}
	s.docs[doc] = &document{body: body, version: v}
	return v, nil
}

// Bump raises doc's version without other changes.
func (s *Server) Bump(doc rangeradmin.Document) (int64, error) { return s.Edit(doc, nil) }

// Fail makes every download of doc answer status with body; Fail(doc, 0, "")
// clears it. Use FailAll for every document.
func (s *Server) Fail(doc rangeradmin.Document, status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status == 0 {
		delete(s.faults, doc)
		return
	}
	s.faults[doc] = fault{status, body}
}

// FailAll makes every download answer status with body (0 clears).
func (s *Server) FailAll(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status == 0 {
		s.allFault = nil
		return
	}
	s.allFault = &fault{status, body}
}

// Garbage makes downloads of doc answer 200 with a body that is not JSON.
func (s *Server) Garbage(doc rangeradmin.Document, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.garbage[doc] = on
}

// Hang makes every request wait (without answering) until Release, Stop,
// or the client gives up.
func (s *Server) Hang() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hang == nil {
		s.hang = make(chan struct{})
	}
}

// Release ends Hang.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hang != nil {
		close(s.hang)
		s.hang = nil
	}
}

// ServiceGone makes the service unknown (404 RANGER_ERROR_SERVICE_NOT_FOUND)
// or brings it back.
func (s *Server) ServiceGone(gone bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gone = gone
}

// NotModifiedStatus chooses 304 (Ranger's) or 204 for "no change".
func (s *Server) NotModifiedStatus(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notModified = code
}

// Normal clears every fault (failures, garbage, hang, lost service).
func (s *Server) Normal() {
	s.mu.Lock()
	s.faults = map[rangeradmin.Document]fault{}
	s.allFault = nil
	s.garbage = map[rangeradmin.Document]bool{}
	s.gone = false
	s.mu.Unlock()
	s.Release()
}

// Requests counts the requests that reached doc's endpoint (any outcome).
func (s *Server) Requests(doc rangeradmin.Document) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[doc]
}

// TotalRequests counts requests to every document endpoint.
func (s *Server) TotalRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.counts {
		n += c
	}
	return n
}

// LastQuery returns the query parameters of the last request for doc.
func (s *Server) LastQuery(doc rangeradmin.Document) url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queries[doc]
}

// LastUser returns the basic-auth user of the last request for doc.
func (s *Server) LastUser(doc rangeradmin.Document) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.users[doc]
}

func (s *Server) docLocked(doc rangeradmin.Document) *document {
	if d := s.docs[doc]; d != nil {
		return d
	}
	body := fmt.Sprintf(`{"serviceName":%q,%q:1}`, s.service, versionField(doc))
	d := &document{body: []byte(body), version: 1}
	s.docs[doc] = d
	return d
}

func versionField(doc rangeradmin.Document) string {
	switch doc {
	case rangeradmin.DocTags:
		return "tagVersion"
	case rangeradmin.DocRoles:
		return "roleVersion"
	case rangeradmin.DocUserStore:
		return "userStoreVersion"
	}
	return "policyVersion"
}

func versionOf(doc rangeradmin.Document, body []byte) int64 {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return -1
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(m[versionField(doc)])), 10, 64)
	if err != nil {
		return -1
	}
	return v
}

var plainPaths = []string{
	"/service/plugins/policies/download/",
	"/service/tags/download/",
	"/service/roles/download/",
	"/service/xusers/download/",
}

// plainDocs are the documents of plainPaths, in order.
var plainDocs = []rangeradmin.Document{rangeradmin.DocPolicies, rangeradmin.DocTags, rangeradmin.DocRoles, rangeradmin.DocUserStore}

// AllowUnauthenticatedDownload makes the plain paths serve the documents
// without authentication, as a Ranger Admin with
// ranger.admin.allow.unauthenticated.download.access does (and Ranger
// before 2.9 did): what a plugin outside Kerberos, such as Kyuubi's in a
// Spark session, downloads from.
func (s *Server) AllowUnauthenticatedDownload(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.plainAllowed = on
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if s.handleWrite(w, r) {
		return
	}
	var doc rangeradmin.Document
	var service string
	for _, d := range rangeradmin.AllDocuments {
		if rest, ok := strings.CutPrefix(r.URL.Path, d.SecurePath()); ok {
			doc, service = d, rest
			break
		}
	}
	plain := false
	if doc == "" {
		s.mu.Lock()
		allowed := s.plainAllowed
		s.mu.Unlock()
		for i, p := range plainPaths {
			if rest, ok := strings.CutPrefix(r.URL.Path, p); ok {
				if allowed {
					doc, service, plain = plainDocs[i], rest, true
					break
				}
				// Ranger 2.9+ without ranger.admin.allow.unauthenticated.download.access.
				vxResponse(w, http.StatusBadRequest, "Unauthenticated access not allowed")
				return
			}
		}
		if doc == "" {
			http.NotFound(w, r)
			return
		}
	}
	if r.Method != http.MethodGet {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	s.counts[doc]++
	s.queries[doc] = r.URL.Query()
	user, password, hasAuth := r.BasicAuth()
	s.users[doc] = user
	hang := s.hang
	s.mu.Unlock()

	if hang != nil {
		select {
		case <-hang:
		case <-r.Context().Done():
			return
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	// Spring Security runs first on the secure paths.
	if want, ok := s.accounts[user]; !plain && (!hasAuth || !ok || want != password) {
		w.Header().Set("WWW-Authenticate", `Basic realm="Ranger Admin"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"statusCode":401,"msgDesc":"Authentication Failed"}`)
		return
	}
	if f := s.allFault; f != nil {
		writeFault(w, *f)
		return
	}
	if f, ok := s.faults[doc]; ok {
		writeFault(w, f)
		return
	}
	svc, _ := url.PathUnescape(service)
	if svc == "" {
		vxResponse(w, http.StatusBadRequest, "Service name is empty")
		return
	}
	if svc != s.service || s.gone {
		vxResponse(w, http.StatusNotFound, rangeradmin.ServiceNotFoundMarker+": ServiceName="+svc)
		return
	}
	allowed := s.downloadUsers
	if doc == rangeradmin.DocTags {
		allowed = s.tagUsers
	}
	if !plain && !s.admins[user] && !userAllowed(allowed, user) {
		vxResponse(w, http.StatusForbidden, fmt.Sprintf("User %s is not allowed to download from service %s", user, svc))
		return
	}
	param := doc.VersionParam()
	last := int64(-1)
	if raw := r.URL.Query().Get(param); raw != "" {
		v, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			vxResponse(w, http.StatusBadRequest, "invalid "+param)
			return
		}
		last = v
	} else if doc == rangeradmin.DocTags {
		last = -2 // no default for tags: always send
	}
	if s.garbage[doc] {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, "<html><body>Ranger is having a bad day</body></html>")
		return
	}
	d := s.docLocked(doc)
	if d.version == last {
		w.WriteHeader(s.notModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(d.body)
}

func userAllowed(list []string, user string) bool {
	for _, u := range list {
		if u == "*" || strings.EqualFold(strings.TrimSpace(u), user) {
			return true
		}
	}
	return false
}

func writeFault(w http.ResponseWriter, f fault) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.status)
	fmt.Fprint(w, f.body)
}

// vxResponse writes Ranger's error body (RESTErrorUtil.createRESTException).
func vxResponse(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"statusCode": 1, "msgDesc": msg, "messageList": []any{map[string]any{"name": "ERROR", "message": msg}}})
	w.Write(b)
}
