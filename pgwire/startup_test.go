package pgwire

import (
	"bufio"
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/sqlrewrite"
)

func TestParseSearchPath(t *testing.T) {
	cases := map[string][]string{
		`"$user", public`:        {"$user", "public"},
		`sales,public`:           {"sales", "public"},
		`"My ""Odd"" Schema", x`: {`My "Odd" Schema`, "x"},
		``:                       {},
	}
	for in, want := range cases {
		if got := parseSearchPath(in); !reflect.DeepEqual(got, want) {
			t.Errorf("parseSearchPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStartupSettings(t *testing.T) {
	got, err := startupSettings(map[string]string{
		"user": "bob", "database": "demo", "client_encoding": "UTF8",
		"application_name": "psql", "DateStyle": "ISO",
		"options": `-c search_path=sales,public --statement-timeout=5s -c x=a\ b`,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"DateStyle", "ISO"}, {"application_name", "psql"},
		{"search_path", "sales,public"}, {"statement_timeout", "5s"}, {"x", "a b"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("settings = %q, want %q", got, want)
	}
	if _, err := startupSettings(map[string]string{"options": "-E"}); err == nil {
		t.Errorf("options -E must be refused")
	}
}

// Startup settings follow the list SET follows (sqlrewrite/settings.go):
// a refused one is a FATAL 42501 naming the setting and the user, with
// the hint an operator's entry answers; the rest pass.
func TestCheckStartupSettings(t *testing.T) {
	srv := NewServer(Options{Config: config.Default(),
		Rewriter: sqlrewrite.New(sqlrewrite.Options{AllowedSettings: []string{"enable_seqscan"}})})
	allowed, err := startupSettings(map[string]string{
		"application_name": "psql", "DateStyle": "ISO", "TimeZone": "UTC", "extra_float_digits": "3",
		"statement_timeout": "5s", "standard_conforming_strings": "on",
		"options": "-c search_path=sales,public -c row_security=off -c client_min_messages=warning -c enable_seqscan=off",
	})
	if err != nil {
		t.Fatal(err)
	}
	if fe := srv.checkStartupSettings("bob", allowed); fe != nil {
		t.Errorf("%v", fe)
	}
	for opts, want := range map[string]fatalError{
		"-c debug_print_plan=on": {code: "42501", msg: `pgranger: setting debug_print_plan cannot be changed through pgranger (user "bob")`,
			hint: "An operator can allow it with policy.allowed-settings."},
		"--enable-hashjoin=off": {code: "42501", msg: `pgranger: setting enable_hashjoin cannot be changed through pgranger (user "bob")`,
			hint: "An operator can allow it with policy.allowed-settings."},
		"-c client_min_messages=log": {code: "42501", msg: `pgranger: setting client_min_messages cannot be set to 'log' through pgranger (user "bob")`,
			hint: "Allowed values: info, notice, warning, error."},
		"-c role=postgres":                   {code: "42501", msg: `pgranger: setting role cannot be changed through pgranger (user "bob")`},
		"-c session_authorization=postgres":  {code: "42501", msg: `pgranger: setting session_authorization cannot be changed through pgranger (user "bob")`},
		"-c client_encoding=LATIN1":          {code: "42501", msg: `pgranger: setting client_encoding cannot be changed through pgranger (user "bob")`},
		"-c standard_conforming_strings=off": {code: "42501", msg: `pgranger: setting standard_conforming_strings cannot be changed through pgranger (user "bob")`},
	} {
		settings, err := startupSettings(map[string]string{"options": opts})
		if err != nil {
			t.Fatal(err)
		}
		fe := srv.checkStartupSettings("bob", settings)
		if fe == nil || *fe != want {
			t.Errorf("%s: %+v, want %+v", opts, fe, want)
		}
	}
	// A startup parameter is a setting like an options one.
	if fe := srv.checkStartupSettings("bob", [][2]string{{"trace_sort", "on"}}); fe == nil || fe.code != "42501" {
		t.Errorf("trace_sort=on: %v, want 42501", fe)
	}
	// The client gets the hint with the FATAL error.
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	writeError(w, "FATAL", &fatalError{code: "42501", msg: "m", hint: "h"})
	w.Flush()
	got := decode(t, buf.Bytes()[5:])
	if got.Severity != "FATAL" || got.Code != "42501" || got.Message != "m" || got.Hint != "h" {
		t.Errorf("written: %+v", got)
	}
}

func TestSanitizeError(t *testing.T) {
	// A governed statement's errors lose DETAIL; data exceptions lose their message.
	orig := encodeError(denialResponse(backendError("23505", "duplicate key value violates unique constraint", "Key (ssn)=(111-11-1111) already exists.")))
	got := decode(t, sanitizeError(orig))
	if got.Detail != "" || got.Code != "23505" || got.Message != "duplicate key value violates unique constraint" {
		t.Errorf("sanitized: %+v", got)
	}
	orig = encodeError(denialResponse(backendError("22P02", `invalid input syntax for type integer: "111-11-1111"`, "")))
	got = decode(t, sanitizeError(orig))
	if got.Code != "22P02" || got.Message == "" || strings.Contains(got.Message, "111-11-1111") {
		t.Errorf("data exception must not quote the value: %+v", got)
	}
}

func backendError(code, msg, detail string) *sqlrewrite.Error {
	return &sqlrewrite.Error{Code: code, Message: msg, Detail: detail}
}

func decode(t *testing.T, body []byte) pgproto3.ErrorResponse {
	t.Helper()
	var er pgproto3.ErrorResponse
	if err := er.Decode(body); err != nil {
		t.Fatal(err)
	}
	return er
}
