//go:build !linux

package main

import "errors"

// runEpoll needs epoll.
func runEpoll(listen, backend string) error {
	return errors.New("-mode epoll needs Linux")
}

// runCLoop needs epoll.
func runCLoop(listen, backend string) error {
	return errors.New("-mode cloop needs Linux")
}
