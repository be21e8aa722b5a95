package sqlrewrite

// CacheStats counts lookups of the rewrite caches: Statement is the
// exact-text cache every Rewrite with trusted policies asks first,
// Template the literal-template cache asked on its misses.
type CacheStats struct {
	StatementHits, StatementMisses uint64
	TemplateHits, TemplateMisses   uint64
}

// CacheStats returns the counts since New; all zero unless
// Options.CacheStats was set.
func (rw *Rewriter) CacheStats() CacheStats {
	s, t := rw.cache.Stats(), rw.templates.Stats()
	return CacheStats{StatementHits: s.Hits, StatementMisses: s.Misses, TemplateHits: t.Hits, TemplateMisses: t.Misses}
}
