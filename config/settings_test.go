package config

import (
	"reflect"
	"testing"
)

// policy.allowed-settings: names and <prefix>.* entries, from the file
// or the environment; what is not a name, and the settings whose rules
// pgranger keeps, are refused with the key named.
func TestAllowedSettings(t *testing.T) {
	c, err := Load(write(t, minimal), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Policy.AllowedSettings) != 0 {
		t.Errorf("default allowed-settings = %q, want none", c.Policy.AllowedSettings)
	}
	c, err = Load(write(t, minimal+"\n[policy]\nallowed-settings = [\"enable_seqscan\", \"myapp.*\", \"Work_Mem\"]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (StringList{"enable_seqscan", "myapp.*", "Work_Mem"}); !reflect.DeepEqual(c.Policy.AllowedSettings, want) {
		t.Errorf("allowed-settings = %q, want %q", c.Policy.AllowedSettings, want)
	}
	c, err = Load(write(t, minimal), []string{"PGRANGER_POLICY__ALLOWED_SETTINGS=jit,myapp.*"})
	if err != nil || !reflect.DeepEqual(c.Policy.AllowedSettings, StringList{"jit", "myapp.*"}) {
		t.Errorf("env override: %v, %q", err, c.Policy.AllowedSettings)
	}
	for entry, msg := range map[string]string{
		"*":                   `policy.allowed-settings: "*" is not a setting name (letters, digits and _, parts joined by dots) or <prefix>.* for custom placeholders`,
		"enable_*":            `policy.allowed-settings: "enable_*" is not a setting name (letters, digits and _, parts joined by dots) or <prefix>.* for custom placeholders`,
		"work mem":            `policy.allowed-settings: "work mem" is not a setting name (letters, digits and _, parts joined by dots) or <prefix>.* for custom placeholders`,
		"":                    `policy.allowed-settings: "" is not a setting name (letters, digits and _, parts joined by dots) or <prefix>.* for custom placeholders`,
		"Role":                `policy.allowed-settings: Role keeps pgranger's own rules (docs/security.md "Allowed settings"); an entry cannot change them`,
		"client_min_messages": `policy.allowed-settings: client_min_messages keeps pgranger's own rules (docs/security.md "Allowed settings"); an entry cannot change them`,
	} {
		path := write(t, minimal+"\n[policy]\nallowed-settings = [\""+entry+"\"]\n")
		_, err := Load(path, nil)
		if err == nil || err.Error() != msg {
			t.Errorf("allowed-settings = [%q]: %v\nwant %s", entry, err, msg)
		}
	}
}
