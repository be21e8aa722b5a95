package rangeradmin

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/pgranger/pgranger/ranger"
)

// Document names one of the four documents a Ranger plugin downloads.
type Document string

// The documents, in the order a refresh fetches them.
const (
	DocPolicies  Document = "policies"
	DocTags      Document = "tags"
	DocRoles     Document = "roles"
	DocUserStore Document = "userstore"
)

// AllDocuments lists every document in fetch order.
var AllDocuments = []Document{DocPolicies, DocTags, DocRoles, DocUserStore}

// SecurePath is the secure (authenticated) download path of d, without the
// service name (docs/ranger.md, "What pgranger downloads"; in apache/ranger,
// RangerRESTUtils in agents-common and the @Path of the download methods in
// security-admin's ServiceREST, TagREST, RoleREST and XUserREST). The
// plain paths are never used: Ranger 2.9+
// refuses them unless unauthenticated download is switched on.
func (d Document) SecurePath() string {
	switch d {
	case DocPolicies:
		return "/service/plugins/secure/policies/download/"
	case DocTags:
		return "/service/tags/secure/download/"
	case DocRoles:
		return "/service/roles/secure/download/"
	case DocUserStore:
		return "/service/xusers/secure/download/"
	}
	return ""
}

// VersionParam is the query parameter carrying the last version the plugin
// has of d (roles and the user store have their own names).
func (d Document) VersionParam() string {
	switch d {
	case DocRoles:
		return "lastKnownRoleVersion"
	case DocUserStore:
		return "lastKnownUserStoreVersion"
	}
	return "lastKnownVersion"
}

// ServiceNotFoundMarker is the text Ranger Admin puts in the body of a 404
// for an unknown service (RangerServiceNotFoundException). It is matched
// anywhere in the body: the admin wraps it in a VXResponse.
const ServiceNotFoundMarker = "RANGER_ERROR_SERVICE_NOT_FOUND"

// Outcome is what one download means for the plugin.
type Outcome int

const (
	// Failed: transport error, timeout, 400/401/403/5xx, or a 200 whose body
	// is not the document. The last good document stays (until the TTL).
	Failed Outcome = iota
	// Updated: 200 with a document that parsed; it replaces the old one.
	Updated
	// NotModified: 304 (or 204) — the version the plugin has is current.
	NotModified
	// ServiceNotFound: 404 naming RANGER_ERROR_SERVICE_NOT_FOUND — the
	// service is gone and its policies must be dropped.
	ServiceNotFound
)

func (o Outcome) String() string {
	switch o {
	case Updated:
		return "updated"
	case NotModified:
		return "not_modified"
	case ServiceNotFound:
		return "service_not_found"
	}
	return "failed"
}

// Status labels of FetchResult.Status that are not HTTP codes.
const (
	StatusTransportError  = "transport_error"  // no HTTP answer (refused, reset, timeout, TLS)
	StatusInvalidDocument = "invalid_document" // 200 whose body is not the document
	StatusPasswordError   = "password_error"   // the password file could not be read
)

// FetchResult is the answer to one download.
type FetchResult struct {
	Document Document
	Outcome  Outcome
	// Status is the HTTP status code as text ("200", "304", "401", …), or
	// one of the Status* labels when there was no usable answer.
	Status string
	// URL is the admin base URL that gave the answer (the last one tried
	// when none answered).
	URL string
	// For Updated: the body as downloaded, the parsed document
	// (*ServicePolicies, *ServiceTags, *RangerRoles or *RangerUserStore) and
	// its version.
	Body    []byte
	Parsed  any
	Version int64
	// Err explains Failed and ServiceNotFound; it carries Ranger's own
	// message from the body when there is one, and never the password.
	Err error
}

