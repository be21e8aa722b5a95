package pgwire

import (
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

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
	for _, bad := range []map[string]string{
		{"options": "-c role=postgres"},
		{"options": "-c session_authorization=postgres"},
		{"options": "-c client_encoding=LATIN1"},
		{"standard_conforming_strings": "off"},
		{"options": "-E"},
	} {
		if _, err := startupSettings(bad); err == nil {
			t.Errorf("startupSettings(%v) must be refused", bad)
		}
	}
	if _, err := startupSettings(map[string]string{"standard_conforming_strings": "on"}); err != nil {
		t.Errorf("standard_conforming_strings=on is what pgranger runs with: %v", err)
	}
	// row_security = off can only turn a filtered read into an error
	// (docs/decisions.md), so it is not protected.
	if _, err := startupSettings(map[string]string{"options": "-c row_security=off"}); err != nil {
		t.Errorf("row_security=off: %v", err)
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
