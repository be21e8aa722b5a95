package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// DefaultRangerVersion is the Ranger release the oracle is built against
// unless told otherwise: the one the compose demo and Kyuubi use.
const DefaultRangerVersion = "2.6.0"

// RangerVersionEnv names the environment variable that picks another
// Ranger release for the oracle (for example 2.9.0).
const RangerVersionEnv = "INTEROP_RANGER_VERSION"

// ErrMissingTool is wrapped by errors about a missing java or mvn.
var ErrMissingTool = errors.New("interop: missing tool")

// Artifact is a built oracle: its jar, the jars it runs with, and its main
// class.
type Artifact struct {
	Name      string // "ranger-2.6.0", "hive", "spark"
	Jar       string
	Classpath []string
	MainClass string
	// JVMFlags are added to the common ones (Spark's --add-opens).
	JVMFlags []string
}

// RangerVersion is the Ranger release to use: $INTEROP_RANGER_VERSION or
// DefaultRangerVersion.
func RangerVersion() string {
	if v := strings.TrimSpace(os.Getenv(RangerVersionEnv)); v != "" {
		return v
	}
	return DefaultRangerVersion
}

// Dir is the Maven project of the oracles: interop/ at the repository root,
// found from this source file, so it works from any package's tests.
func Dir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("interop: cannot locate the repository (no caller information)")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "..", "interop")
	if _, err := os.Stat(filepath.Join(dir, "pom.xml")); err != nil {
		return "", fmt.Errorf("interop: the oracles' Maven project is not at %s: %w", dir, err)
	}
	return filepath.Clean(dir), nil
}

// RangerArtifact builds (when needed) and returns the Ranger oracle for a
// Ranger release ("" = RangerVersion()).
func RangerArtifact(ctx context.Context, version string) (*Artifact, error) {
	if version == "" {
		version = RangerVersion()
	}
	if strings.ContainsAny(version, " /\\") || version == "" {
		return nil, fmt.Errorf("interop: %q is not a Ranger version", version)
	}
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	target := filepath.Join(dir, "ranger-oracle", "target", "ranger-"+version)
	return ensure(ctx, dir, "ranger-oracle", target, "ranger-"+version, "org.pgranger.interop.ranger.RangerOracle",
		[]string{"-Dranger.version=" + version})
}

// HiveArtifact builds (when needed) and returns the Hive mask oracle.
func HiveArtifact(ctx context.Context) (*Artifact, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	target := filepath.Join(dir, "hive-oracle", "target")
	return ensure(ctx, dir, "hive-oracle", target, "hive", "org.pgranger.interop.hive.HiveMaskOracle", nil)
}

// SparkArtifact builds (when needed) and returns the Spark oracle.
func SparkArtifact(ctx context.Context) (*Artifact, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	target := filepath.Join(dir, "spark-oracle", "target")
	a, err := ensure(ctx, dir, "spark-oracle", target, "spark", "org.pgranger.interop.spark.SparkOracle", nil)
	if err != nil {
		return nil, err
	}
	a.JVMFlags = sparkJVMFlags
	return a, nil
}

// sparkJVMFlags: the modules Spark 3.5 reaches into on Java 17 (its
// launcher's list), and a heap bound for a machine shared with other work.
var sparkJVMFlags = []string{
	"-Xmx1g",
	"--add-opens=java.base/java.lang=ALL-UNNAMED",
	"--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
	"--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
	"--add-opens=java.base/java.io=ALL-UNNAMED",
	"--add-opens=java.base/java.net=ALL-UNNAMED",
	"--add-opens=java.base/java.nio=ALL-UNNAMED",
	"--add-opens=java.base/java.util=ALL-UNNAMED",
	"--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
	"--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
	"--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
	"--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
	"--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
	"--add-opens=java.base/sun.security.action=ALL-UNNAMED",
	"--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
	"-Djdk.reflect.useDirectMethodHandle=false",
}

