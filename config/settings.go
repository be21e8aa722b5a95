package config

import (
	"regexp"
	"strings"
)

// settingEntry is a setting name as PostgreSQL spells them (letters,
// digits, _ and $, parts joined by dots), or "<prefix>.*": every custom
// placeholder of one application's namespace. Anything broader ("*",
// "enable_*") would open settings nobody reviewed.
var settingEntry = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)*(\.\*)?$`)

// SettingsWithOwnRules are the settings whose rules pgranger fixes and
// an entry of policy.allowed-settings cannot change: the parser's
// assumptions, whose privileges apply, the tracked search_path and the
// client_min_messages values that keep LOG and DEBUG messages away
// (sqlrewrite.FixedSettings, kept equal by cmd/proxy's tests).
var SettingsWithOwnRules = []string{
	"search_path", "client_min_messages", "client_encoding", "standard_conforming_strings", "role", "session_authorization",
}

func validateAllowedSettings(entries []string, bad func(key, format string, args ...any)) {
	for _, e := range entries {
		if !settingEntry.MatchString(e) {
			bad("policy.allowed-settings", "%q is not a setting name (letters, digits and _, parts joined by dots) or <prefix>.* for custom placeholders", e)
			continue
		}
		for _, own := range SettingsWithOwnRules {
			if strings.EqualFold(e, own) {
				bad("policy.allowed-settings", "%s keeps pgranger's own rules (docs/security.md \"Allowed settings\"); an entry cannot change them", e)
			}
		}
	}
}
