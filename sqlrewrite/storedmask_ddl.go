package sqlrewrite

import (
	"fmt"
	"time"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
)

// StoredMaskDDL returns the ALTER TABLE statements that add, to every
// governed root table of snap, a stored column for each mask the policy
// bundle may apply to one of its string columns (`pgranger masks
// --stored-ddl`, docs/masks.md "Stored masks"). Which masks may apply is
// asked of the engine for each of subjects (the caller names one per user,
// group and role of the data-mask items, and a user in no group), so
// conditions and wildcards are the engine's. A column that already exists
// is skipped by IF NOT EXISTS; skipped lists, as comments, what cannot be
// stored (a name over 63 bytes) and an existing column that does not hold
// its mask.
func StoredMaskDDL(subjects []*policy.Subject, eng *policy.Engine, snap *catalog.Snapshot, database, mapping string, opts MaskOptions, at time.Time) (ddl, skipped []string) {
	build := StoredMaskBuilder(opts)
	for _, rel := range snap.Relations() {
		if rel.IsSystem() || (rel.Kind != catalog.KindTable && rel.Kind != catalog.KindPartitionedTable) ||
			rel.RootSchema != rel.Schema || rel.RootName != rel.Name {
			continue // a partition or child gets the parent's column
		}
		db := rel.Schema
		if mapping == "database.schema" {
			db = database + "." + rel.Schema
		}
		for _, col := range rel.Columns {
			if _, _, isStored := catalog.ParseStoredMaskColumnName(col.Name); isStored || col.Generated != "" {
				continue
			}
			types := map[string]bool{}
			for _, s := range subjects {
				m := eng.Evaluate(&policy.Request{Subject: s, Hive: policy.Resource{Database: db, Table: rel.Name, Column: col.Name, Owner: rel.Owner}, At: at, Want: policy.WantMask}).Mask
				if !m.Unmappable && m.Type != "" {
					types[m.Type] = true
				}
			}
			for _, t := range catalog.StoredMaskTypes {
				if !types[t] {
					continue
				}
				expr, ok := build(t, col, QuoteIdent(col.Name))
				if !ok {
					continue
				}
				name := catalog.StoredMaskColumnName(col.Name, t)
				if i, exists := rel.ColumnIndex(name); exists {
					// IF NOT EXISTS would leave a column that does not
					// hold this mask as it is: say so.
					if c, ok := rel.StoredMaskColumns[i]; !ok || !c.Verified || c.Expr != expr {
						skipped = append(skipped, fmt.Sprintf("-- %s.%s.%s exists but is not verified to hold pgranger's %s of %s: retire it (docs/masks.md, \"Stored masks\") and add it again", rel.Schema, rel.Name, name, t, col.Name))
					}
				}
				if len(name) > catalog.MaxIdentifierBytes {
					skipped = append(skipped, fmt.Sprintf("-- %s.%s.%s %s: the column name %s is longer than 63 bytes", rel.Schema, rel.Name, col.Name, t, name))
					continue
				}
				ddl = append(ddl, fmt.Sprintf("ALTER TABLE %s.%s ADD COLUMN IF NOT EXISTS %s %s GENERATED ALWAYS AS (%s) STORED;",
					QuoteIdent(rel.Schema), QuoteIdent(rel.Name), QuoteIdent(name), col.TypeName, expr))
			}
		}
	}
	return ddl, skipped
}
