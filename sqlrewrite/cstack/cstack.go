// Package cstack reports the size of the C stack that cgo calls run on.
//
// pg_query's parser, serialiser and deparser recurse once per level of a
// statement's tree on the stack of the thread that calls them, and a C
// stack overflow kills the whole process. The Go runtime starts its
// threads with pthread's default attributes, so a cgo call gets glibc's
// default thread stack: RLIMIT_STACK as it was when the process started,
// or 2 MiB when that limit is unlimited (musl: 128 KiB whatever the limit).
// The main thread grows up to RLIMIT_STACK. Size is the smaller of the two,
// the least any cgo call of this process can count on.
package cstack

/*
#include <pthread.h>

// default_thread_stack is what the Go runtime's own thread creation
// (runtime/cgo, _cgo_sys_thread_start) reads: the stack size of freshly
// initialised pthread attributes.
static size_t default_thread_stack(void) {
	pthread_attr_t attr;
	size_t size = 0;
	if (pthread_attr_init(&attr) != 0) {
		return 0;
	}
	pthread_attr_getstacksize(&attr, &size);
	pthread_attr_destroy(&attr);
	return size;
}
*/
import "C"

// Size returns the C stack, in bytes, a cgo call of this process has at
// least; 0 when it cannot be known.
func Size() int {
	s := int(C.default_thread_stack())
	if main := mainStackLimit(); main > 0 && main < s {
		s = main
	}
	return s
}
