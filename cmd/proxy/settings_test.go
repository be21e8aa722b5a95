package main

import (
	"slices"
	"testing"

	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/sqlrewrite"
)

// The settings config refuses in policy.allowed-settings are exactly those
// whose rules the rewriter keeps whatever an entry says: config cannot
// import sqlrewrite, so the binary that joins them checks the two lists.
func TestSettingsWithOwnRulesAgree(t *testing.T) {
	got := slices.Sorted(slices.Values(config.SettingsWithOwnRules))
	want := slices.Sorted(slices.Values(sqlrewrite.FixedSettings()))
	if !slices.Equal(got, want) {
		t.Errorf("config.SettingsWithOwnRules = %q, sqlrewrite.FixedSettings() = %q", got, want)
	}
}
