package main

/*
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

// One side of a relayed connection; peer is the other side, out what the
// peer did not take yet.
struct side {
	int fd;
	struct side *peer;
	char *out;
	size_t outlen;
};

static void set_events(int ep, struct side *s, unsigned ev) {
	struct epoll_event e = {.events = ev, .data.ptr = s};
	epoll_ctl(ep, EPOLL_CTL_MOD, s->fd, &e);
}

static void close_pair(int ep, struct side *s) {
	struct side *p = s->peer;
	epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL);
	epoll_ctl(ep, EPOLL_CTL_DEL, p->fd, NULL);
	close(s->fd);
	close(p->fd);
	free(s->out);
	free(p->out);
	free(s);
	free(p);
}

// relay_loop accepts on lfd and relays each connection to the IPv4
// backend; it returns only on an error of epoll. Blocking epoll_wait, one
// thread, recv and send: the shape of pgbouncer's loop, parsing nothing.
static int relay_loop(int lfd, const char *bhost, int bport) {
	struct sockaddr_in baddr;
	memset(&baddr, 0, sizeof baddr);
	baddr.sin_family = AF_INET;
	baddr.sin_port = htons(bport);
	inet_pton(AF_INET, bhost, &baddr.sin_addr);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0) return -1;
	struct epoll_event le = {.events = EPOLLIN, .data.ptr = NULL};
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &le);
	struct epoll_event evs[256];
	static char buf[32768];
	int one = 1;
	for (;;) {
		int n = epoll_wait(ep, evs, 256, -1);
		if (n < 0) {
			if (errno == EINTR) continue;
			return -1;
		}
		for (int i = 0; i < n; i++) {
			struct side *s = evs[i].data.ptr;
			unsigned ev = evs[i].events;
			if (s == NULL) {
				int c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
				if (c < 0) continue;
				int b = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
				if (b < 0 || connect(b, (struct sockaddr *)&baddr, sizeof baddr) < 0) {
					close(c);
					if (b >= 0) close(b);
					continue;
				}
				setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
				setsockopt(b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
				fcntl(b, F_SETFL, fcntl(b, F_GETFL) | O_NONBLOCK);
				struct side *cs = calloc(1, sizeof *cs), *bs = calloc(1, sizeof *bs);
				cs->fd = c; bs->fd = b; cs->peer = bs; bs->peer = cs;
				struct epoll_event e1 = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = cs};
				struct epoll_event e2 = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = bs};
				epoll_ctl(ep, EPOLL_CTL_ADD, c, &e1);
				epoll_ctl(ep, EPOLL_CTL_ADD, b, &e2);
				continue;
			}
			if ((ev & EPOLLOUT) && s->outlen > 0) {
				ssize_t w = send(s->fd, s->out, s->outlen, MSG_NOSIGNAL);
				if (w < 0 && errno != EAGAIN) { close_pair(ep, s); continue; }
				if (w > 0) {
					memmove(s->out, s->out + w, s->outlen - w);
					s->outlen -= w;
				}
				if (s->outlen == 0) {
					set_events(ep, s, EPOLLIN | EPOLLRDHUP);
					set_events(ep, s->peer, EPOLLIN | EPOLLRDHUP);
				}
			}
			if (!(ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) || s->peer->outlen > 0) continue;
			ssize_t r = recv(s->fd, buf, sizeof buf, 0);
			if (r == 0 || (r < 0 && errno != EAGAIN)) { close_pair(ep, s); continue; }
			if (r < 0) continue;
			ssize_t w = send(s->peer->fd, buf, r, MSG_NOSIGNAL);
			if (w < 0 && errno != EAGAIN) { close_pair(ep, s); continue; }
			if (w < 0) w = 0;
			if (w < r) {
				struct side *p = s->peer;
				p->out = realloc(p->out, r - w);
				memcpy(p->out, buf + w, r - w);
				p->outlen = r - w;
				set_events(ep, p, EPOLLOUT);
				set_events(ep, s, 0);
			}
		}
	}
}
*/
import "C"

import (
	"net"
	"runtime"
	"unsafe"
)

// runCLoop relays every connection on one loop written in C and called
// once through cgo: its thread blocks in epoll_wait and never comes back
// to Go, so the Go runtime has no part in the steady state — what a relay
// core outside Go's scheduler would cost.
func runCLoop(listen, backend string) error {
	ip, port, err := ipv4Backend(backend)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	f, err := ln.(*net.TCPListener).File() // a blocking duplicate the C loop owns
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	host := C.CString(ip.String())
	defer C.free(unsafe.Pointer(host))
	C.relay_loop(C.int(f.Fd()), host, C.int(port))
	return net.UnknownNetworkError("the C loop's epoll failed")
}
