package sqlrewrite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/internal/interop"
)

// TestStoredMaskPostgres: for every string column type of the mask tests
// and every mask a stored column can hold, a stored column added with the
// DDL pgranger prints holds, for the values of the mask tests (the string
// vectors of mask-examples.json and the differential test's generated
// strings, supplementary characters included), exactly the bytes the
// computed mask returns, read as the wrapper reads it; the catalog
// verifies those columns and no other: not one computed with another
// collation, not one of another type, none when the check fails; and dropping a column moves the catalog's version and
// takes its stored mask away.
func TestStoredMaskPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	ctx := context.Background()
	c, conn := pgDatabase(t, "storedmask", "")

	vals := storedMaskVectors(t)
	types := []struct{ name, pgType string }{
		{"text", "text"}, {"varchar12", "varchar(12)"}, {"varchar", "varchar"},
		{"char10", "char(10)"}, {"char1", "char(1)"}, {"char70", "char(70)"}, {"bpchar", "bpchar"},
	}
	build := StoredMaskBuilder(MaskOptions{})
	for _, ty := range types {
		table := "sm_" + ty.name
		maskExec(t, conn, fmt.Sprintf("CREATE TABLE %s (i int, c %s)", table, ty.pgType))
		batch := &pgx.Batch{}
		for i, v := range vals {
			// values too long for the type are cut as a cast cuts them
			batch.Queue(fmt.Sprintf("INSERT INTO %s VALUES ($1, $2::text::%s)", table, ty.pgType), i, v)
		}
		if err := conn.SendBatch(ctx, batch).Close(); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		ct := maskColumnType(t, conn, table, "c")
		col := catalog.Column{Name: "c", TypeOID: ct.OID, BaseOID: ct.OID, TypMod: ct.TypMod, TypeName: ct.SQLName}
		for _, mt := range catalog.StoredMaskTypes {
			expr, ok := build(mt, col, `"c"`)
			if !ok {
				t.Fatalf("%s %s: no stored mask", table, mt)
			}
			name := catalog.StoredMaskColumnName("c", mt)
			maskExec(t, conn, fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s GENERATED ALWAYS AS (%s) STORED", table, QuoteIdent(name), ct.SQLName, expr))
			computed, err := maskRows(ctx, conn, "SELECT "+expr+" FROM "+table+" ORDER BY i")
			if err != nil {
				t.Fatal(err)
			}
			stored, err := maskRows(ctx, conn, "SELECT "+QuoteIdent(name)+` COLLATE pg_catalog."default" FROM `+table+" ORDER BY i")
			if err != nil {
				t.Fatal(err)
			}
			for i := range computed {
				if maskShow(computed[i][0]) != maskShow(stored[i][0]) {
					t.Errorf("%s %s of %s: computed %s, stored %s", ty.pgType, mt, maskShow(vals[i]), maskShow(computed[i][0]), maskShow(stored[i][0]))
				}
			}
		}
	}
	// Lookalikes: the same expression under "C" instead of ICU, and the
	// right expression in a column of another type.
	first4, _ := build("MASK_SHOW_FIRST_4", catalog.Column{Name: "c", TypeOID: 25, BaseOID: 25, TypMod: -1, TypeName: "text"}, `"c"`)
	maskExec(t, conn, `CREATE TABLE sm_bad (i int, c text, d text);
		ALTER TABLE sm_bad ADD COLUMN c__pgranger_mask_show_first_4 text GENERATED ALWAYS AS (`+strings.ReplaceAll(first4, `"und-x-icu"`, `"C"`)+`) STORED;
		ALTER TABLE sm_bad ADD COLUMN d__pgranger_mask_show_first_4 varchar GENERATED ALWAYS AS (`+strings.ReplaceAll(first4, `"c"`, `"d"`)+`) STORED`)
	cat, err := catalog.OpenWith(ctx, c.SuperDSN("storedmask"), "storedmask", time.Hour, catalog.Options{StoredMasks: build})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	snap := cat.Current()
	for _, ty := range types {
		rel, ok := snap.Lookup("public", "sm_"+ty.name)
		if !ok {
			t.Fatalf("sm_%s not in the catalog", ty.name)
		}
		if len(rel.StoredMasks) != len(catalog.StoredMaskTypes) {
			t.Errorf("sm_%s: %d stored masks verified, want %d: %+v", ty.name, len(rel.StoredMasks), len(catalog.StoredMaskTypes), rel.StoredMasks)
		}
	}
	bad, _ := snap.Lookup("public", "sm_bad")
	if len(bad.StoredMasks) != 0 {
		t.Errorf("sm_bad: lookalike columns verified: %+v", bad.StoredMasks)
	}
	if len(bad.StoredMaskColumns) != 2 {
		t.Errorf("sm_bad: %d candidates, want 2 (capped though not verified)", len(bad.StoredMaskColumns))
	}

	// An error is no verdict: a catalog role that may not create
	// temporary tables (or any other failure of the check) verifies
	// nothing, and every mask is computed.
	maskExec(t, conn, `CREATE ROLE sm_notemp LOGIN PASSWORD 'sm_notemp';
		REVOKE TEMPORARY ON DATABASE storedmask FROM PUBLIC;
		GRANT SELECT ON ALL TABLES IN SCHEMA public TO sm_notemp`)
	noTemp, err := catalog.OpenWith(ctx, c.DSN("sm_notemp", "sm_notemp", "storedmask"), "storedmask", time.Hour, catalog.Options{StoredMasks: build})
	if err != nil {
		t.Fatal(err)
	}
	rel0, _ := noTemp.Current().Lookup("public", "sm_text")
	if len(rel0.StoredMasks) != 0 || len(rel0.StoredMaskColumns) != len(catalog.StoredMaskTypes) {
		t.Errorf("without TEMP: %d verified (want 0), %d candidates", len(rel0.StoredMasks), len(rel0.StoredMaskColumns))
	}
	noTemp.Close()
	maskExec(t, conn, `GRANT TEMPORARY ON DATABASE storedmask TO PUBLIC`)

	v1 := snap.Version
	maskExec(t, conn, `ALTER TABLE sm_text DROP COLUMN c__pgranger_mask_show_first_4`)
	snap, err = cat.Refresh(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := snap.Lookup("public", "sm_text")
	if snap.Version == v1 {
		t.Error("dropping a stored column did not move the catalog version")
	}
	if _, ok := rel.StoredMask(1, "MASK_SHOW_FIRST_4"); ok || len(rel.StoredMasks) != len(catalog.StoredMaskTypes)-1 {
		t.Errorf("after the drop: %+v", rel.StoredMasks)
	}
	// Re-adding it makes it verified again, under yet another version.
	expr, _ := build("MASK_SHOW_FIRST_4", rel.Columns[1], `"c"`)
	maskExec(t, conn, `ALTER TABLE sm_text ADD COLUMN c__pgranger_mask_show_first_4 text GENERATED ALWAYS AS (`+expr+`) STORED`)
	snap2, err := cat.Refresh(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ = snap2.Lookup("public", "sm_text")
	if _, ok := rel.StoredMask(1, "MASK_SHOW_FIRST_4"); !ok || snap2.Version == snap.Version {
		t.Errorf("after re-adding: version %d (was %d), %+v", snap2.Version, snap.Version, rel.StoredMasks)
	}
}

// storedMaskVectors are the string inputs of the mask tests: those of
// mask-examples.json (when shared/ is there) and generated strings of the
// differential test (any code point class, supplementary characters,
// combining marks), with a NULL and an empty string.
func storedMaskVectors(t *testing.T) []*string {
	empty := ""
	out := []*string{nil, &empty}
	path := filepath.Join(maskModuleRoot(t), "..", "shared", "ranger", "mask-examples.json")
	if _, err := os.Stat(path); err == nil {
		vecs, err := interop.ReadMaskExamples(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vecs {
			if h := v.HiveType(); h == "string" || strings.HasPrefix(h, "varchar") || strings.HasPrefix(h, "char") {
				if in, err := v.InputText(); err == nil {
					out = append(out, in)
				}
			}
		}
	} else {
		t.Logf("%s not found: generated strings only", path)
	}
	r := rand.New(rand.NewPCG(7, 11))
	return append(out, maskGenStrings(r, 2000, 24)...)
}
