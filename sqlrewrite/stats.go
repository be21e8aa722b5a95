package sqlrewrite

import (
	"github.com/maypok86/otter/v2"
	"github.com/maypok86/otter/v2/stats"
)

// CacheStats counts lookups of the rewrite caches: Statement is the
// exact-text cache every Rewrite with trusted policies asks first,
// Template the literal-template cache asked on its misses.
type CacheStats struct {
	StatementHits, StatementMisses uint64
	TemplateHits, TemplateMisses   uint64
}

// EnableCacheStats makes the rewriter count cache hits and misses (read
// with CacheStats). Call it once, after New and before the first Rewrite:
// it replaces the still empty caches with counting ones of the same size.
func (rw *Rewriter) EnableCacheStats() {
	rw.cache = otter.Must(&otter.Options[cacheKey, *Result]{MaximumSize: int(rw.cache.GetMaximum()), StatsRecorder: stats.NewCounter()})
	rw.templates = otter.Must(&otter.Options[cacheKey, *template]{MaximumSize: int(rw.templates.GetMaximum()), StatsRecorder: stats.NewCounter()})
}

// CacheStats returns the counts since EnableCacheStats (zero without it).
func (rw *Rewriter) CacheStats() CacheStats {
	s, t := rw.cache.Stats(), rw.templates.Stats()
	return CacheStats{StatementHits: s.Hits, StatementMisses: s.Misses, TemplateHits: t.Hits, TemplateMisses: t.Misses}
}
