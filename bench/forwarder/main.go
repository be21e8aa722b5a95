// Command forwarder relays TCP connections to one backend address byte for
// byte, parsing nothing, in one of three ways. `bench -forwarders` runs it
// beside pgbouncer and pgranger to measure what each way of relaying costs
// by itself (docs/history/performance.md, "Relaying alone: three forwarders that parse nothing"):
//
//   - goroutines: a goroutine per direction per connection, each a
//     read-then-write loop on net.TCPConn (not io.Copy, which splices);
//   - epoll: one event loop over raw non-blocking sockets with epoll, the
//     loop's epoll descriptor parked on the Go runtime's poller, the way
//     pgranger's event loop waits (pgwire/eventloop_linux.go);
//   - gnet: github.com/panjf2000/gnet/v2 with one event loop, each
//     backend connection registered on its client's loop, so a relay is a
//     Write on the same loop;
//   - cloop: the same loop written in C and entered once through cgo,
//     blocking in epoll_wait on a thread that never returns to Go: what a
//     relay core outside Go's scheduler would cost.
//
// It is a measuring instrument, not a proxy: no authentication, no
// protocol, no limits. It listens on a loopback address only. Its test is
// the benchmark itself: pgbench runs its whole protocol through each mode
// and fails on any byte a forwarder loses or reorders.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on (loopback)")
	backend := flag.String("backend", "", "address to relay every connection to")
	mode := flag.String("mode", "goroutines", "goroutines, epoll, gnet or cloop")
	flag.Parse()
	if *backend == "" {
		fmt.Fprintln(os.Stderr, "forwarder: -backend is required")
		os.Exit(2)
	}
	host, _, err := net.SplitHostPort(*listen)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		fmt.Fprintln(os.Stderr, "forwarder: -listen must be a loopback address")
		os.Exit(2)
	}
	switch *mode {
	case "goroutines":
		err = runGoroutines(*listen, *backend)
	case "epoll":
		err = runEpoll(*listen, *backend)
	case "gnet":
		err = runGnet(*listen, *backend)
	case "cloop":
		err = runCLoop(*listen, *backend)
	default:
		err = fmt.Errorf("unknown -mode %q", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "forwarder:", err)
		os.Exit(1)
	}
}

// runGoroutines relays each connection with two goroutines.
func runGoroutines(listen, backend string) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			b, err := net.Dial("tcp", backend)
			if err != nil {
				c.Close()
				return
			}
			go pump(c, b)
			pump(b, c)
		}()
	}
}

// pump copies from src to dst until either fails, then closes both.
func pump(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
