// Package archtest holds the test that keeps the imports of this module
// to the rules of docs/architecture.md: the package map there is the
// rule, read by the test, so the document and the code cannot drift apart.
package archtest