// AdminClientConfig configures an AdminClient.
type AdminClientConfig struct {
	URLs        []string // base URLs, tried in order
	User        string
	Password    func() (string, error) // asked before every download (a file may be rotated)
	ServiceName string
	ClusterName string
	PluginID    string // "" = pgranger@<hostname>-<service>
	Timeout     time.Duration

	CAFile             string // PEM; when set, only these CAs are trusted
	ClientCert         string // PEM certificate and key for mutual TLS
	ClientKey          string
	AcceptInvalidCerts bool // skip server certificate verification (never in production)

	// MaxDocumentBytes bounds a response body (default 512 MiB).
	MaxDocumentBytes int64
	// Transport replaces the HTTP transport (tests); TLS settings are then
	// the transport's.
	Transport http.RoundTripper
}

// AdminClient downloads Ranger documents from the secure endpoints with
// HTTP basic authentication.
type AdminClient struct {
	cfg  AdminClientConfig
	urls []string
	http *http.Client
}

// NewAdminClient checks cfg and builds the HTTP client (TLS roots, client
// certificate). It does not contact Ranger.
func NewAdminClient(cfg AdminClientConfig) (*AdminClient, error) {
	if len(cfg.URLs) == 0 {
		return nil, errors.New("ranger: no admin URL")
	}
	if cfg.ServiceName == "" {
		return nil, errors.New("ranger: no service name")
	}
	if cfg.Password == nil {
		return nil, errors.New("ranger: no password source")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxDocumentBytes <= 0 {
		cfg.MaxDocumentBytes = 512 << 20
	}
	if cfg.PluginID == "" {
		host, _ := os.Hostname()
		cfg.PluginID = "pgranger@" + host + "-" + cfg.ServiceName
	}
	c := &AdminClient{cfg: cfg}
	for _, raw := range cfg.URLs {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("ranger: admin URL %q: want http(s)://host[:port][/path]", raw)
		}
		if u.User != nil {
			return nil, fmt.Errorf("ranger: admin URL %q must not carry credentials", u.Redacted())
		}
		c.urls = append(c.urls, strings.TrimRight(u.String(), "/"))
	}
	rt := cfg.Transport
	if rt == nil {
		tlsConf, err := cfg.tlsConfig()
		if err != nil {
			return nil, err
		}
		rt = &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}).DialContext,
			TLSClientConfig:       tlsConf,
			TLSHandshakeTimeout:   cfg.Timeout,
			ResponseHeaderTimeout: cfg.Timeout,
			MaxIdleConnsPerHost:   2,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		}
	}
	c.http = &http.Client{
		Transport: rt,
		Timeout:   cfg.Timeout,
		// A redirect from a download endpoint is a login page or a proxy
		// in the way, never a document: report it instead of following it
		// (and carrying the Authorization header along).
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c, nil
}

