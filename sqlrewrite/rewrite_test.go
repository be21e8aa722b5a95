package sqlrewrite

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
)

// Golden-file tests of the rewriter. Each testdata/rewrite/NAME.sql holds
// cases:
//
//	-- case: what it shows
//	-- user: bob            (a user of testSubjects)
//	-- search_path: sales, public   (optional)
//	-- pg: why PostgreSQL sees a difference  (optional, see TestRewriteGoldenPostgres)
//	-- options: apply, ddl   (optional: policy.dml-row-filter = "apply", policy.allow-ddl,
//	                          allow-setting=NAME: NAME in policy.allowed-settings)
//	SELECT …;               (one SQL text, up to the next "-- case:")
//
// and NAME.golden holds, per case, the SQL pgranger sends to the backend
// or the denial ("ERROR 42501: …"). Run `go test ./sqlrewrite -update` to
// regenerate the golden files, then read the diff.
//
// For readability, each mask expression MaskSQL builds for a catalog column
// is shown as <MASK_TYPE(column)> in the golden files (the expressions
// themselves are tested in mask_test.go and mask_pg_test.go); typed NULLs
// and CUSTOM masks are shown as sent. Every rewritten text must parse again
// (checked here), and TestRewriteGoldenPostgres runs every case against a
// real PostgreSQL holding testCatalog's relations.
var update = flag.Bool("update", false, "rewrite the golden files")

// testSubjects are the identities golden cases run as.
var testSubjects = map[string]*policy.Subject{
	"alice": {User: "alice", Groups: []string{"compliance"}, Roles: []string{"auditor"}},
	"bob":   {User: "bob", Groups: []string{"analysts"}, Roles: []string{"analyst"}, Attributes: map[string]string{"region": "US"}},
	"carol": {User: "carol", Groups: []string{"support"}, Roles: []string{"support"}, Attributes: map[string]string{"region": "EU"}},
	"eve":   {User: "eve", Groups: []string{"analysts"}, Attributes: map[string]string{"region": "x' OR '1'='1"}},
	"admin": {User: "admin"},
	"dave":  {User: "dave", Groups: []string{"analysts"}},
	"frank": {User: "frank", Groups: []string{"analysts"}},
}

func col(name string, oid uint32, typ string) catalog.Column {
	return catalog.Column{Name: name, TypeOID: oid, BaseOID: oid, TypMod: -1, TypeName: typ}
}

// testCatalog mirrors examples/demo/schema.sql plus relations for shapes
// the demo lacks (partitions, a view, a system relation).
func testCatalog() *catalog.Snapshot {
	return catalog.Static(1, testRelations(), testCatalogFunctions)
}

// testCatalogFunctions are the pg_catalog function names the test catalog
// knows (a real snapshot has all of them).
var testCatalogFunctions = []string{"count", "lower", "upper", "now", "regexp_replace", "sha256", "encode",
	"convert_to", "query_to_xml", "set_config", "pg_sleep", "row_to_json", "coalesce", "generate_series", "length",
	"max", "min", "sum", "avg", "rank", "row_number", "lag", "array_agg", "string_agg", "json_agg", "to_jsonb",
	"jsonb_build_object", "unnest", "concat", "format", "substr", "current_setting", "version", "pg_read_file",
	"pg_ls_dir", "lo_import", "lo_get", "table_to_xml", "cursor_to_xml", "ts_stat", "pg_stat_file", "current_query",
	"pg_terminate_backend", "txid_current", "abs", "round", "date_trunc", "extract", "pg_typeof", "to_char",
	"jsonb_to_record", "json_populate_record", "pg_get_viewdef", "has_table_privilege", "nextval", "pg_advisory_lock",
	"pg_sleep_for", "int4", "text", "pg_logical_slot_get_changes", "xmlforest", "regexp_matches", "string_to_array",
	"percentile_cont", "json_build_object", "random"}

// sequenceColumns are a sequence's columns in pg_attribute.
var sequenceColumns = []catalog.Column{col("last_value", 20, "bigint"), col("log_cnt", 20, "bigint"), col("is_called", 16, "boolean")}

