package policy

import (
	"encoding/json"

	"github.com/pgranger/pgranger/ranger"
)

// The stock hive service-def (apache/ranger's
// agents-common/src/main/resources/service-defs/ranger-servicedef-hive.json)
// fills in what a bundle leaves out: the whole service-def
// when a hand-written policy file has none, and the matcherOptions of a hive
// resource that carries none.

func stockHiveResource(name string) *ranger.RangerResourceDef {
	for i := range stockHive.Resources {
		if stockHive.Resources[i].Name == name {
			return &stockHive.Resources[i]
		}
	}
	return nil
}

// StockHiveServiceDef returns a copy of the stock hive service-def, for
// bundles written by hand without one.
func StockHiveServiceDef() *ranger.RangerServiceDef {
	// A JSON round trip is the simplest deep copy; callers may modify it.
	data, err := json.Marshal(&stockHive)
	if err != nil {
		panic(err)
	}
	var c ranger.RangerServiceDef
	if err := json.Unmarshal(data, &c); err != nil {
		panic(err)
	}
	return &c
}

var (
	stockTrue = true
	stockOpts = func(wild, ignoreCase string) ranger.StringMap {
		return ranger.StringMap{"wildCard": wild, "ignoreCase": ignoreCase}
	}
	noWildcard = func() ranger.StringMap { return ranger.StringMap{"wildCard": "false"} }
	defMatcher = "org.apache.ranger.plugin.resourcematcher.RangerDefaultResourceMatcher"
)

var stockHive = ranger.RangerServiceDef{
	ID:        3,
	Name:      "hive",
	IsEnabled: true,
	Resources: []ranger.RangerResourceDef{
		{ItemID: 1, Name: "database", Level: 10, Mandatory: true, ExcludesSupported: true, Matcher: defMatcher, MatcherOptions: stockOpts("true", "true"), IsValidLeaf: &stockTrue},
		{ItemID: 2, Name: "table", Level: 20, Parent: "database", Mandatory: true, ExcludesSupported: true, Matcher: defMatcher, MatcherOptions: stockOpts("true", "true"), IsValidLeaf: &stockTrue},
		{ItemID: 3, Name: "udf", Level: 20, Parent: "database", Mandatory: true, ExcludesSupported: true, Matcher: defMatcher, MatcherOptions: stockOpts("true", "true"), IsValidLeaf: &stockTrue},
		{ItemID: 4, Name: "column", Level: 30, Parent: "table", Mandatory: true, ExcludesSupported: true, Matcher: defMatcher, MatcherOptions: stockOpts("true", "true"), IsValidLeaf: &stockTrue},
		{ItemID: 5, Name: "url", Level: 10, Mandatory: true, RecursiveSupported: true, Matcher: "org.apache.ranger.plugin.resourcematcher.RangerURLResourceMatcher", MatcherOptions: stockOpts("true", "false"), IsValidLeaf: &stockTrue},
		{ItemID: 6, Name: "hiveservice", Level: 10, Mandatory: true, Matcher: defMatcher, MatcherOptions: stockOpts("true", "false"), IsValidLeaf: &stockTrue},
		{ItemID: 7, Name: "global", Level: 10, Mandatory: true, Matcher: defMatcher, MatcherOptions: stockOpts("true", "false"), IsValidLeaf: &stockTrue},
	},
	AccessTypes: []ranger.RangerAccessTypeDef{
		{ItemID: 1, Name: "select", Category: "READ"},
		{ItemID: 2, Name: "update", Category: "UPDATE"},
		{ItemID: 3, Name: "create", Category: "CREATE"},
		{ItemID: 4, Name: "drop", Category: "DELETE"},
		{ItemID: 5, Name: "alter", Category: "CREATE"},
		{ItemID: 6, Name: "index", Category: "MANAGE"},
		{ItemID: 7, Name: "lock", Category: "MANAGE"},
		{ItemID: 8, Name: "all", ImpliedGrants: []string{"select", "update", "create", "drop", "alter", "index", "lock", "read", "write", "repladmin", "serviceadmin", "refresh"}},
		{ItemID: 9, Name: "read", Category: "READ"},
		{ItemID: 10, Name: "write", Category: "UPDATE"},
		{ItemID: 11, Name: "repladmin", Category: "MANAGE"},
		{ItemID: 12, Name: "serviceadmin", Category: "MANAGE"},
		{ItemID: 13, Name: "tempudfadmin", Category: "MANAGE"},
		{ItemID: 14, Name: "refresh", Category: "MANAGE"},
	},
	DataMaskDef: &ranger.RangerDataMaskDef{
		MaskTypes: []ranger.RangerDataMaskTypeDef{
			{ItemID: 1, Name: ranger.MaskTypeMask, Label: "Redact", Transformer: "mask({col})"},
			{ItemID: 2, Name: ranger.MaskTypeShowLast4, Label: "Partial mask: show last 4", Transformer: "mask_show_last_n({col}, 4, 'x', 'x', 'x', -1, '1')"},
			{ItemID: 3, Name: ranger.MaskTypeShowFirst4, Label: "Partial mask: show first 4", Transformer: "mask_show_first_n({col}, 4, 'x', 'x', 'x', -1, '1')"},
			{ItemID: 4, Name: ranger.MaskTypeHash, Label: "Hash", Transformer: "mask_hash({col})"},
			{ItemID: 5, Name: ranger.MaskTypeNull, Label: "Nullify"},
			{ItemID: 6, Name: ranger.MaskTypeNone, Label: "Unmasked (retain original value)"},
			{ItemID: 12, Name: ranger.MaskTypeDateShowYear, Label: "Date: show only year", Transformer: "mask({col}, 'x', 'x', 'x', -1, '1', 1, 0, -1)"},
			{ItemID: 13, Name: ranger.MaskTypeCustom, Label: "Custom"},
		},
		AccessTypes: []ranger.RangerAccessTypeDef{{Name: "select"}},
		Resources: []ranger.RangerResourceDef{
			{Name: "database", MatcherOptions: noWildcard()},
			{Name: "table", MatcherOptions: noWildcard()},
			{Name: "column", MatcherOptions: noWildcard()},
		},
	},
	RowFilterDef: &ranger.RangerRowFilterDef{
		AccessTypes: []ranger.RangerAccessTypeDef{{Name: "select"}},
		Resources: []ranger.RangerResourceDef{
			{Name: "database", MatcherOptions: noWildcard()},
			{Name: "table", MatcherOptions: noWildcard()},
		},
	},
}
