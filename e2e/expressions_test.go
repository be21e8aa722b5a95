package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// tagexTags tags the table tagex.accounts REGIONAL (with a hostile
// attribute) and its column iban PII.
const tagexTags = `{"serviceName": "demo_hive", "tagVersion": 1,
 "tags": {
   "1": {"type": "REGIONAL", "attributes": {"region": "EU", "motto": "x' OR 'a'='a"}},
   "2": {"type": "PII", "attributes": {"level": "high"}}
 },
 "serviceResources": [
   {"id": 10, "resourceElements": {"database": {"values": ["tagex"]}, "table": {"values": ["accounts"]}}},
   {"id": 11, "resourceElements": {"database": {"values": ["tagex"]}, "table": {"values": ["accounts"]}, "column": {"values": ["iban"]}}}
 ],
 "resourceToTagIds": {"10": [1], "11": [2]}
}`

// tagexTagPolicies: a row filter on REGIONAL reading the current tag's
// attributes, and a CUSTOM mask on PII reading the tag's level and type.
const tagexTagPolicies = `{"serviceName": "demo_tag", "policyVersion": 1,
 "serviceDef": {"name": "tag", "id": 100,
   "resources": [{"name": "tag", "level": 1, "matcher": "org.apache.ranger.plugin.resourcematcher.RangerDefaultResourceMatcher",
                  "matcherOptions": {"wildCard": "false", "ignoreCase": "false"}}],
   "accessTypes": [{"name": "hive:select"}],
   "dataMaskDef": {"maskTypes": [{"name": "hive:CUSTOM"}], "accessTypes": [{"name": "hive:select"}],
                   "resources": [{"name": "tag", "matcherOptions": {"wildCard": "false", "ignoreCase": "false"}}]},
   "rowFilterDef": {"accessTypes": [{"name": "hive:select"}],
                    "resources": [{"name": "tag", "matcherOptions": {"wildCard": "false", "ignoreCase": "false"}}]}},
 "policies": [
  {"id": 700, "name": "regional rows", "isEnabled": true, "policyType": 2, "resources": {"tag": {"values": ["REGIONAL"]}},
   "rowFilterPolicyItems": [{"accesses": [{"type": "hive:select", "isAllowed": true}], "groups": ["public"],
     "rowFilterInfo": {"filterExpr": "region = '${{TAG.region}}' AND note <> ${{TAG.motto}}"}}]},
  {"id": 600, "name": "PII by level", "isEnabled": true, "policyType": 1, "resources": {"tag": {"values": ["PII"]}},
   "dataMaskPolicyItems": [{"accesses": [{"type": "hive:select", "isAllowed": true}], "groups": ["public"],
     "dataMaskInfo": {"dataMaskType": "hive:CUSTOM",
       "valueExpr": "CASE WHEN ${{TAG.level}} = 'high' THEN left({col}, 4) || '-' || ${{TAG._type + '/' + TAG._matchType}} ELSE {col} END"}}]}
 ]
}`

// TestTagExpressionsThroughProxy: a tag-based row filter using
// ${{TAG.attr}} and a tag-based CUSTOM mask, from a tags file, through the
// built proxy against real PostgreSQL.
func TestTagExpressionsThroughProxy(t *testing.T) {
	requireCluster(t)
	ctx := context.Background()
	if err := cluster.Exec(ctx, "demo", `
CREATE SCHEMA IF NOT EXISTS tagex;
GRANT USAGE ON SCHEMA tagex TO pgranger_svc;
DROP TABLE IF EXISTS tagex.accounts;
CREATE TABLE tagex.accounts (id int, region text, iban text, note text);
INSERT INTO tagex.accounts VALUES
  (1, 'EU', 'DE89370400440532013000', 'ok'),
  (2, 'US', 'US64SVBKUS6S3300958879', 'ok'),
  (3, 'EU', 'FR7630006000011234567890189', 'ok'),
  (4, 'EU', 'NL91ABNA0417164300', 'x'' OR ''a''=''a'),
  (5, 'APAC', 'SG0000000000000000000', 'ok');
GRANT SELECT ON tagex.accounts TO pgranger_svc;`); err != nil {
		t.Fatal(err)
	}
	doc := demoPolicies(t)
	doc.add(accessPolicy(960, "tagex", "*", "*", []string{"public"}))
	var tp map[string]any
	if err := json.Unmarshal([]byte(tagexTagPolicies), &tp); err != nil {
		t.Fatal(err)
	}
	doc["tagPolicies"] = tp
	p := startProxy(t, proxyOptions{policies: doc.bytes(t), tags: []byte(tagexTags)})

	conn := connect(t, p, "bob")
	const q = "SELECT id, region, iban, note FROM tagex.accounts ORDER BY id"
	// EU rows only (TAG.region), and not the row whose note equals the
	// hostile attribute: it stayed one string.
	want := []string{"1|EU|DE89-PII/SELF|ok", "3|EU|FR76-PII/SELF|ok"}
	equalLines(t, "extended protocol", rows(t, conn, q), want)
	equalLines(t, "simple protocol", rows(t, conn, q, pgx.QueryExecModeSimpleProtocol), want)
	equalLines(t, "count", rows(t, conn, "SELECT count(*) FROM tagex.accounts"), []string{"2"})
	// The mask keeps the column's type.
	equalLines(t, "type", rows(t, conn, "SELECT pg_typeof(iban)::text FROM tagex.accounts LIMIT 1"), []string{"text"})

	// An expression that would depend on the client denies the table.
	doc = demoPolicies(t)
	doc.add(accessPolicy(960, "tagex", "*", "*", []string{"public"}))
	tp["policies"].([]any)[0].(map[string]any)["rowFilterPolicyItems"].([]any)[0].(map[string]any)["rowFilterInfo"] =
		map[string]any{"filterExpr": "region = ${{REQ.clientIPAddress}}"}
	doc["tagPolicies"] = tp
	p.writePolicies(t, doc.bytes(t))
	eventually(t, 5*time.Second, func() string {
		_, err := tryRows(conn, q)
		if sqlstate(err) != "42501" || !strings.Contains(err.Error(), "REQ.clientIPAddress is not available") {
			return "a filter reading REQ.clientIPAddress must deny the table, got " + errString(err)
		}
		return ""
	})
}
