// Package testkeycloak runs a real Keycloak for tests: the
// keycloak-quarkus-dist distribution from Maven Central, started in dev
// mode with an in-memory database and the realms a test hands it, on a
// loopback port. It fetches tokens with the password grant and makes the
// few admin calls the tests need (a client with another audience or a
// short token lifespan).
//
// dist.go finds or fetches the distribution (Maven, offline first, into
// ~/.m2, unpacked once into the user's cache directory); server.go starts
// and stops one Keycloak; client.go speaks its token and admin APIs.
package testkeycloak

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Version is the Keycloak release the tests run: a 26.x that still starts
// on Java 17 (deprecated there; 26.6 is the first to support Java 25).
const Version = "26.5.6"

// Artifact is its Maven coordinate.
const Artifact = "org.keycloak:keycloak-quarkus-dist:" + Version + ":tar.gz"

// ErrMissing is wrapped by errors about a missing java, mvn or artifact.
var ErrMissing = errors.New("testkeycloak: missing")

// CacheDir is where distributions are unpacked:
// $XDG_CACHE_HOME/pgranger-e2e/keycloak (~/.cache/…). The first start of
// a distribution writes its Quarkus build (lib/quarkus) there, which later
// starts reuse; that is half of a cold start.
func CacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("testkeycloak: no cache directory: %w", err)
	}
	return filepath.Join(base, "pgranger-e2e", "keycloak"), nil
}

// Dist returns the unpacked distribution's directory, fetching and
// unpacking it first when needed. Fetching runs Maven offline first (a
// warm ~/.m2 needs no network), then online: about 165 MB.
func Dist(ctx context.Context) (string, error) {
	if _, err := javaPath(); err != nil {
		return "", err
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "keycloak-"+Version)
	if complete(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	unlock, err := lock(filepath.Join(cache, "fetch.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if complete(dir) {
		return dir, nil
	}
	tgz, err := fetch(ctx, cache)
	if err != nil {
		return "", err
	}
	if err := unpack(tgz, cache, dir); err != nil {
		return "", err
	}
	// The copy is not needed again: ~/.m2 keeps the tarball.
	os.Remove(tgz)
	return dir, nil
}

// complete: kc.sh and the Quarkus runner are in place, and the marker the
// unpacking writes last says the unpack finished.
func complete(dir string) bool {
	for _, p := range []string{"bin/kc.sh", "lib/quarkus-run.jar", ".unpacked"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return false
		}
	}
	return true
}

// fetch runs mvn dependency:copy for the distribution into dir and
// returns the tarball's path.
func fetch(ctx context.Context, dir string) (string, error) {
	out := filepath.Join(dir, "keycloak-quarkus-dist-"+Version+".tar.gz")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return "", fmt.Errorf("%w: mvn (Maven 3) is not on PATH; install it (Debian: maven) or run `make interop-deps`", ErrMissing)
	}
	args := []string{"-B", "-q", "dependency:copy", "-Dartifact=" + Artifact, "-DoutputDirectory=" + dir}
	if _, err := runMaven(ctx, mvn, dir, append([]string{"-o"}, args...)); err != nil {
		fmt.Fprintf(os.Stderr, "testkeycloak: %s is not in ~/.m2, fetching it from Maven Central (about 165 MB)\n", Artifact)
		if log, err := runMaven(ctx, mvn, dir, args); err != nil {
			return "", fmt.Errorf("%w: mvn dependency:copy %s failed: %v\n%s", ErrMissing, Artifact, err, tail(log, 3000))
		}
	}
	if _, err := os.Stat(out); err != nil {
		return "", fmt.Errorf("%w: Maven succeeded but %s is not there: %v", ErrMissing, out, err)
	}
	return out, nil
}

func runMaven(ctx context.Context, mvn, dir string, args []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, mvn, args...)
	cmd.Dir = dir
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.Bytes(), err
}

// unpack extracts the tarball (its single top directory keycloak-<v>/)
// into a temporary directory beside dir and renames it into place, so a
// crash never leaves a half distribution that looks complete.
func unpack(tgz, cache, dir string) error {
	tmp, err := os.MkdirTemp(cache, "unpack-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("testkeycloak: %s: %w", tgz, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("testkeycloak: %s: %w", tgz, err)
		}
		name := filepath.Clean(h.Name)
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("testkeycloak: %s: entry %q leaves the directory", tgz, h.Name)
		}
		target := filepath.Join(tmp, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			w, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o755|0o600)
			if err != nil {
				return err
			}
			if _, err := io.Copy(w, tr); err != nil {
				w.Close()
				return err
			}
			if err := w.Close(); err != nil {
				return err
			}
		}
	}
	top := filepath.Join(tmp, "keycloak-"+Version)
	if _, err := os.Stat(filepath.Join(top, "bin", "kc.sh")); err != nil {
		return fmt.Errorf("testkeycloak: %s has no keycloak-%s/bin/kc.sh", tgz, Version)
	}
	if err := os.WriteFile(filepath.Join(top, ".unpacked"), []byte(Artifact+"\n"), 0o644); err != nil {
		return err
	}
	os.RemoveAll(dir)
	return os.Rename(top, dir)
}

func javaPath() (string, error) {
	if h := os.Getenv("JAVA_HOME"); h != "" {
		p := filepath.Join(h, "bin", "java")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("%w: java (JDK 17 or later) is not on PATH and JAVA_HOME has none; install it (Debian: openjdk-17-jdk-headless) or run `make interop-deps`", ErrMissing)
	}
	return p, nil
}

func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("testkeycloak: lock %s: %w", path, err)
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