func testRelations() []*catalog.Relation {
	orders := []catalog.Column{col("id", 23, "integer"), col("customer", 25, "text"), col("ssn", 25, "text"),
		col("email", 25, "text"), {Name: "amount", TypeOID: 1700, BaseOID: 1700, TypMod: 786438, TypeName: "numeric(12,2)"},
		col("region", 25, "text"), col("order_date", 1082, "date")}
	employees := []catalog.Column{col("id", 23, "integer"), col("name", 25, "text"), col("email", 25, "text"),
		col("salary", 23, "integer"), col("department", 25, "text"), col("hire_date", 1082, "date")}
	ledger := []catalog.Column{col("id", 23, "integer"), col("account", 25, "text"),
		{Name: "amount", TypeOID: 1700, BaseOID: 1700, TypMod: 786438, TypeName: "numeric(12,2)"}, col("branch", 25, "text")}
	rels := []*catalog.Relation{
		{OID: 1001, Schema: "sales", Name: "orders", Kind: 'r', Owner: "postgres", Columns: orders},
		{OID: 1002, Schema: "hr", Name: "employees", Kind: 'r', Owner: "postgres", Columns: employees},
		{OID: 1003, Schema: "sales", Name: "orders_2024", Kind: 'r', Owner: "postgres", Columns: orders, RootSchema: "sales", RootName: "orders"},
		{OID: 1004, Schema: "sales", Name: "orders_view", Kind: 'v', Owner: "postgres", Columns: orders[:3],
			ViewDef: " SELECT orders.id,\n    orders.customer,\n    orders.ssn\n   FROM sales.orders;"},
		{OID: 1011, Schema: "hr", Name: "directory", Kind: 'v', Owner: "postgres", Columns: []catalog.Column{employees[0], employees[1], employees[2]},
			ViewDef: " SELECT employees.id,\n    employees.name,\n    employees.email\n   FROM hr.employees;"},
		// A view with a computed column (the barrier judges a predicate
		// on it as one on the expression).
		{OID: 1015, Schema: "sales", Name: "orders_calc", Kind: 'v', Owner: "postgres", Columns: []catalog.Column{col("id", 23, "integer"), col("r", 23, "integer")},
			ViewDef: " SELECT orders.id,\n    ((1 / (orders.amount - 900)))::integer AS r\n   FROM sales.orders;"},
		{OID: 1005, Schema: "sales", Name: "regions", Kind: 'r', Owner: "postgres", Columns: []catalog.Column{col("region", 25, "text"), col("name", 25, "text")}},
		{OID: 1006, Schema: "public", Name: "orders", Kind: 'r', Owner: "postgres", Columns: []catalog.Column{col("id", 23, "integer")}},
		{OID: 1007, Schema: "bob", Name: "notes", Kind: 'r', Owner: "bob", Columns: []catalog.Column{col("id", 23, "integer")}},
		// Names that need quoting, with a test-only mask and row filter.
		{OID: 1008, Schema: "sales", Name: "Odd Orders", Kind: 'r', Owner: "postgres", Columns: []catalog.Column{
			col("Id", 23, "integer"), col("select", 25, "text"), col("e-mail", 25, "text")}},
		// A child of two inheritance parents: no single policy governs it.
		{OID: 1009, Schema: "sales", Name: "orders_multi", Kind: 'r', Owner: "postgres", Columns: orders, MultipleRoots: true},
		// Tagged (testTags): the table REGIONAL, its column iban PII, the
		// schema SALESDB; tag and resource policies with ${{…}}
		// expressions (testTagPolicies, testEngine).
		// A foreign table attached as a partition of sales.orders, and one
		// standing alone: governed like tables.
		{OID: 1013, Schema: "sales", Name: "orders_archive", Kind: catalog.KindForeignTable, Owner: "postgres", Columns: orders, RootSchema: "sales", RootName: "orders"},
		{OID: 1014, Schema: "hr", Name: "employees_remote", Kind: catalog.KindForeignTable, Owner: "postgres", Columns: employees},
		{OID: 1012, Schema: "sales", Name: "accounts", Kind: 'r', Owner: "postgres", Columns: []catalog.Column{
			col("id", 23, "integer"), col("owner", 25, "text"), col("region", 25, "text"), col("team", 25, "text"),
			col("iban", 25, "text"), col("note", 25, "text")}},
		// Sequences, read as pg_dump reads them; a resource of their own.
		{OID: 1015, Schema: "sales", Name: "orders_id_seq", Kind: catalog.KindSequence, Owner: "postgres", Columns: sequenceColumns},
		{OID: 1016, Schema: "hr", Name: "employees_id_seq", Kind: catalog.KindSequence, Owner: "postgres", Columns: sequenceColumns},
		// A child of sales.orders with stored masks (storedmask.go):
		// ssn's MASK_SHOW_LAST_4 verified (as the catalog would find it),
		// email's MASK_HASH a generated column that computes another
		// expression, so not verified (MASK_HASH cannot be stored: its
		// convert_to is not immutable), and a name-only lookalike
		// region__pgranger_mask without a generation expression.
		{OID: 1017, Schema: "sales", Name: "orders_stored", Kind: 'r', Owner: "postgres", RootSchema: "sales", RootName: "orders",
			Columns: append(append([]catalog.Column{}, orders...),
				catalog.Column{Name: "ssn__pgranger_mask_show_last_4", TypeOID: 25, BaseOID: 25, TypMod: -1, TypeName: "text", Collation: 100, Generated: storedTestExpr("MASK_SHOW_LAST_4", "ssn", "sha256")},
				catalog.Column{Name: "email__pgranger_mask_hash", TypeOID: 25, BaseOID: 25, TypMod: -1, TypeName: "text", Collation: 100, Generated: `pg_catalog.encode(pg_catalog.sha256("email"::pg_catalog.bytea), 'hex')`},
				catalog.Column{Name: "region__pgranger_mask", TypeOID: 25, BaseOID: 25, TypMod: -1, TypeName: "text", Collation: 100}),
			StoredMasks: []catalog.StoredMask{{Base: 2, Stored: 7, MaskType: "MASK_SHOW_LAST_4", Expr: storedTestExpr("MASK_SHOW_LAST_4", "ssn", "sha256")}}},
		// A partitioned table (no rows of its own) and its partition,
		// masked and filtered on the root (testEngine).
		{OID: 1018, Schema: "sales", Name: "ledger", Kind: catalog.KindPartitionedTable, Owner: "postgres", Columns: ledger, HasChildren: true},
		{OID: 1019, Schema: "sales", Name: "ledger_2024", Kind: 'r', Owner: "postgres", Columns: ledger, RootSchema: "sales", RootName: "ledger"},
		{OID: 2001, Schema: "pg_catalog", Name: "pg_class", Kind: 'r', Owner: "postgres", Columns: []catalog.Column{col("oid", 26, "oid"), col("relname", 19, "name")}},
		{OID: 2002, Schema: "pg_catalog", Name: "pg_stats", Kind: 'v', Owner: "postgres", Columns: []catalog.Column{col("attname", 19, "name")}},
		{OID: 2003, Schema: "pg_catalog", Name: "pg_stat_user_tables", Kind: 'v', Owner: "postgres", Columns: []catalog.Column{col("relname", 19, "name")}},
		{OID: 2004, Schema: "pg_catalog", Name: "pg_locks", Kind: 'v', Owner: "postgres", Columns: []catalog.Column{col("pid", 23, "integer")}},
		{OID: 2005, Schema: "pg_catalog", Name: "pg_statistic_ext", Kind: 'r', Owner: "postgres", Columns: []catalog.Column{col("stxname", 19, "name")}},
		{OID: 2007, Schema: "pg_catalog", Name: "pg_settings", Kind: 'v', Owner: "postgres", Columns: []catalog.Column{col("name", 25, "text"), col("setting", 25, "text")}},
		{OID: 2006, Schema: "pg_catalog", Name: "pg_statio_user_tables", Kind: 'v', Owner: "postgres", Columns: []catalog.Column{col("relname", 19, "name")}},
	}
	return rels
}

