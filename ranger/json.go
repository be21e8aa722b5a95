package ranger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseServicePolicies reads a policy download (or a plugin's policy cache
// file). Fields Ranger omits take Ranger's defaults; unknown fields are
// ignored. A document that is not a JSON object of the right shape is an
// error, so the caller can keep its last good bundle.
func ParseServicePolicies(data []byte) (*ServicePolicies, error) {
	var sp ServicePolicies
	if err := parseDocument("service policies", data, &sp); err != nil {
		return nil, err
	}
	return &sp, nil
}

// ParseServiceTags reads a tag download.
func ParseServiceTags(data []byte) (*ServiceTags, error) {
	var st ServiceTags
	if err := parseDocument("service tags", data, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// ParseRoles reads a role download.
func ParseRoles(data []byte) (*RangerRoles, error) {
	var r RangerRoles
	if err := parseDocument("roles", data, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ParseUserStore reads a user-store download.
func ParseUserStore(data []byte) (*RangerUserStore, error) {
	var us RangerUserStore
	if err := parseDocument("user store", data, &us); err != nil {
		return nil, err
	}
	return &us, nil
}

func parseDocument(what string, data []byte, v any) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return fmt.Errorf("ranger: %s: empty document", what)
	}
	if trimmed[0] != '{' {
		// json.Unmarshal would accept `null` silently and report other
		// shapes with Go type names; say what a Ranger document must be.
		if !json.Valid(trimmed) {
			return fmt.Errorf("ranger: %s: not JSON: %w", what, describeJSONError(trimmed, json.Unmarshal(trimmed, new(any))))
		}
		return fmt.Errorf("ranger: %s: document must be a JSON object, got %s", what, jsonKind(trimmed[0]))
	}
	if err := json.Unmarshal(trimmed, v); err != nil {
		return fmt.Errorf("ranger: %s: %w", what, describeJSONError(trimmed, err))
	}
	return nil
}

// describeJSONError turns encoding/json errors into messages that point at
// the offending place in the document.
func describeJSONError(data []byte, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := lineCol(data, syn.Offset)
		return fmt.Errorf("invalid JSON at line %d, column %d: %v", line, col, syn)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		field := typ.Field
		if field == "" {
			field = "(document)"
		}
		line, col := lineCol(data, typ.Offset)
		return fmt.Errorf("field %q: expected %s, got JSON %s (line %d, column %d)", field, goTypeToJSON(typ.Type.String()), typ.Value, line, col)
	}
	return err
}

func lineCol(data []byte, offset int64) (int, int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	line, col := 1, 1
	for _, c := range data[:offset] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

func goTypeToJSON(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "map["):
		return "an object"
	case t == "string" || strings.HasSuffix(t, "LenientString"):
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint") || strings.HasPrefix(t, "float"):
		return "a number"
	default:
		return "an object"
	}
}

func jsonKind(first byte) string {
	switch first {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

// The UnmarshalJSON methods below exist to give omitted fields Ranger's
// defaults: encoding/json leaves absent (and null) fields as they were before
// decoding, so the defaults are set first.

// UnmarshalJSON applies Ranger's defaults (policyVersion -1, audit-default).
func (sp *ServicePolicies) UnmarshalJSON(data []byte) error {
	if isNull(data) {
		return nil
	}
	type plain ServicePolicies
	v := plain{PolicyVersion: -1, AuditMode: AuditModeDefault}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*sp = ServicePolicies(v)
	return nil
}

// UnmarshalJSON applies Ranger's defaults (policyVersion -1, audit-default).
func (tp *TagPolicies) UnmarshalJSON(data []byte) error {
	if isNull(data) {
		return nil
	}
	type plain TagPolicies
	v := plain{PolicyVersion: -1, AuditMode: AuditModeDefault}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*tp = TagPolicies(v)
	return nil
}

// UnmarshalJSON applies Ranger's defaults (isEnabled and isAuditEnabled true).
func (p *RangerPolicy) UnmarshalJSON(data []byte) error {
	if isNull(data) {
		return nil
	}
	type plain RangerPolicy
	v := plain{IsEnabled: true, IsAuditEnabled: true}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*p = RangerPolicy(v)
	return nil
}

// UnmarshalJSON applies Ranger's default (isAllowed true).
func (a *RangerPolicyItemAccess) UnmarshalJSON(data []byte) error {
	if isNull(data) {
		return nil
	}
	type plain RangerPolicyItemAccess
	v := plain{IsAllowed: true}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*a = RangerPolicyItemAccess(v)
	return nil
}

// UnmarshalJSON applies Ranger's default (isEnabled true).
func (sd *RangerServiceDef) UnmarshalJSON(data []byte) error {
	if isNull(data) {
		return nil
	}
	type plain RangerServiceDef
	v := plain{IsEnabled: true}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*sd = RangerServiceDef(v)
	return nil
}

// UnmarshalJSON applies Ranger's default (tagVersion -1).
func (st *ServiceTags) UnmarshalJSON(data []byte) error {
	if isNull(data) {
		return nil
	}
	type plain ServiceTags
	v := plain{TagVersion: -1}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*st = ServiceTags(v)
	return nil
}

// UnmarshalJSON applies Ranger's default (roleVersion -1).
func (r *RangerRoles) UnmarshalJSON(data []byte) error {
	if isNull(data) {
		return nil
	}
	type plain RangerRoles
	v := plain{RoleVersion: -1}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*r = RangerRoles(v)
	return nil
}

// UnmarshalJSON applies Ranger's default (isEnabled true).
func (r *RangerRole) UnmarshalJSON(data []byte) error {
	if isNull(data) {
		return nil
	}
	type plain RangerRole
	v := plain{IsEnabled: true}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*r = RangerRole(v)
	return nil
}

// UnmarshalJSON applies Ranger's default (userStoreVersion -1).
func (us *RangerUserStore) UnmarshalJSON(data []byte) error {
	if isNull(data) {
		return nil
	}
	type plain RangerUserStore
	v := plain{UserStoreVersion: -1}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*us = RangerUserStore(v)
	return nil
}

// Timestamp is one of Ranger's informational dates. Ranger Admin writes
// epoch milliseconds; plugin cache files write "20190730-17:47:46.221--0700".
// A value in neither form leaves the zero time and Raw set: a date never
// makes a document unreadable.
type Timestamp struct {
	time.Time
	Raw string // the text as written, when it was a string
}

var timestampLayouts = []string{
	"20060102-15:04:05.000-Z0700", // Gson cache files: yyyyMMdd-HH:mm:ss.SSS-Z
	time.RFC3339Nano,
	"2006-01-02 15:04:05",
	"2006/01/02 15:04:05",
}

// UnmarshalJSON accepts epoch millis, the known string layouts, or anything
// else (ignored).
func (t *Timestamp) UnmarshalJSON(data []byte) error {
	*t = Timestamp{}
	s := strings.TrimSpace(string(data))
	if s == "" || s == "null" {
		return nil
	}
	if s[0] == '"' {
		var str string
		if json.Unmarshal(data, &str) != nil {
			return nil
		}
		t.Raw = str
		for _, layout := range timestampLayouts {
			if tm, err := time.Parse(layout, str); err == nil {
				t.Time = tm
				return nil
			}
		}
		if ms, err := strconv.ParseInt(str, 10, 64); err == nil {
			t.Time = time.UnixMilli(ms)
		}
		return nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		t.Time = time.UnixMilli(ms)
		return nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		t.Time = time.UnixMilli(int64(f))
	}
	return nil
}

// MarshalJSON writes epoch millis, as Ranger Admin does (null when unset).
func (t Timestamp) MarshalJSON() ([]byte, error) {
	if t.Time.IsZero() {
		if t.Raw != "" {
			return json.Marshal(t.Raw)
		}
		return []byte("null"), nil
	}
	return []byte(strconv.FormatInt(t.Time.UnixMilli(), 10)), nil
}

// StringMap is a Java Map<String,String> as Ranger serialises it. Values
// written as booleans or numbers ("wildCard": true in test files and older
// admins) are kept as their JSON text, so "true" and true read the same.
// Null values are dropped; nested objects or arrays keep their JSON text.
type StringMap map[string]string

// UnmarshalJSON reads an object of scalars.
func (m *StringMap) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	if raw == nil {
		*m = nil
		return nil
	}
	out := make(StringMap, len(raw))
	for k, v := range raw {
		s, ok := scalarText(v)
		if ok {
			out[k] = s
		}
	}
	*m = out
	return nil
}

// LenientString is a Java String field that some writers emit as a number
// (recurrence schedule fields such as "hour": 9).
type LenientString string

// UnmarshalJSON accepts a string, number or boolean.
func (s *LenientString) UnmarshalJSON(data []byte) error {
	str, ok := scalarText(data)
	if !ok {
		*s = ""
		return nil
	}
	*s = LenientString(str)
	return nil
}

func isNull(data []byte) bool {
	return string(bytes.TrimSpace(data)) == "null"
}

func scalarText(v json.RawMessage) (string, bool) {
	t := bytes.TrimSpace(v)
	if len(t) == 0 || string(t) == "null" {
		return "", false
	}
	if t[0] == '"' {
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return "", false
		}
		return s, true
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, t); err != nil {
		return string(t), true
	}
	return buf.String(), true
}
