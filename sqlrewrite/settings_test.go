package sqlrewrite

import (
	"os"
	"strings"
	"testing"

	"github.com/pgranger/pgranger/sqlstate"
)

// The settings list decides exactly what a user is told: the SQLSTATE,
// the message naming setting and user, and the hint an operator's entry
// would answer.
func TestSettingsListDecisions(t *testing.T) {
	type want struct{ msg, hint string }
	cases := []struct {
		name    string
		allowed []string // policy.allowed-settings
		change  settingChange
		want    *want // nil: allowed
	}{
		{"not on the list", nil, settingChange{name: "debug_print_plan", value: "on", known: true},
			&want{`pgranger: setting debug_print_plan cannot be changed through pgranger (user "teller")`, "An operator can allow it with policy.allowed-settings."}},
		{"not on the list, through set_config", nil, settingChange{name: "enable_seqscan", value: "off", known: true, setConfig: true},
			&want{`pgranger: setting enable_seqscan cannot be changed through pgranger (user "teller")`, "An operator can allow it with policy.allowed-settings."}},
		{"a custom placeholder", nil, settingChange{name: "myapp.tenant", value: "42", known: true},
			&want{`pgranger: setting myapp.tenant cannot be changed through pgranger (user "teller")`, "An operator can allow it with policy.allowed-settings."}},
		{"RESET of a setting not on the list", nil, settingChange{name: "enable_seqscan", reset: true}, nil},
		{"a setting on the list", nil, settingChange{name: "datestyle", value: "ISO, DMY", known: true}, nil},
		{"a setting on the list, computed", nil, settingChange{name: "timezone", setConfig: true}, nil},
		{"client_min_messages log", nil, settingChange{name: "client_min_messages", value: "log", known: true},
			&want{`pgranger: setting client_min_messages cannot be set to 'log' through pgranger (user "teller")`, "Allowed values: info, notice, warning, error."}},
		{"client_min_messages DEBUG5", nil, settingChange{name: "client_min_messages", value: "DEBUG5", known: true},
			&want{`pgranger: setting client_min_messages cannot be set to 'DEBUG5' through pgranger (user "teller")`, "Allowed values: info, notice, warning, error."}},
		{"client_min_messages with a quote", nil, settingChange{name: "client_min_messages", value: "it's", known: true},
			&want{`pgranger: setting client_min_messages cannot be set to 'it''s' through pgranger (user "teller")`, "Allowed values: info, notice, warning, error."}},
		{"client_min_messages computed", nil, settingChange{name: "client_min_messages", setConfig: true},
			&want{`pgranger: setting client_min_messages can only be set to one constant value through pgranger (user "teller")`, "Allowed values: info, notice, warning, error."}},
		{"client_min_messages Warning", nil, settingChange{name: "client_min_messages", value: "Warning", known: true}, nil},
		{"client_min_messages RESET", nil, settingChange{name: "client_min_messages", reset: true}, nil},
		{"client_min_messages log with an operator's entry", []string{"client_min_messages"}, settingChange{name: "client_min_messages", value: "log", known: true},
			&want{`pgranger: setting client_min_messages cannot be set to 'log' through pgranger (user "teller")`, "Allowed values: info, notice, warning, error."}},
		{"client_encoding utf-8", nil, settingChange{name: "client_encoding", value: "utf-8", known: true}, nil},
		{"client_encoding LATIN1", nil, settingChange{name: "client_encoding", value: "LATIN1", known: true},
			&want{`pgranger: setting client_encoding cannot be changed through pgranger (user "teller")`, ""}},
		{"RESET client_encoding", nil, settingChange{name: "client_encoding", reset: true},
			&want{`pgranger: setting client_encoding cannot be changed through pgranger (user "teller")`, ""}},
		{"set_config on standard_conforming_strings on", nil, settingChange{name: "standard_conforming_strings", value: "on", known: true, setConfig: true},
			&want{`pgranger: set_config on standard_conforming_strings is not allowed through pgranger; use SET (user "teller")`, ""}},
		{"role", nil, settingChange{name: "role", value: "postgres", known: true},
			&want{`pgranger: setting role cannot be changed through pgranger (user "teller")`, ""}},
		{"role with an operator's entry", []string{"role"}, settingChange{name: "role", value: "postgres", known: true},
			&want{`pgranger: setting role cannot be changed through pgranger (user "teller")`, ""}},
		{"an operator's entry", []string{"Enable_SeqScan"}, settingChange{name: "enable_seqscan", value: "off", known: true}, nil},
		{"an operator's prefix", []string{"myapp.*"}, settingChange{name: "myapp.tenant", value: "42", known: true}, nil},
		{"an operator's prefix, nested", []string{"myapp.*"}, settingChange{name: "myapp.a.b", value: "42", known: true}, nil},
		{"an operator's prefix alone", []string{"myapp.*"}, settingChange{name: "myapp.", value: "42", known: true},
			&want{`pgranger: setting myapp. cannot be changed through pgranger (user "teller")`, "An operator can allow it with policy.allowed-settings."}},
		{"an operator's prefix is not a longer name's", []string{"myapp.*"}, settingChange{name: "myapplication.tenant", value: "42", known: true},
			&want{`pgranger: setting myapplication.tenant cannot be changed through pgranger (user "teller")`, "An operator can allow it with policy.allowed-settings."}},
		{"a star alone opens nothing", []string{"*"}, settingChange{name: "work_mem", value: "1GB", known: true},
			&want{`pgranger: setting work_mem cannot be changed through pgranger (user "teller")`, "An operator can allow it with policy.allowed-settings."}},
	}
	for _, c := range cases {
		c.change.user = "teller"
		got := newSettingsList(c.allowed).check(c.change)
		switch {
		case c.want == nil && got != nil:
			t.Errorf("%s: refused: %v", c.name, got)
		case c.want != nil && got == nil:
			t.Errorf("%s: allowed, want %q", c.name, c.want.msg)
		case c.want != nil && (got.Code != sqlstate.InsufficientPrivilege || got.Message != c.want.msg || got.Hint != c.want.hint):
			t.Errorf("%s:\n got %s %q hint %q\nwant 42501 %q hint %q", c.name, got.Code, got.Message, got.Hint, c.want.msg, c.want.hint)
		}
	}
}

