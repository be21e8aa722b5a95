// Package maskdiff is the mask differential between the SQL pgranger
// emits for a Ranger mask (sqlrewrite.MaskSQL, run on a real PostgreSQL)
// and Apache Hive's own mask UDFs (the oracle of internal/interop): seeded
// random values of every column type pgranger masks (gen.go, columns.go),
// masked on both sides in batches and compared byte for byte after the
// cast back to the column type (check.go), the differences docs/masks.md
// names and so accepts (named.go), a shrinker that cuts a mismatching
// value down (shrink.go), and the cases such shrinking produced, stored as
// JSON under testdata/regressions and replayed on PostgreSQL alone
// (regress.go).
//
// It is test code: nothing in the proxy imports it.
package maskdiff
