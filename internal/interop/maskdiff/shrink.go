package maskdiff

import (
	"context"

	"github.com/pgranger/pgranger/ranger"
)

// Shrink cuts a mismatch's string value down: it drops one character at a
// time, all the candidates of a round masked in one batch on each side,
// and keeps the shortest value on which the same mask still differs
// and no named difference explains it, until no character can go.
// Integers, dates and the other types are one value already; they come
// back as they are.
func (h *Harness) Shrink(ctx context.Context, m Mismatch) (Mismatch, error) {
	if m.Column.Kind != KindString && m.Mask != ranger.MaskTypeCustom {
		return m, nil
	}
	if m.Value == nil {
		return m, nil
	}
	best := m
	for {
		runes := []rune(*best.Value)
		if len(runes) == 0 {
			return best, nil
		}
		rows := make([]Row, len(runes))
		for i := range runes {
			cand := string(runes[:i]) + string(runes[i+1:])
			if m.Mask == ranger.MaskTypeCustom {
				rows[i] = Row{Custom: &cand}
			} else {
				rows[i] = Row{Value: &cand}
			}
		}
		ms, _, err := h.Check(ctx, m.Column, rows)
		if err != nil {
			return best, err
		}
		next := -1
		for i, c := range ms {
			if c.Mask == m.Mask && c.Named == "" && (next < 0 || len(*c.Value) < len(*ms[next].Value)) {
				next = i
			}
		}
		if next < 0 {
			return best, nil
		}
		best = ms[next]
	}
}
