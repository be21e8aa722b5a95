package e2e

import (
	"context"
	"testing"

	"github.com/pgranger/pgranger/internal/interop"
	"github.com/pgranger/pgranger/policy"
)

// hiveMask is what a column of PostgreSQL type pgType masked with the
// Ranger mask type holds for each value, as Hive's own UDF (the Hive
// oracle of internal/interop) computes it, cast back to the column type:
// the expected value of a masked column. Values are not NULL.
func hiveMask(t *testing.T, h *interop.Hive, maskType, pgType string, values ...string) []string {
	t.Helper()
	q := interop.PGMaskRequest{PGType: pgType, Values: make([]*string, len(values))}
	for _, mt := range policy.StockHiveServiceDef().DataMaskDef.MaskTypes {
		if mt.Name == maskType {
			q.Transformer = mt.Transformer
		}
	}
	if q.Transformer == "" {
		t.Fatalf("mask type %s has no transformer in the hive service-def", maskType)
	}
	for i := range values {
		q.Values[i] = &values[i]
	}
	res, err := h.MaskPG(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(res))
	for i, r := range res {
		if r == nil {
			t.Fatalf("Hive's %s of %s %q is NULL", maskType, pgType, values[i])
		}
		out[i] = *r
	}
	return out
}
