//go:build unix

package cstack

import (
	"syscall"
	"testing"
)

// The size is the process's RLIMIT_STACK when that is finite (glibc takes
// its default thread stack from it), and never more.
func TestSizeFollowsRLIMIT_STACK(t *testing.T) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_STACK, &rl); err != nil {
		t.Skip(err)
	}
	s := Size()
	if s <= 0 {
		t.Fatalf("Size() = %d", s)
	}
	if rl.Cur <= 1<<40 && s != int(rl.Cur) {
		t.Errorf("Size() = %d, RLIMIT_STACK = %d", s, rl.Cur)
	}
}