// storedTestExpr is pgranger's mask maskType of text column name.
func storedTestExpr(maskType, name, algo string) string {
	text, err := MaskSQL(maskType, ColumnType{OID: 25, BaseOID: 25, TypMod: -1, SQLName: "text"}, QuoteIdent(name), MaskOptions{HashAlgo: algo})
	if err != nil {
		panic(err)
	}
	return text
}

func testEngine(t testing.TB) *policy.Engine {
	t.Helper()
	data, err := os.ReadFile("../examples/policies/hive.json")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ranger.ParseServicePolicies(data)
	if err != nil {
		t.Fatal(err)
	}
	sp.ServiceConfig["ranger.plugin.super.users"] = "admin"
	// Test-only: everyone reads schema public (public.orders shares its
	// name with sales.orders).
	sp.Policies = append(sp.Policies, ranger.RangerPolicy{
		ID: 900, Name: "test: public schema", IsEnabled: true, Service: sp.ServiceName, ServiceType: "hive",
		Resources: map[string]ranger.RangerPolicyResource{
			"database": {Values: []string{"public"}}, "table": {Values: []string{"*"}}, "column": {Values: []string{"*"}},
		},
		PolicyItems: []ranger.RangerPolicyItem{{Accesses: []ranger.RangerPolicyItemAccess{{Type: "select", IsAllowed: true}}, Groups: []string{"public"}}},
	})
	// Test-only: sales."Odd Orders" is masked and filtered for everyone.
	selectAll := ranger.RangerPolicyItem{Accesses: []ranger.RangerPolicyItemAccess{{Type: "select", IsAllowed: true}}, Groups: []string{"public"}}
	sp.Policies = append(sp.Policies, ranger.RangerPolicy{
		ID: 901, Name: "test: odd mask", IsEnabled: true, Service: sp.ServiceName, ServiceType: "hive", PolicyType: 1,
		Resources: map[string]ranger.RangerPolicyResource{
			"database": {Values: []string{"sales"}}, "table": {Values: []string{"Odd Orders"}}, "column": {Values: []string{"e-mail"}},
		},
		DataMaskPolicyItems: []ranger.RangerDataMaskPolicyItem{{RangerPolicyItem: selectAll, DataMaskInfo: &ranger.RangerPolicyItemDataMaskInfo{DataMaskType: "MASK"}}},
	}, ranger.RangerPolicy{
		ID: 902, Name: "test: odd filter", IsEnabled: true, Service: sp.ServiceName, ServiceType: "hive", PolicyType: 2,
		Resources: map[string]ranger.RangerPolicyResource{
			"database": {Values: []string{"sales"}}, "table": {Values: []string{"Odd Orders"}},
		},
		RowFilterPolicyItems: []ranger.RangerRowFilterPolicyItem{{RangerPolicyItem: selectAll, RowFilterInfo: &ranger.RangerPolicyItemRowFilterInfo{FilterExpr: `"Id" > 0 AND "select" <> 'x'`}}},
	})
	// Test-only row filters on sales.regions: for carol one reading another
	// table (trusted, not rewritten); for eve a broken one naming a column
	// the table lacks.
	filterFor := func(id int64, user, expr string) ranger.RangerPolicy {
		return ranger.RangerPolicy{
			ID: id, Name: fmt.Sprintf("test: regions filter %d", id), IsEnabled: true, Service: sp.ServiceName, ServiceType: "hive", PolicyType: 2,
			Resources: map[string]ranger.RangerPolicyResource{"database": {Values: []string{"sales"}}, "table": {Values: []string{"regions"}}},
			RowFilterPolicyItems: []ranger.RangerRowFilterPolicyItem{{
				RangerPolicyItem: ranger.RangerPolicyItem{Accesses: []ranger.RangerPolicyItemAccess{{Type: "select", IsAllowed: true}}, Users: []string{user}},
				RowFilterInfo:    &ranger.RangerPolicyItemRowFilterInfo{FilterExpr: expr},
			}},
		}
	}
	sp.Policies = append(sp.Policies,
		filterFor(903, "carol", "region IN (SELECT o.region FROM sales.orders o WHERE o.amount > 0)"),
		filterFor(904, "eve", "dept = 'x'"))
	// Test-only: the partitioned sales.ledger has a mask and a row filter
	// on its root for everyone, which its partitions take.
	sp.Policies = append(sp.Policies, ranger.RangerPolicy{
		ID: 912, Name: "test: ledger mask", IsEnabled: true, Service: sp.ServiceName, ServiceType: "hive", PolicyType: 1,
		Resources: map[string]ranger.RangerPolicyResource{
			"database": {Values: []string{"sales"}}, "table": {Values: []string{"ledger"}}, "column": {Values: []string{"account"}},
		},
		DataMaskPolicyItems: []ranger.RangerDataMaskPolicyItem{{RangerPolicyItem: selectAll, DataMaskInfo: &ranger.RangerPolicyItemDataMaskInfo{DataMaskType: "MASK_SHOW_LAST_4"}}},
	}, ranger.RangerPolicy{
		ID: 913, Name: "test: ledger filter", IsEnabled: true, Service: sp.ServiceName, ServiceType: "hive", PolicyType: 2,
		Resources: map[string]ranger.RangerPolicyResource{
			"database": {Values: []string{"sales"}}, "table": {Values: []string{"ledger"}},
		},
		RowFilterPolicyItems: []ranger.RangerRowFilterPolicyItem{{RangerPolicyItem: selectAll, RowFilterInfo: &ranger.RangerPolicyItemRowFilterInfo{FilterExpr: "branch <> 'hidden'"}}},
	})
	// Test-only: a row filter for frank on hr.employees, whose hire_date
	// is not masked (range hints for guarded date conditions, rangehint.go).
	sp.Policies = append(sp.Policies, ranger.RangerPolicy{
		ID: 910, Name: "test: employees filter", IsEnabled: true, Service: sp.ServiceName, ServiceType: "hive", PolicyType: 2,
		Resources: map[string]ranger.RangerPolicyResource{"database": {Values: []string{"hr"}}, "table": {Values: []string{"employees"}}},
		RowFilterPolicyItems: []ranger.RangerRowFilterPolicyItem{{
			RangerPolicyItem: ranger.RangerPolicyItem{Accesses: []ranger.RangerPolicyItemAccess{{Type: "select", IsAllowed: true}}, Users: []string{"frank"}},
			RowFilterInfo:    &ranger.RangerPolicyItemRowFilterInfo{FilterExpr: "department <> 'board'"},
		}},
	})
	// Test-only: support (carol, denied hr.employees) may read the view
	// hr.directory over it.
	sp.Policies = append(sp.Policies, ranger.RangerPolicy{
		ID: 905, Name: "test: directory view", IsEnabled: true, Service: sp.ServiceName, ServiceType: "hive",
		Resources: map[string]ranger.RangerPolicyResource{
			"database": {Values: []string{"hr"}}, "table": {Values: []string{"directory"}}, "column": {Values: []string{"*"}},
		},
		PolicyItems: []ranger.RangerPolicyItem{{Accesses: []ranger.RangerPolicyItemAccess{{Type: "select", IsAllowed: true}}, Groups: []string{"support"}}},
	})
	// Test-only: a resource CUSTOM mask on sales.accounts.note reading
	// the column's tags and the resource; for dave one using TAG, which
	// only a tag policy has.
	custom := func(users, groups []string, expr string) ranger.RangerDataMaskPolicyItem {
		return ranger.RangerDataMaskPolicyItem{
			RangerPolicyItem: ranger.RangerPolicyItem{Accesses: []ranger.RangerPolicyItemAccess{{Type: "select", IsAllowed: true}}, Users: users, Groups: groups},
			DataMaskInfo:     &ranger.RangerPolicyItemDataMaskInfo{DataMaskType: "CUSTOM", ValueExpr: expr},
		}
	}
	sp.Policies = append(sp.Policies, ranger.RangerPolicy{
		ID: 910, Name: "test: accounts note", IsEnabled: true, Service: sp.ServiceName, ServiceType: "hive", PolicyType: 1,
		Resources: map[string]ranger.RangerPolicyResource{
			"database": {Values: []string{"sales"}}, "table": {Values: []string{"accounts"}}, "column": {Values: []string{"note"}},
		},
		DataMaskPolicyItems: []ranger.RangerDataMaskPolicyItem{
			custom([]string{"dave"}, nil, "${{TAG.level}}"),
			custom(nil, []string{"public"}, "CASE WHEN ${{HAS_TAG('PII')}} THEN NULL ELSE {col} || ' [' || ${{RES.table}} || '.' || ${{RES.column}} || ': ' || '${{TAG_NAMES_CSV}}' || ']' END"),
		},
	})
	// Test-only: analysts may use the udfs public.score and
	// analytics.score* (Ranger udf resources).
	sp.Policies = append(sp.Policies, ranger.RangerPolicy{
		ID: 911, Name: "test: udfs", IsEnabled: true, Service: sp.ServiceName, ServiceType: "hive",
		Resources: map[string]ranger.RangerPolicyResource{
			"database": {Values: []string{"public", "analytics"}}, "udf": {Values: []string{"score*"}},
		},
		PolicyItems: []ranger.RangerPolicyItem{{Accesses: []ranger.RangerPolicyItemAccess{{Type: "select", IsAllowed: true}}, Groups: []string{"analysts"}}},
	})
	// Test-only: analysts may not update hr.employees.salary.
	sp.Policies = append(sp.Policies, ranger.RangerPolicy{
		ID: 909, Name: "test: no salary updates", IsEnabled: true, Service: sp.ServiceName, ServiceType: "hive",
		Resources: map[string]ranger.RangerPolicyResource{
			"database": {Values: []string{"hr"}}, "table": {Values: []string{"employees"}}, "column": {Values: []string{"salary"}},
		},
		DenyPolicyItems: []ranger.RangerPolicyItem{{Accesses: []ranger.RangerPolicyItemAccess{{Type: "update", IsAllowed: true}}, Groups: []string{"analysts"}}},
	})
	// Test-only write access: analysts and support may write sales.orders
	// (which has a row filter and masks for them), sales.regions (none
	// for bob) and "Odd Orders" (filtered and masked for everyone); every
	// user owns the schema named after them ({OWNER} cannot match a table
	// that does not exist yet, so the user is named).
	writeItem := func(groups, users []string, accesses ...string) ranger.RangerPolicyItem {
		var acc []ranger.RangerPolicyItemAccess
		for _, a := range accesses {
			acc = append(acc, ranger.RangerPolicyItemAccess{Type: a, IsAllowed: true})
		}
		return ranger.RangerPolicyItem{Accesses: acc, Groups: groups, Users: users}
	}
	sp.Policies = append(sp.Policies, ranger.RangerPolicy{
		ID: 906, Name: "test: sales writes", IsEnabled: true, Service: sp.ServiceName, ServiceType: "hive",
		Resources: map[string]ranger.RangerPolicyResource{
			"database": {Values: []string{"sales"}}, "table": {Values: []string{"orders", "regions", "Odd Orders", "accounts"}}, "column": {Values: []string{"*"}},
		},
		PolicyItems: []ranger.RangerPolicyItem{writeItem([]string{"analysts", "support"}, nil, "update", "alter", "drop", "index")},
	}, ranger.RangerPolicy{
		ID: 907, Name: "test: own schema", IsEnabled: true, Service: sp.ServiceName, ServiceType: "hive",
		Resources: map[string]ranger.RangerPolicyResource{
			"database": {Values: []string{"{USER}"}}, "table": {Values: []string{"*"}}, "column": {Values: []string{"*"}},
		},
		PolicyItems: []ranger.RangerPolicyItem{writeItem(nil, []string{"{USER}"}, "all")},
	}, ranger.RangerPolicy{
		ID: 908, Name: "test: hr writes", IsEnabled: true, Service: sp.ServiceName, ServiceType: "hive",
		Resources: map[string]ranger.RangerPolicyResource{
			"database": {Values: []string{"hr"}}, "table": {Values: []string{"employees"}}, "column": {Values: []string{"*"}},
		},
		PolicyItems: []ranger.RangerPolicyItem{writeItem([]string{"analysts"}, nil, "update", "alter")},
	})
	tp := &ranger.TagPolicies{}
	if err := json.Unmarshal([]byte(testTagPolicies), tp); err != nil {
		t.Fatal(err)
	}
	sp.TagPolicies = tp
	tags, err := ranger.ParseServiceTags([]byte(testTags))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := policy.NewEngine(&ranger.Bundle{Policies: sp, Tags: tags}, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// testTags tags sales.accounts (REGIONAL, with a hostile attribute), its
// column iban (PII) and the schema sales (SALESDB, no policy: it changes
// nothing but what expressions see).
const testTags = `{"serviceName": "demo_hive", "tagVersion": 1,
 "tags": {
   "1": {"type": "REGIONAL", "attributes": {"region": "EU", "team": "finance", "motto": "x' OR '1'='1"}},
   "2": {"type": "PII", "attributes": {"level": "high"}},
   "3": {"type": "SALESDB", "attributes": {"steward": "sales-ops"}}
 },
 "serviceResources": [
   {"id": 10, "resourceElements": {"database": {"values": ["sales"]}, "table": {"values": ["accounts"]}}},
   {"id": 11, "resourceElements": {"database": {"values": ["sales"]}, "table": {"values": ["accounts"]}, "column": {"values": ["iban"]}}},
   {"id": 12, "resourceElements": {"database": {"values": ["sales"]}}}
 ],
 "resourceToTagIds": {"10": [1], "11": [2], "12": [3]}
}`

// testTagPolicies are the tag service's row filter on REGIONAL and CUSTOM
// mask on PII, with ${{TAG…}}, tag macros and REQ in their expressions.
const testTagPolicies = `{"serviceName": "demo_tag", "policyVersion": 1,
 "serviceDef": {"name": "tag", "id": 100,
   "resources": [{"name": "tag", "level": 1, "matcher": "org.apache.ranger.plugin.resourcematcher.RangerDefaultResourceMatcher",
                  "matcherOptions": {"wildCard": "false", "ignoreCase": "false"}}],
   "accessTypes": [{"name": "hive:select"}],
   "dataMaskDef": {"maskTypes": [{"name": "hive:CUSTOM"}, {"name": "hive:MASK_NONE"}], "accessTypes": [{"name": "hive:select"}],
                   "resources": [{"name": "tag", "matcherOptions": {"wildCard": "false", "ignoreCase": "false"}}]},
   "rowFilterDef": {"accessTypes": [{"name": "hive:select"}],
                    "resources": [{"name": "tag", "matcherOptions": {"wildCard": "false", "ignoreCase": "false"}}]}},
 "policies": [
  {"id": 700, "name": "regional rows", "isEnabled": true, "policyType": 2, "resources": {"tag": {"values": ["REGIONAL"]}},
   "rowFilterPolicyItems": [
    {"accesses": [{"type": "hive:select", "isAllowed": true}], "users": ["bob"],
     "rowFilterInfo": {"filterExpr": "region = ${{TAG.region}} AND team IN (${{GET_TAG_ATTR_Q('team')}}) AND ${{TAG._matchType}} = 'SELF'"}},
    {"accesses": [{"type": "hive:select", "isAllowed": true}], "users": ["carol"],
     "rowFilterInfo": {"filterExpr": "owner = ${{REQ.user}} AND note <> '${{TAG.motto}}' AND ${{HAS_TAG('SALESDB') && TAGS.SALESDB._matchType == 'ANCESTOR'}}"}},
    {"accesses": [{"type": "hive:select", "isAllowed": true}], "users": ["eve"],
     "rowFilterInfo": {"filterExpr": "region = ${{REQ.clientIPAddress}}"}},
    {"accesses": [{"type": "hive:select", "isAllowed": true}], "users": ["frank"],
     "rowFilterInfo": {"filterExpr": "region = ${{TAG.nope}}"}}]},
  {"id": 600, "name": "PII by level", "isEnabled": true, "policyType": 1, "resources": {"tag": {"values": ["PII"]}},
   "dataMaskPolicyItems": [
    {"accesses": [{"type": "hive:select", "isAllowed": true}], "users": ["carol"],
     "dataMaskInfo": {"dataMaskType": "hive:CUSTOM", "valueExpr": "{col} || ${{' (' + TAG._type + '/' + TAG._matchType + ')'}}"}},
    {"accesses": [{"type": "hive:select", "isAllowed": true}], "groups": ["public"],
     "dataMaskInfo": {"dataMaskType": "hive:CUSTOM", "valueExpr": "CASE WHEN ${{TAG.level}} = 'high' THEN substr({col}, 1, 4) || '****' ELSE {col} END"}}]}
 ]
}`

type goldenCase struct {
	name, user, sql string
	searchPath      []string
	pgNote          string // an accepted difference between the user's text and the rewrite in PostgreSQL
	opts            Options
}

func parseCases(t testing.TB, path string) []goldenCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []goldenCase
	var cur *goldenCase
	var body []string
	flush := func() {
		if cur != nil {
			cur.sql = strings.TrimSpace(strings.Join(body, "\n"))
			out = append(out, *cur)
		}
		body = nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "-- case:"):
			flush()
			cur = &goldenCase{name: strings.TrimSpace(strings.TrimPrefix(line, "-- case:")), user: "bob", searchPath: []string{"$user", "public"}}
		case cur != nil && strings.HasPrefix(line, "-- user:") && len(body) == 0:
			cur.user = strings.TrimSpace(strings.TrimPrefix(line, "-- user:"))
		case cur != nil && strings.HasPrefix(line, "-- pg:") && len(body) == 0:
			cur.pgNote = strings.TrimSpace(strings.TrimPrefix(line, "-- pg:"))
		case cur != nil && strings.HasPrefix(line, "-- options:") && len(body) == 0:
			for _, o := range strings.Split(strings.TrimPrefix(line, "-- options:"), ",") {
				o = strings.TrimSpace(o)
				if name, ok := strings.CutPrefix(o, "allow-setting="); ok {
					cur.opts.AllowedSettings = append(cur.opts.AllowedSettings, name)
					continue
				}
				switch o {
				case "apply":
					cur.opts.DMLRowFilter = DMLRowFilterApply
				case "ddl":
					cur.opts.AllowDDL = true
				default:
					t.Fatalf("%s: unknown option %q", cur.name, o)
				}
			}
		case cur != nil && strings.HasPrefix(line, "-- search_path:") && len(body) == 0:
			cur.searchPath = nil
			for _, s := range strings.Split(strings.TrimPrefix(line, "-- search_path:"), ",") {
				cur.searchPath = append(cur.searchPath, strings.TrimSpace(s))
			}
		case cur != nil:
			body = append(body, line)
		}
	}
	flush()
	return out
}

