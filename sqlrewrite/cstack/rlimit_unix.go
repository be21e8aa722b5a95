//go:build unix

package cstack

import "syscall"

// mainStackLimit is RLIMIT_STACK, which bounds the main thread's stack;
// 0 when unlimited (RLIM_INFINITY, all ones) or unknown.
func mainStackLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_STACK, &rl); err != nil || rl.Cur > 1<<40 {
		return 0
	}
	return int(rl.Cur)
}
