package rangeradmin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

// Writing to Ranger Admin (authoring statements, `pgranger policy sync`):
// the secure grant and revoke endpoints, the public v2 policy API and the
// tag import, with the client's URLs, credentials and TLS settings. Which
// rights the account needs is in docs/authoring.md.
//
// A write goes to the first URL that accepts a connection. It is not
// retried on another URL once a request was sent, whatever the answer: a
// grant or a create that reached one admin and timed out may have been
// applied, and applying it twice is not the same as once.

// Paths of Ranger Admin's write APIs (ServiceREST, PublicAPIsv2, TagREST).
const (
	pathGrant      = "/service/plugins/secure/services/grant/"
	pathRevoke     = "/service/plugins/secure/services/revoke/"
	pathPublicAPI  = "/service/public/v2/api"
	pathTagImport  = "/service/tags/importservicetags/"
	listPageSize   = 200 // Ranger's default page size: a shorter page is the last
	maxWriteAnswer = 64 << 20
)

// Observer sees each request a write sends and Ranger's status (0 when no
// answer came): the audit record of an authoring statement lists them.
type Observer func(method, path string, body []byte, status int)

type observerKey struct{}

// WithObserver returns a context whose writes report to obs.
func WithObserver(ctx context.Context, obs Observer) context.Context {
	return context.WithValue(ctx, observerKey{}, obs)
}

// Grant sends req to the secure grant endpoint: Ranger merges it into the
// policy with exactly the request's resources, or creates grant-<millis>.
func (c *AdminClient) Grant(ctx context.Context, req *ranger.GrantRevokeRequest) error {
	_, err := c.write(ctx, http.MethodPost, pathGrant+url.PathEscape(c.cfg.ServiceName), nil, req)
	return err
}

// Revoke sends req to the secure revoke endpoint (a revoke without an
// exact-match policy is a silent 200).
func (c *AdminClient) Revoke(ctx context.Context, req *ranger.GrantRevokeRequest) error {
	_, err := c.write(ctx, http.MethodPost, pathRevoke+url.PathEscape(c.cfg.ServiceName), nil, req)
	return err
}

// Policy reads one policy by name; nil when Ranger has none (404).
func (c *AdminClient) Policy(ctx context.Context, name string) (*ranger.RangerPolicy, error) {
	body, err := c.write(ctx, http.MethodGet, c.policyPath(name), nil, nil)
	var we *ranger.WriteError
	if errors.As(err, &we) && we.Status == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var p ranger.RangerPolicy
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("ranger: policy %q: %w", name, err)
	}
	return &p, nil
}

// ListPolicies reads every policy of the service through the public API,
// page by page (startIndex, pageSize) until a short page.
func (c *AdminClient) ListPolicies(ctx context.Context) ([]ranger.RangerPolicy, error) {
	var all []ranger.RangerPolicy
	for start := 0; ; start += listPageSize {
		q := url.Values{"startIndex": {strconv.Itoa(start)}, "pageSize": {strconv.Itoa(listPageSize)}}
		body, err := c.write(ctx, http.MethodGet, pathPublicAPI+"/service/"+url.PathEscape(c.cfg.ServiceName)+"/policy", q, nil)
		if err != nil {
			return nil, err
		}
		var page []ranger.RangerPolicy
		if err := json.Unmarshal(body, &page); err != nil {
			return nil, fmt.Errorf("ranger: policies of service %q (from %d): %w", c.cfg.ServiceName, start, err)
		}
		all = append(all, page...)
		if len(page) < listPageSize {
			return all, nil
		}
	}
}

// CreatePolicy creates p; Ranger answers with the stored policy.
func (c *AdminClient) CreatePolicy(ctx context.Context, p *ranger.RangerPolicy) (*ranger.RangerPolicy, error) {
	p.Service = c.cfg.ServiceName
	body, err := c.write(ctx, http.MethodPost, pathPublicAPI+"/policy", nil, p)
	if err != nil {
		return nil, err
	}
	return decodePolicy(body)
}

// UpdatePolicy replaces the policy named name with p (404 when absent).
// Ranger ignores p's version: the last writer wins.
func (c *AdminClient) UpdatePolicy(ctx context.Context, name string, p *ranger.RangerPolicy) (*ranger.RangerPolicy, error) {
	p.Service = c.cfg.ServiceName
	body, err := c.write(ctx, http.MethodPut, c.policyPath(name), nil, p)
	if err != nil {
		return nil, err
	}
	return decodePolicy(body)
}