func (cfg AdminClientConfig) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("ranger: ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ranger: ca-file %s: no PEM certificate in it", cfg.CAFile)
		}
		tc.RootCAs = pool
	}
	if cfg.ClientCert != "" || cfg.ClientKey != "" {
		cert, err := tls.LoadX509KeyPair(cfg.ClientCert, cfg.ClientKey)
		if err != nil {
			return nil, fmt.Errorf("ranger: client-cert/client-key: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	tc.InsecureSkipVerify = cfg.AcceptInvalidCerts
	return tc, nil
}

// URLs returns the normalised admin base URLs, in failover order.
func (c *AdminClient) URLs() []string { return append([]string(nil), c.urls...) }

// Fetch downloads doc. lastKnownVersion is the version the caller has (-1
// for none); lastActivation is when the caller last installed a document
// (Ranger keeps it for its plugin status page).
//
// The admin URLs are tried in order; the next one is tried only when the
// current one gives no answer (connection refused, timeout, TLS failure) or
// answers as a broken server would (5xx, or a 404 that is not Ranger's
// service-not-found): any other answer is Ranger's answer.
func (c *AdminClient) Fetch(ctx context.Context, doc Document, lastKnownVersion int64, lastActivation time.Time) FetchResult {
	password, err := c.cfg.Password()
	if err != nil {
		return FetchResult{Document: doc, Outcome: Failed, Status: StatusPasswordError, URL: c.urls[0],
			Err: fmt.Errorf("reading the Ranger admin password: %w", err)}
	}
	var res FetchResult
	for _, base := range c.urls {
		var next bool
		res, next = c.fetchFrom(ctx, base, doc, lastKnownVersion, lastActivation, password)
		if !next || ctx.Err() != nil {
			break
		}
	}
	return res
}

// RequestURL is the full download URL of doc at base (exported for tests
// and for the docs' examples).
func (c *AdminClient) RequestURL(base string, doc Document, lastKnownVersion int64, lastActivation time.Time) string {
	q := url.Values{}
	q.Set(doc.VersionParam(), strconv.FormatInt(lastKnownVersion, 10))
	q.Set("lastActivationTime", strconv.FormatInt(lastActivationMillis(lastActivation), 10))
	q.Set("pluginId", c.cfg.PluginID)
	if c.cfg.ClusterName != "" {
		q.Set("clusterName", c.cfg.ClusterName)
	}
	switch doc {
	case DocPolicies:
		q.Set("supportsPolicyDeltas", "false")
	case DocTags:
		q.Set("supportsTagDeltas", "false")
	}
	return base + doc.SecurePath() + url.PathEscape(c.cfg.ServiceName) + "?" + q.Encode()
}

func lastActivationMillis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fetchFrom asks one admin; next reports whether the next URL should be tried.
func (c *AdminClient) fetchFrom(ctx context.Context, base string, doc Document, lastKnownVersion int64, lastActivation time.Time, password string) (FetchResult, bool) {
	res := FetchResult{Document: doc, Outcome: Failed, URL: base}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.RequestURL(base, doc, lastKnownVersion, lastActivation), nil)
	if err != nil {
		res.Status, res.Err = StatusTransportError, err
		return res, true
	}
	req.SetBasicAuth(c.cfg.User, password)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "pgranger")
	resp, err := c.http.Do(req)
	if err != nil {
		res.Status, res.Err = StatusTransportError, fmt.Errorf("%s %s: %w", doc, base, transportError(err))
		return res, true
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxDocumentBytes+1))
	res.Status = strconv.Itoa(resp.StatusCode)
	if err != nil {
		res.Status, res.Err = StatusTransportError, fmt.Errorf("%s %s: reading the answer (HTTP %d): %w", doc, base, resp.StatusCode, transportError(err))
		return res, true
	}
	switch code := resp.StatusCode; {
	case code == http.StatusOK:
		if int64(len(body)) > c.cfg.MaxDocumentBytes {
			res.Status, res.Err = StatusInvalidDocument, fmt.Errorf("%s %s: document larger than %d bytes", doc, base, c.cfg.MaxDocumentBytes)
			return res, false
		}
		parsed, version, err := parseDocumentOf(doc, body)
		if err != nil {
			res.Status, res.Err = StatusInvalidDocument, fmt.Errorf("%s %s: HTTP 200 but %w", doc, base, err)
			return res, false
		}
		if sp, ok := parsed.(*ranger.ServicePolicies); ok && sp.ServiceName != "" && sp.ServiceName != c.cfg.ServiceName {
			res.Status, res.Err = StatusInvalidDocument, fmt.Errorf("%s %s: HTTP 200 but the policies are those of service %q, not %q", doc, base, sp.ServiceName, c.cfg.ServiceName)
			return res, false
		}
		res.Outcome, res.Body, res.Parsed, res.Version = Updated, body, parsed, version
		return res, false
	case code == http.StatusNotModified || code == http.StatusNoContent:
		res.Outcome = NotModified
		return res, false
	case code == http.StatusNotFound && bytes.Contains(body, []byte(ServiceNotFoundMarker)):
		res.Outcome = ServiceNotFound
		res.Err = fmt.Errorf("%s %s: HTTP 404: Ranger Admin has no service %q (%s)", doc, base, c.cfg.ServiceName, rangerMessage(body))
		return res, false
	case code == http.StatusUnauthorized:
		res.Err = fmt.Errorf("%s %s: HTTP 401: Ranger Admin did not accept the credentials of user %q (%s)", doc, base, c.cfg.User, rangerMessage(body))
		return res, false
	case code == http.StatusForbidden:
		res.Err = fmt.Errorf("%s %s: HTTP 403: user %q may not download the %s of service %q; add it to the service's %s (%s)",
			doc, base, c.cfg.User, doc, c.cfg.ServiceName, authUsersKey(doc), rangerMessage(body))
		return res, false
	case code >= 300 && code < 400:
		res.Err = fmt.Errorf("%s %s: HTTP %d redirect to %q: is policy.ranger.url the Ranger Admin base URL?", doc, base, code, resp.Header.Get("Location"))
		return res, false
	case code == http.StatusNotFound:
		res.Err = fmt.Errorf("%s %s: HTTP 404 without %s: is policy.ranger.url the Ranger Admin base URL? (%s)", doc, base, ServiceNotFoundMarker, rangerMessage(body))
		return res, true
	case code >= 500:
		res.Err = fmt.Errorf("%s %s: HTTP %d (%s)", doc, base, code, rangerMessage(body))
		return res, true
	default:
		res.Err = fmt.Errorf("%s %s: HTTP %d (%s)", doc, base, code, rangerMessage(body))
		return res, false
	}
}

