package catalog

import "testing"

func TestStoredMaskColumnNames(t *testing.T) {
	for _, c := range []struct {
		name, base, mask string
		ok               bool
	}{
		{"o_comment__pgranger_mask_show_first_4", "o_comment", "MASK_SHOW_FIRST_4", true},
		{"c__pgranger_mask", "c", "MASK", true},
		{"a__pgranger_x__pgranger_mask_date_show_year", "a__pgranger_x", "MASK_DATE_SHOW_YEAR", true},
		{"c__pgranger_mask_hash", "", "", false}, // MASK_HASH cannot be stored
		{"c__pgranger_mask_null", "", "", false},
		{"c__pgranger_custom", "", "", false},
		{"c__pgranger_MASK", "", "", false}, // the convention is lower case
		{"__pgranger_mask", "", "", false},
		{"c_pgranger_mask", "", "", false},
	} {
		base, mask, ok := ParseStoredMaskColumnName(c.name)
		if base != c.base || mask != c.mask || ok != c.ok {
			t.Errorf("ParseStoredMaskColumnName(%q) = %q, %q, %v; want %q, %q, %v", c.name, base, mask, ok, c.base, c.mask, c.ok)
		}
		if c.ok && StoredMaskColumnName(base, mask) != c.name {
			t.Errorf("StoredMaskColumnName(%q, %q) = %q", base, mask, StoredMaskColumnName(base, mask))
		}
	}
}

// A parent's stored mask is kept only when every relation under its root
// holds the same verified one; an intermediate parent keeps none.
func TestDropUnsharedStoredMasks(t *testing.T) {
	cols := []Column{{Name: "c"}, {Name: "c__pgranger_mask"}}
	mk := func(oid uint32, name, root string, children, verified bool, expr string) *Relation {
		r := &Relation{OID: oid, Schema: "s", Name: name, RootSchema: "s", RootName: root, HasChildren: children,
			Columns: cols, colIndex: map[string]int{"c": 0, "c__pgranger_mask": 1},
			StoredMaskColumns: map[int]StoredMaskCandidate{1: {Base: 0, MaskType: "MASK"}}}
		if verified {
			r.StoredMasks = []StoredMask{{Base: 0, Stored: 1, MaskType: "MASK", Expr: expr}}
			r.StoredMaskColumns[1] = StoredMaskCandidate{Base: 0, MaskType: "MASK", Verified: true, Expr: expr}
		}
		return r
	}
	for _, c := range []struct {
		name     string
		rels     []*Relation
		wantRoot bool
	}{
		{"all partitions verified", []*Relation{mk(1, "p", "p", true, true, "e"), mk(2, "p1", "p", false, true, "e"), mk(3, "p2", "p", false, true, "e")}, true},
		{"one partition not verified", []*Relation{mk(1, "p", "p", true, true, "e"), mk(2, "p1", "p", false, true, "e"), mk(3, "p2", "p", false, false, "")}, false},
		{"one partition with another text", []*Relation{mk(1, "p", "p", true, true, "e"), mk(2, "p1", "p", false, true, "other")}, false},
		{"no children", []*Relation{mk(1, "p", "p", false, true, "e")}, true},
	} {
		byOID := map[uint32]*Relation{}
		for _, r := range c.rels {
			byOID[r.OID] = r
		}
		dropUnsharedStoredMasks(byOID)
		root := byOID[1]
		if got := len(root.StoredMasks) == 1; got != c.wantRoot {
			t.Errorf("%s: root keeps its stored mask: %v, want %v", c.name, got, c.wantRoot)
		}
		if got := root.StoredMaskColumns[1].Verified; got != c.wantRoot {
			t.Errorf("%s: candidate verified %v", c.name, got)
		}
	}
	// An intermediate parent (children, not a root) keeps none.
	mid := mk(4, "mid", "p", true, true, "e")
	dropUnsharedStoredMasks(map[uint32]*Relation{4: mid, 1: mk(1, "p", "p", true, true, "e")})
	if len(mid.StoredMasks) != 0 {
		t.Errorf("an intermediate parent kept %+v", mid.StoredMasks)
	}
}