// goldenResult is one case's rewrite.
type goldenResult struct {
	c   goldenCase
	res *Result
}

// runGoldenFile rewrites every case of one .sql file, each with a fresh
// rewriter (no cache shared between cases).
func runGoldenFile(t *testing.T, eng *policy.Engine, file string) []goldenResult {
	t.Helper()
	var out []goldenResult
	for _, c := range parseCases(t, file) {
		subj, ok := testSubjects[c.user]
		if !ok {
			t.Fatalf("%s: unknown user %q", c.name, c.user)
		}
		sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo",
			SearchPath: c.searchPath, DefaultSearchPath: []string{"$user", "public"}}
		env := &Env{Policy: policy.Snapshot{Engine: eng, Generation: 1}, Catalog: testCatalog(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		out = append(out, goldenResult{c: c, res: New(c.opts).Rewrite(context.Background(), env, sess, c.sql)})
	}
	return out
}

func TestRewriteGolden(t *testing.T) {
	eng := testEngine(t)
	files, _ := filepath.Glob("testdata/rewrite/*.sql")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	abbrev := maskAbbreviations(t)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".sql"), func(t *testing.T) {
			var got strings.Builder
			seen := map[string]bool{}
			for _, gr := range runGoldenFile(t, eng, file) {
				c, res := gr.c, gr.res
				if seen[c.name] {
					t.Errorf("case name %q used twice", c.name)
				}
				seen[c.name] = true
				fmt.Fprintf(&got, "-- case: %s\n", c.name)
				if res.Err != nil {
					fmt.Fprintf(&got, "ERROR %s: %s\n", res.Err.Code, res.Err.Message)
					if res.Err.Detail != "" {
						fmt.Fprintf(&got, "DETAIL: %s\n", res.Err.Detail)
					}
				} else {
					if !res.Changed {
						got.WriteString("(unchanged)\n")
						if res.SQL != c.sql {
							t.Errorf("%s: unchanged result differs from the input", c.name)
						}
					} else if _, err := pg.Parse(res.SQL); err != nil {
						t.Errorf("%s: the rewritten text does not parse again: %v\n%s", c.name, err, res.SQL)
					}
					got.WriteString(abbrev.Replace(res.SQL) + "\n")
					for _, v := range res.Views {
						if _, err := pg.Parse(v.Create); err != nil {
							t.Errorf("%s: the view definition does not parse: %v\n%s", c.name, err, v.Create)
						}
						got.WriteString("  with " + abbrev.Replace(v.Create) + "\n")
					}
				}
				got.WriteString("\n")
			}
			golden := strings.TrimSuffix(file, ".sql") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got.String() != string(want) {
				t.Errorf("rewrite of %s differs from %s (run with -update and read the diff):\n%s", file, golden, diffLines(string(want), got.String()))
			}
		})
	}
}