// DeletePolicy deletes the policy named name.
func (c *AdminClient) DeletePolicy(ctx context.Context, name string) error {
	// The delete takes lower-case parameter names, unlike the search.
	q := url.Values{"servicename": {c.cfg.ServiceName}, "policyname": {name}}
	_, err := c.write(ctx, http.MethodDelete, pathPublicAPI+"/policy", q, nil)
	return err
}

// ImportTags sends a ServiceTags document to the tag import (op
// add_or_update: each resource's tag list replaces its tags).
func (c *AdminClient) ImportTags(ctx context.Context, st *ranger.ServiceTags) error {
	_, err := c.write(ctx, http.MethodPut, pathTagImport, nil, st)
	return err
}

// Download reads doc as it is in Ranger Admin now (a plugin download that
// claims no version, so Ranger always answers with the document).
func (c *AdminClient) Download(ctx context.Context, doc Document) (any, error) {
	res := c.Fetch(ctx, doc, -1, time.Time{})
	switch res.Outcome {
	case Updated:
		return res.Parsed, nil
	case NotModified:
		return nil, fmt.Errorf("ranger: %s: HTTP %s to a download without a version", doc, res.Status)
	}
	return nil, res.Err
}

func (c *AdminClient) policyPath(name string) string {
	return pathPublicAPI + "/service/" + url.PathEscape(c.cfg.ServiceName) + "/policy/" + url.PathEscape(name)
}

func decodePolicy(body []byte) (*ranger.RangerPolicy, error) {
	var p ranger.RangerPolicy
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("ranger: the policy Ranger Admin answered with: %w", err)
	}
	return &p, nil
}

// write sends one request and returns the body of a 2xx answer; any other
// answer is a *ranger.WriteError with Ranger's message and error code.
func (c *AdminClient) write(ctx context.Context, method, path string, query url.Values, payload any) ([]byte, error) {
	password, err := c.cfg.Password()
	if err != nil {
		return nil, fmt.Errorf("reading the Ranger admin password: %w", err)
	}
	var body []byte
	if payload != nil {
		if body, err = json.Marshal(payload); err != nil {
			return nil, err
		}
	}
	obs, _ := ctx.Value(observerKey{}).(Observer)
	target := path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var lastErr error
	for _, base := range c.urls {
		req, err := http.NewRequestWithContext(ctx, method, base+target, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.SetBasicAuth(c.cfg.User, password)
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		// Not a browser: Ranger checks X-XSRF-HEADER only for browser
		// user agents.
		req.Header.Set("User-Agent", "pgranger")
		resp, err := c.http.Do(req)
		if err != nil {
			if obs != nil {
				obs(method, target, body, 0)
			}
			lastErr = fmt.Errorf("ranger: %s %s%s: %w", method, base, path, transportError(err))
			if notConnected(err) && ctx.Err() == nil {
				continue // nothing reached this admin: the next may take it
			}
			return nil, lastErr
		}
		answer, rerr := io.ReadAll(io.LimitReader(resp.Body, maxWriteAnswer))
		resp.Body.Close()
		if obs != nil {
			obs(method, target, body, resp.StatusCode)
		}
		if rerr != nil {
			return nil, fmt.Errorf("ranger: %s %s%s: reading the answer (HTTP %d): %w", method, base, path, resp.StatusCode, rerr)
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return answer, nil
		}
		return nil, writeErrorOf(resp.StatusCode, answer)
	}
	return nil, lastErr
}

// notConnected reports an error that happened before a connection was
// made (refused, unreachable, DNS): the request never reached Ranger.
func notConnected(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

var errorCodeRE = regexp.MustCompile(`error code\[(\d+)\]`)

// writeErrorOf turns a refusal into a WriteError with Ranger's message
// (the VXResponse's msgDesc) and validation code.
func writeErrorOf(status int, body []byte) *ranger.WriteError {
	msg := strings.TrimPrefix(rangerMessage(body), "Ranger says: ")
	we := &ranger.WriteError{Status: status, Message: msg}
	if m := errorCodeRE.FindStringSubmatch(msg); m != nil {
		we.Code, _ = strconv.Atoi(m[1])
	}
	return we
}

// ServiceName is the Ranger service the client reads and writes.
func (c *AdminClient) ServiceName() string { return c.cfg.ServiceName }
