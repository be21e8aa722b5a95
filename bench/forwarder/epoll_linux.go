package main

import (
	"net"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fwdSocket is one side of a relayed connection in the epoll forwarder.
// Only the loop goroutine touches it.
type fwdSocket struct {
	fd   int
	peer *fwdSocket
	// out holds what the socket did not take; while it is not empty the
	// socket waits for EPOLLOUT and its peer is not read.
	out []byte
}

// runEpoll relays every connection on one loop. The sockets are created
// with raw system calls, so the Go runtime's poller knows none of them: it
// waits only on the loop's epoll descriptor (readable while the set has
// ready events) and on the listener.
func runEpoll(listen, backend string) error {
	ip, port, err := ipv4Backend(backend)
	if err != nil {
		return err
	}
	baddr := &unix.SockaddrInet4{Port: port}
	copy(baddr.Addr[:], ip)

	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		return err
	}
	ep := os.NewFile(uintptr(epfd), "epoll") // registered with the runtime's poller
	rc, err := ep.SyscallConn()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	accepted := make(chan [2]int, 64)
	wake, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return err
	}
	unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wake)})
	go func() {
		// Accepting and dialling block; they stay off the loop. The
		// accepted connection's descriptor is duplicated out of the
		// runtime's poller (the original is closed, which unregisters it).
		for {
			c, err := ln.Accept()
			if err != nil {
				os.Exit(1)
			}
			cfd := detach(c)
			bfd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil || cfd < 0 {
				unix.Close(cfd)
				continue
			}
			if err := unix.Connect(bfd, baddr); err != nil {
				unix.Close(cfd)
				unix.Close(bfd)
				continue
			}
			unix.SetsockoptInt(bfd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
			unix.SetNonblock(cfd, true)
			unix.SetNonblock(bfd, true)
			accepted <- [2]int{cfd, bfd}
			var one [8]byte
			one[0] = 1
			unix.Write(wake, one[:])
		}
	}()

	sockets := map[int]*fwdSocket{}
	events := make([]unix.EpollEvent, 256)
	buf := make([]byte, 32<<10)
	closePair := func(s *fwdSocket) {
		for _, x := range []*fwdSocket{s, s.peer} {
			unix.EpollCtl(epfd, unix.EPOLL_CTL_DEL, x.fd, nil)
			unix.Close(x.fd)
			delete(sockets, x.fd)
		}
	}
	for {
		var n int
		var perr error
		err := rc.Read(func(uintptr) bool {
			n, perr = epollPoll(epfd, events)
			return n > 0 || (perr != nil && perr != unix.EINTR)
		})
		if err != nil {
			return err
		}
		if perr != nil {
			return perr
		}
		for _, ev := range events[:n] {
			fd := int(ev.Fd)
			if fd == wake {
				var b [8]byte
				unix.Read(wake, b[:])
				for len(accepted) > 0 {
					p := <-accepted
					c, b := &fwdSocket{fd: p[0]}, &fwdSocket{fd: p[1]}
					c.peer, b.peer = b, c
					sockets[c.fd], sockets[b.fd] = c, b
					unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(c.fd)})
					unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, b.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(b.fd)})
				}
				continue
			}
			s := sockets[fd]
			if s == nil {
				continue
			}
			if ev.Events&unix.EPOLLOUT != 0 && len(s.out) > 0 {
				w, err := send(s.fd, s.out)
				if err != nil && err != unix.EAGAIN {
					closePair(s)
					continue
				}
				s.out = s.out[max(w, 0):]
				if len(s.out) == 0 {
					// Drained: stop waiting to write, read the peer again.
					unix.EpollCtl(epfd, unix.EPOLL_CTL_MOD, s.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(s.fd)})
					unix.EpollCtl(epfd, unix.EPOLL_CTL_MOD, s.peer.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(s.peer.fd)})
				}
			}
			if ev.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) == 0 || len(s.peer.out) > 0 {
				continue
			}
			r, err := recv(s.fd, buf)
			if r == 0 || (err != nil && err != unix.EAGAIN) {
				closePair(s)
				continue
			}
			if r < 0 {
				continue
			}
			w, err := send(s.peer.fd, buf[:r])
			if err != nil && err != unix.EAGAIN {
				closePair(s)
				continue
			}
			if w = max(w, 0); w < r {
				// The peer is full: keep the rest, wait for it to drain,
				// stop reading this side meanwhile.
				s.peer.out = append(s.peer.out[:0], buf[w:r]...)
				unix.EpollCtl(epfd, unix.EPOLL_CTL_MOD, s.peer.fd, &unix.EpollEvent{Events: unix.EPOLLOUT, Fd: int32(s.peer.fd)})
				unix.EpollCtl(epfd, unix.EPOLL_CTL_MOD, s.fd, &unix.EpollEvent{Events: 0, Fd: int32(s.fd)})
			}
		}
	}
}

// ipv4Backend splits an "a.b.c.d:port" backend address (the loops
// connect with raw system calls, to IPv4 only).
func ipv4Backend(backend string) (net.IP, int, error) {
	host, p, err := net.SplitHostPort(backend)
	if err != nil {
		return nil, 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return nil, 0, err
	}
	ip := net.ParseIP(host).To4()
	if ip == nil {
		return nil, 0, &net.AddrError{Err: "an IPv4 backend address is needed", Addr: backend}
	}
	return ip, port, nil
}

// epollPoll is epoll_pwait with a zero timeout as a raw system call (it
// cannot block), as pgranger's loop polls.
func epollPoll(epfd int, events []unix.EpollEvent) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// send is sendto(2) with no address and recv recvfrom(2), what pgbouncer
// calls, made as raw system calls (a non-blocking socket does not block),
// as pgranger makes them.
func send(fd int, p []byte) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), unix.MSG_NOSIGNAL, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

func recv(fd int, p []byte) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

// detach takes a net.Conn's socket out of the Go runtime: a duplicate of
// its descriptor, the original closed (which removes it from the runtime's
// poller). -1 if that fails.
func detach(c net.Conn) int {
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		c.Close()
		return -1
	}
	fd := -1
	rc.Control(func(f uintptr) {
		fd, err = unix.Dup(int(f))
	})
	c.Close()
	if err != nil {
		return -1
	}
	unix.CloseOnExec(fd)
	return fd
}
