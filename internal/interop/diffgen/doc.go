// Package diffgen is the decision differential between pgranger's policy
// engine (package policy) and Apache Ranger's (the oracle of
// internal/interop): a seeded generator of random bundles and requests
// (gen.go), the comparison of every field a caller acts on (compare.go),
// the differences docs/policy-semantics.md names and so accepts
// (named.go), a shrinker that cuts a failing case down to a minimal bundle
// and request (shrink.go), and the regression cases such shrinking
// produced, stored as JSON under testdata/regressions and replayed
// against pgranger's engine alone (regress.go).
//
// It is test code: nothing in the proxy imports it.
package diffgen
