package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/pgranger/pgranger/ranger"
)

// A tag service-def naming a file-based tag retriever: the engine reads
// the ServiceTags document through Options.ReadTagFile; it fails to build
// when it cannot (no reader, unreadable, unparsable), and bundle tags win.
func TestFileTagEnricher(t *testing.T) {
	tagDef := stockTagDefForTest()
	tagDef.ContextEnrichers = []ranger.RangerContextEnricherDef{{Name: "TagEnricher", Enricher: tagEnricherClass,
		EnricherOptions: ranger.StringMap{"tagRetrieverClassName": fileTagRetrieverClass, serviceTagsFileNameOpt: "/policyengine/tags.json"}}}
	bundle := func() *ranger.Bundle {
		return &ranger.Bundle{Policies: &ranger.ServicePolicies{ServiceName: "hive",
			Policies: []ranger.RangerPolicy{{ID: 1, IsEnabled: true, Resources: map[string]ranger.RangerPolicyResource{
				"database": {Values: []string{"*"}}, "table": {Values: []string{"*"}}, "column": {Values: []string{"*"}}},
				PolicyItems: []ranger.RangerPolicyItem{{Accesses: []ranger.RangerPolicyItemAccess{{Type: "select", IsAllowed: true}}, Groups: []string{"public"}}}}},
			TagPolicies: &ranger.TagPolicies{ServiceName: "tags", ServiceDef: tagDef, Policies: []ranger.RangerPolicy{{ID: 9, IsEnabled: true,
				Resources:       map[string]ranger.RangerPolicyResource{"tag": {Values: []string{"PII"}}},
				DenyPolicyItems: []ranger.RangerPolicyItem{{Accesses: []ranger.RangerPolicyItemAccess{{Type: "hive:select", IsAllowed: true}}, Groups: []string{"public"}}}}}},
		}}
	}
	const doc = `{"serviceName": "hive", "tags": {"1": {"id": 1, "type": "PII"}},
		"serviceResources": [{"id": 1, "resourceElements": {"database": {"values": ["hr"]}}}], "resourceToTagIds": {"1": [1]}}`
	var asked string
	e, err := NewEngine(bundle(), Options{ReadTagFile: func(name string) ([]byte, error) { asked = name; return []byte(doc), nil }})
	if err != nil {
		t.Fatal(err)
	}
	if asked != "/policyengine/tags.json" {
		t.Errorf("asked for %q", asked)
	}
	// The tag on the database reaches its columns: the tag policy denies.
	if d := e.Access(subj("bob"), res("hr", "emp", "salary"), "select", t0); d.Allowed || d.PolicyID != 9 {
		t.Errorf("tagged column: %+v", d)
	}
	if d := e.Access(subj("bob"), res("sales", "t", "c"), "select", t0); !d.Allowed {
		t.Errorf("untagged column: %+v", d)
	}

	for name, opts := range map[string]Options{
		"no reader":  {},
		"unreadable": {ReadTagFile: func(string) ([]byte, error) { return nil, errors.New("gone") }},
		"unparsable": {ReadTagFile: func(string) ([]byte, error) { return []byte("{"), nil }},
		"not a tags": {ReadTagFile: func(string) ([]byte, error) { return []byte("null"), nil }},
	} {
		if _, err := NewEngine(bundle(), opts); err == nil || !strings.Contains(err.Error(), "tags.json") {
			t.Errorf("%s: %v", name, err)
		}
	}
	b := bundle()
	b.Tags = &ranger.ServiceTags{}
	if _, err := NewEngine(b, Options{}); err != nil {
		t.Errorf("bundle tags: %v", err)
	}
}