// JavaPath is the java binary: $JAVA_HOME/bin/java, else java on PATH.
func JavaPath() (string, error) {
	if h := os.Getenv("JAVA_HOME"); h != "" {
		p := filepath.Join(h, "bin", "java")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("%w: java (JDK 17) is not on PATH and JAVA_HOME has none; install it (Debian: openjdk-17-jdk-headless) or run `make interop-deps`", ErrMissingTool)
	}
	return p, nil
}

func mvnPath() (string, error) {
	p, err := exec.LookPath("mvn")
	if err != nil {
		return "", fmt.Errorf("%w: mvn (Maven 3) is not on PATH; install it (Debian: maven) or run `make interop-deps`", ErrMissingTool)
	}
	return p, nil
}

// ensure returns the module's artifact, running Maven first when the jar
// or its class path is missing or older than the sources. Builds of
// different test binaries are serialised with a lock file.
func ensure(ctx context.Context, dir, module, target, name, mainClass string, props []string) (*Artifact, error) {
	if _, err := JavaPath(); err != nil {
		return nil, err
	}
	jar := filepath.Join(target, module+"-1.jar")
	cpFile := filepath.Join(target, "classpath.txt")
	if a, err := readArtifact(dir, module, jar, cpFile, name, mainClass); err == nil {
		return a, nil
	}
	mvn, err := mvnPath()
	if err != nil {
		return nil, err
	}
	unlock, err := lock(filepath.Join(dir, "target", "build.lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Another process may have built it while this one waited.
	if a, err := readArtifact(dir, module, jar, cpFile, name, mainClass); err == nil {
		return a, nil
	}
	args := append([]string{"-B", "-q", "package", "-pl", module, "-am"}, props...)
	if _, err := runMaven(ctx, mvn, dir, append([]string{"-o"}, args...)); err != nil {
		// Offline failed: something is not in ~/.m2 yet. Fetch it (the
		// online run's output says what went wrong, if anything).
		fmt.Fprintf(os.Stderr, "interop: building %s offline failed, fetching from Maven Central (a cold ~/.m2 downloads a few hundred MB)\n", name)
		if out, err := runMaven(ctx, mvn, dir, args); err != nil {
			return nil, fmt.Errorf("interop: mvn %s in %s failed: %w\n%s", strings.Join(args, " "), dir, err, tail(out, 4000))
		}
	}
	a, err := readArtifact(dir, module, jar, cpFile, name, mainClass)
	if err != nil {
		return nil, fmt.Errorf("interop: Maven succeeded but the oracle is not usable: %w", err)
	}
	return a, nil
}

func runMaven(ctx context.Context, mvn, dir string, args []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, mvn, args...)
	cmd.Dir = dir
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.Bytes(), err
}

// readArtifact returns the artifact when the jar and every class path
// entry exist and the jar is newer than every source of the module, of
// the shared module and of the parent POM.
func readArtifact(dir, module, jar, cpFile, name, mainClass string) (*Artifact, error) {
	js, err := os.Stat(jar)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(cpFile)
	if err != nil {
		return nil, err
	}
	var cp []string
	for _, p := range strings.Split(strings.TrimSpace(string(data)), string(os.PathListSeparator)) {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("class path entry %s: %w", p, err)
		}
		cp = append(cp, p)
	}
	newest, err := newestSource(filepath.Join(dir, "pom.xml"), filepath.Join(dir, "common"), filepath.Join(dir, module))
	if err != nil {
		return nil, err
	}
	if newest.After(js.ModTime()) {
		return nil, fmt.Errorf("%s is older than its sources", jar)
	}
	return &Artifact{Name: name, Jar: jar, Classpath: cp, MainClass: mainClass}, nil
}

// newestSource is the latest modification time of the POMs and Java
// sources under the given paths (target/ directories are not sources).
func newestSource(paths ...string) (time.Time, error) {
	var newest time.Time
	for _, root := range paths {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "target" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".java") && filepath.Base(p) != "pom.xml" {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			if info.ModTime().After(newest) {
				newest = info.ModTime()
			}
			return nil
		})
		if err != nil {
			return time.Time{}, err
		}
	}
	return newest, nil
}

func lock(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("interop: lock %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