func authUsersKey(doc Document) string {
	if doc == DocTags {
		return "tag.download.auth.users"
	}
	return "policy.download.auth.users"
}

// transportError drops the URL that net/http repeats in its errors (the
// caller names the admin already) and keeps the cause.
func transportError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return fmt.Errorf("timed out: %w", ue.Err)
		}
		return ue.Err
	}
	return err
}

func parseDocumentOf(doc Document, body []byte) (any, int64, error) {
	switch doc {
	case DocPolicies:
		sp, err := ranger.ParseServicePolicies(body)
		if err != nil {
			return nil, 0, err
		}
		return sp, sp.PolicyVersion, nil
	case DocTags:
		st, err := ranger.ParseServiceTags(body)
		if err != nil {
			return nil, 0, err
		}
		if st.IsDelta {
			return nil, 0, errors.New("ranger: service tags: a delta answer (isDelta) although supportsTagDeltas=false was sent")
		}
		return st, st.TagVersion, nil
	case DocRoles:
		r, err := ranger.ParseRoles(body)
		if err != nil {
			return nil, 0, err
		}
		return r, r.RoleVersion, nil
	case DocUserStore:
		us, err := ranger.ParseUserStore(body)
		if err != nil {
			return nil, 0, err
		}
		return us, us.UserStoreVersion, nil
	}
	return nil, 0, fmt.Errorf("ranger: unknown document %q", doc)
}

// rangerMessage extracts the message of an error body for the log: the
// msgDesc of a VXResponse when the body is one, else the start of the text
// with control characters removed. Never more than 300 characters.
func rangerMessage(body []byte) string {
	var vx struct {
		MsgDesc     string `json:"msgDesc"`
		MessageList []struct {
			Message string `json:"message"`
		} `json:"messageList"`
	}
	msg := ""
	if json.Unmarshal(body, &vx) == nil {
		msg = vx.MsgDesc
		if msg == "" && len(vx.MessageList) > 0 {
			msg = vx.MessageList[0].Message
		}
	}
	if msg == "" {
		msg = string(body)
	}
	msg = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, msg)
	msg = strings.Join(strings.Fields(msg), " ")
	if msg == "" {
		return "empty body"
	}
	if r := []rune(msg); len(r) > 300 {
		msg = string(r[:300]) + "…"
	}
	return "Ranger says: " + msg
}

// PasswordFromFile returns a password source reading path on every call
// (trailing newlines removed), so a rotated secret is picked up.
func PasswordFromFile(path string) func() (string, error) {
	return func() (string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		pw := strings.TrimRight(string(b), "\r\n")
		if pw == "" {
			return "", fmt.Errorf("%s is empty", path)
		}
		return pw, nil
	}
}