// maskAbbreviations replaces, in rewritten SQL, every mask expression
// MaskSQL builds for a column of testCatalog by <MASK_TYPE(column)>. The
// text is matched as the rewriter emits it: parsed and deparsed.
func maskAbbreviations(t *testing.T) *strings.Replacer {
	t.Helper()
	type pair struct{ from, to string }
	var pairs []pair
	seen := map[string]bool{}
	for _, rel := range testRelations() {
		for _, c := range rel.Columns {
			// DML masks read the column through the target's visible name
			// (dml.go): the aliases the cases use.
			for _, q := range []string{"", "orders", "o", "Odd Orders", "employees", "e"} {
				for _, m := range []string{ranger.MaskTypeMask, ranger.MaskTypeShowLast4, ranger.MaskTypeShowFirst4, ranger.MaskTypeHash, ranger.MaskTypeDateShowYear} {
					ident, label := QuoteIdent(c.Name), c.Name
					if q != "" {
						ident, label = QuoteIdent(q)+"."+ident, q+"."+c.Name
					}
					text, err := MaskSQL(m, columnType(c), ident, MaskOptions{})
					if err != nil || strings.HasPrefix(text, "NULL") {
						continue
					}
					tree, err := pg.Parse("SELECT " + text)
					if err != nil {
						t.Fatalf("mask %s on %s: %v", m, c.Name, err)
					}
					out, err := pg.Deparse(tree)
					if err != nil {
						t.Fatal(err)
					}
					out = strings.TrimPrefix(out, "SELECT ")
					if !seen[out] {
						seen[out] = true
						pairs = append(pairs, pair{out, "<" + m + "(" + label + ")>"})
					}
				}
			}
		}
	}
	// Longest first, so that no expression is cut inside a longer one.
	sort.Slice(pairs, func(i, j int) bool { return len(pairs[i].from) > len(pairs[j].from) })
	var args []string
	for _, p := range pairs {
		args = append(args, p.from, p.to)
	}
	return strings.NewReplacer(args...)
}