// A startup setting (a parameter, or -c in options) follows the same list.
func TestCheckStartupSetting(t *testing.T) {
	rw := New(Options{AllowedSettings: []string{"enable_seqscan"}})
	for _, ok := range [][2]string{{"DateStyle", "ISO"}, {"TimeZone", "Europe/Berlin"}, {"extra_float_digits", "3"},
		{"application_name", "psql"}, {"statement_timeout", "5s"}, {"search_path", "sales,public"},
		{"standard_conforming_strings", "on"}, {"client_encoding", "UTF8"}, {"client_min_messages", "WARNING"}, {"enable_seqscan", "off"}} {
		if err := rw.CheckStartupSetting("teller", ok[0], ok[1]); err != nil {
			t.Errorf("%s=%s: %v", ok[0], ok[1], err)
		}
	}
	for _, bad := range []struct{ name, value, msg string }{
		{"debug_print_plan", "on", `pgranger: setting debug_print_plan cannot be changed through pgranger (user "teller")`},
		{"Debug_Print_Plan", "on", `pgranger: setting debug_print_plan cannot be changed through pgranger (user "teller")`},
		{"client_min_messages", "log", `pgranger: setting client_min_messages cannot be set to 'log' through pgranger (user "teller")`},
		{"standard_conforming_strings", "off", `pgranger: setting standard_conforming_strings cannot be changed through pgranger (user "teller")`},
		{"role", "postgres", `pgranger: setting role cannot be changed through pgranger (user "teller")`},
		{"session_authorization", "postgres", `pgranger: setting session_authorization cannot be changed through pgranger (user "teller")`},
	} {
		err := rw.CheckStartupSetting("teller", bad.name, bad.value)
		if err == nil || err.Code != sqlstate.InsufficientPrivilege || err.Message != bad.msg {
			t.Errorf("%s=%s: %v, want 42501 %q", bad.name, bad.value, err, bad.msg)
		}
	}
}

// Every name is on the list once, and its group says why.
func TestSettingsListIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range builtinSettings {
		if len(g.names) == 0 || g.why == "" || g.allows == "" {
			t.Errorf("group %v: names, allows and why must be set", g.names)
		}
		if (g.rule == someValues || g.rule == sessionValue) != (len(g.values) > 0) {
			t.Errorf("group %v: values go with someValues and sessionValue only", g.names)
		}
		for _, n := range g.names {
			if seen[strings.ToLower(n)] {
				t.Errorf("%s is listed twice", n)
			}
			seen[strings.ToLower(n)] = true
		}
	}
}

// settingsTable renders builtinSettings as docs/security.md shows it.
func settingsTable() string {
	var b strings.Builder
	b.WriteString("| settings | values | why they are safe, and who sets them |\n|---|---|---|\n")
	for _, g := range builtinSettings {
		names := make([]string, len(g.names))
		for i, n := range g.names {
			names[i] = "`" + n + "`"
		}
		b.WriteString("| " + strings.Join(names, ", ") + " | " + g.allows + " | " + g.why + " |\n")
	}
	return b.String()
}

// docs/security.md "Allowed settings" is the list in the code, row for
// row, so the two cannot drift.
func TestAllowedSettingsDocumented(t *testing.T) {
	data, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	_, section, ok := strings.Cut(text, "\n## Allowed settings\n")
	if !ok {
		t.Fatal(`docs/security.md has no "## Allowed settings" section`)
	}
	start := strings.Index(section, "\n| settings |")
	if start < 0 {
		t.Fatal(`docs/security.md "Allowed settings" has no table`)
	}
	table := section[start+1:]
	if end := strings.Index(table, "\n\n"); end >= 0 {
		table = table[:end+1]
	}
	if want := settingsTable(); table != want {
		t.Errorf("docs/security.md \"Allowed settings\" differs from builtinSettings; the table should read:\n%s", want)
	}
}
