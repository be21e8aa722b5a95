// Package interop runs the real systems pgranger claims to agree with as
// test oracles: Apache Ranger's policy engine (RangerBasePlugin of
// ranger-plugins-common, service type hive) and Apache Hive's mask UDFs
// (hive-exec). Each is a JVM started once per test run from the Maven
// project in interop/ at the repository root; it reads one JSON request per
// line on stdin and answers one JSON line on stdout.
//
// build.go finds Java and Maven and builds the oracles' jars (offline when
// ~/.m2 holds everything, else online), proc.go runs one oracle process,
// ranger.go and hive.go are the typed clients. Nothing here is imported by
// the proxy's packages; tests use it to compare pgranger's engine and mask
// model with the originals.
//
// A missing Java, Maven or artifact is an error that says what is missing
// and how to get it (`make interop-deps`); callers fail, they do not skip.
package interop