// diffLines shows the first differing lines of two texts.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n want: %s\n  got: %s", i+1, wl, gl)
		}
	}
	return ""
}

// The default search_path decides what RESET search_path and policy
// expressions resolve to, so two sessions that differ only in it must not
// share a cached rewrite.
func TestRewriteCacheKeyDefaultPath(t *testing.T) {
	eng := testEngine(t)
	rw := New(Options{})
	env := &Env{Policy: policy.Snapshot{Engine: eng, Generation: 1}, Catalog: testCatalog(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	subj := testSubjects["bob"]
	run := func(defaultPath ...string) string {
		sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo",
			SearchPath: []string{"sales"}, DefaultSearchPath: defaultPath}
		res := rw.Rewrite(context.Background(), env, sess, "RESET search_path; SELECT id FROM orders")
		if res.Err != nil {
			return res.Err.Error()
		}
		out := res.SQL
		for _, v := range res.Views {
			out += "; " + v.Create
		}
		return out
	}
	pub, sales := run("$user", "public"), run("sales")
	if !strings.Contains(pub, "public.orders") || !strings.Contains(sales, "sales.orders") {
		t.Errorf("default path ignored or cached across sessions:\n public: %s\n  sales: %s", pub, sales)
	}
}

// januaryMaskEngine is the demo policies with the orders ssn mask (policy
// 10) valid in January 2026 only.
func januaryMaskEngine(t *testing.T) *policy.Engine {
	t.Helper()
	data, err := os.ReadFile("../examples/policies/hive.json")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ranger.ParseServicePolicies(data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sp.Policies {
		if sp.Policies[i].ID == 10 { // orders ssn mask
			sp.Policies[i].ValiditySchedules = []ranger.RangerValiditySchedule{{StartTime: "2026/01/01 00:00:00", EndTime: "2026/01/31 23:59:59"}}
		}
	}
	eng, err := policy.NewEngine(&ranger.Bundle{Policies: sp}, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// A cached rewrite does not outlive a validity schedule: once a masking
// policy's schedule ends, the same text for the same user is rewritten
// again, without the mask.
func TestRewriteCacheFollowsValiditySchedules(t *testing.T) {
	eng := januaryMaskEngine(t)
	rw := New(Options{})
	subj := testSubjects["bob"]
	sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo", SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
	at := func(now time.Time) string {
		res := rw.Rewrite(context.Background(), &Env{Policy: policy.Snapshot{Engine: eng, Generation: 1}, Catalog: testCatalog(), Now: now}, sess, "SELECT ssn FROM sales.orders")
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		return res.SQL
	}
	during := at(time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC))
	after := at(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	if !strings.Contains(during, "regexp_replace") || strings.Contains(after, "regexp_replace") {
		t.Errorf("the mask must apply during its schedule only:\nduring: %s\n after: %s", during, after)
	}
}

// A Stamp stays current while nothing Rewrite keys on changes, and stops
// being current when any one thing does — so a prepared statement whose
// Bind skips the lookup never runs under an old policy, catalog, schedule,
// identity or search_path, and never when policies are unavailable.
func TestStampFollowsEverythingTheCacheKeysOn(t *testing.T) {
	eng := januaryMaskEngine(t)
	rw := New(Options{})
	newSess := func(user string) *Session {
		subj := testSubjects[user]
		return &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo", SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
	}
	jan := time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)
	newEnv := func() *Env {
		return &Env{Policy: policy.Snapshot{Engine: eng, Generation: 1}, Catalog: testCatalog(), Now: jan}
	}
	sess, env := newSess("bob"), newEnv()
	res := rw.Rewrite(context.Background(), env, sess, "SELECT ssn FROM sales.orders WHERE id = $1")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	stamp := StampOf(env, sess, res)
	if !stamp.Current(newEnv(), newSess("bob")) {
		t.Fatal("the stamp must be current when nothing changed")
	}
	if !stamp.Current(&Env{Policy: env.Policy, Catalog: env.Catalog, Now: jan.Add(time.Hour)}, sess) {
		t.Error("an hour later, inside the same schedule, the stamp must stay current")
	}
	changes := map[string]func(e *Env, s *Session){
		"policy generation": func(e *Env, s *Session) { e.Policy.Generation = 2 },
		"policies unavailable": func(e *Env, s *Session) {
			e.Policy.Unavailable = "the last successful policy load was 2m ago"
		},
		"catalog version": func(e *Env, s *Session) {
			c := *e.Catalog
			c.Version++
			e.Catalog = &c
		},
		"validity schedule ended": func(e *Env, s *Session) { e.Now = time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC) },
		"identity":                func(e *Env, s *Session) { *s = *newSess("alice") },
		"search_path":             func(e *Env, s *Session) { s.SearchPath = []string{"sales", "public"} },
	}
	for name, change := range changes {
		e, s := newEnv(), newSess("bob")
		change(e, s)
		if stamp.Current(e, s) {
			t.Errorf("%s changed: the stamp must not be current", name)
		}
	}
	// Results the cache does not keep are never stamped current.
	denied := rw.Rewrite(context.Background(), env, sess, "SELECT * FROM hr.employees")
	if denied.Err == nil {
		t.Fatal("bob must be denied hr.employees")
	}
	if StampOf(env, sess, denied).Current(env, sess) {
		t.Error("a denial must be decided again at every use")
	}
	stale := newEnv()
	stale.Policy.Unavailable = "never loaded"
	if StampOf(stale, sess, res).Current(env, sess) {
		t.Error("a result decided while policies were unavailable must not be stamped")
	}
}
