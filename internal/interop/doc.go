// Package interop runs the real systems pgranger claims to agree with as
// test oracles: Apache Ranger's policy engine (RangerBasePlugin of
// ranger-plugins-common, service type hive), Apache Hive's mask UDFs
// (hive-exec), and Spark 3.5 with Ranger's plugin downloading from a
// Ranger server, governing JDBC tables as Kyuubi's Spark AuthZ plugin does
// and evaluating its mask expressions. Each is a JVM started once per test
// run from the Maven project in interop/ at the repository root; it reads
// one JSON request per line on stdin and answers one JSON line on stdout.
//
// build.go finds Java and Maven and builds the oracles' jars (offline when
// ~/.m2 holds everything, else online), proc.go runs one oracle process,
// ranger.go, hive.go and spark.go are the typed clients. Nothing here is
// imported by the proxy's packages; tests use it to compare pgranger's
// engine, mask model and enforcement with the originals.
//
// A missing Java, Maven or artifact is an error that says what is missing
// and how to get it (`make interop-deps`); callers fail, they do not skip.
package interop
