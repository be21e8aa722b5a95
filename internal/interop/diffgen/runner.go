package diffgen

import (
	"context"
	"fmt"

	"github.com/pgranger/pgranger/internal/interop"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
)

// Mismatch is a request on which the engines answer differently.
type Mismatch struct {
	Bundle  *ranger.Bundle
	Request Request
	PG, RG  Answer
	Diff    string
	// Named is the documented difference that explains it, "" for none
	// (a bug).
	Named string
}

// Check asks both engines every request against bundle b and returns the
// mismatches, each classified by named. The oracle is loaded with b.
func Check(ctx context.Context, oracle *interop.Ranger, named *Named, b *ranger.Bundle, reqs []Request) ([]Mismatch, error) {
	if _, err := oracle.Load(ctx, b, nil); err != nil {
		return nil, fmt.Errorf("load into Ranger: %w", err)
	}
	eng, err := newEngine(b)
	if err != nil {
		return nil, fmt.Errorf("pgranger: %w", err)
	}
	items := make([]interop.BatchItem, len(reqs))
	for i := range reqs {
		items[i] = reqs[i].OracleItem()
	}
	answers, err := oracle.Batch(ctx, items)
	if err != nil {
		return nil, err
	}
	var out []Mismatch
	for i := range reqs {
		q := &reqs[i]
		pg, rg := PgrangerAnswer(eng, q), OracleAnswer(q, answers[i])
		if d := Diff(q, pg, rg); d != "" {
			m := Mismatch{Bundle: b, Request: *q, PG: pg, RG: rg, Diff: d}
			m.Named = named.Classify(b, q, pg, rg)
			out = append(out, m)
		}
	}
	return out, nil
}

// newEngine is pgranger's engine for b with the proxy's defaults.
func newEngine(b *ranger.Bundle) (*policy.Engine, error) {
	return policy.NewEngine(b, policy.Options{})
}
