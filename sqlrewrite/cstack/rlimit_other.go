//go:build !unix

package cstack

// mainStackLimit: no RLIMIT_STACK here; the thread default decides.
func mainStackLimit() int { return 0 }
