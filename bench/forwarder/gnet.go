package main

import (
	"context"
	"net"

	"github.com/panjf2000/gnet/v2"
)

// gnetRelay relays with gnet v2: a client connection accepted on a loop
// has its backend connection registered on the same loop (EventLoop.Register),
// whose context is the client connection; each side's Context is its
// peer, so relaying is a Write on the loop both belong to.
type gnetRelay struct {
	gnet.BuiltinEventEngine
	backend net.Addr
}

func (r *gnetRelay) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	if client, ok := c.Context().(gnet.Conn); ok {
		// The backend connection: pair it with its client and relay
		// what the client sent meanwhile.
		client.SetContext(c)
		client.Wake(nil)
		return nil, gnet.None
	}
	if _, err := c.EventLoop().Register(gnet.NewContext(context.Background(), c), r.backend); err != nil {
		return nil, gnet.Close
	}
	return nil, gnet.None
}

func (r *gnetRelay) OnTraffic(c gnet.Conn) gnet.Action {
	peer, ok := c.Context().(gnet.Conn)
	if !ok {
		return gnet.None // no backend yet: the bytes wait in c's buffer
	}
	b, err := c.Next(-1)
	if err != nil {
		return gnet.Close
	}
	if _, err := peer.Write(b); err != nil {
		return gnet.Close
	}
	return gnet.None
}

func (r *gnetRelay) OnClose(c gnet.Conn, _ error) gnet.Action {
	if peer, ok := c.Context().(gnet.Conn); ok {
		peer.Close()
	}
	return gnet.None
}

// runGnet relays every connection on one gnet event loop.
func runGnet(listen, backend string) error {
	addr, err := net.ResolveTCPAddr("tcp", backend)
	if err != nil {
		return err
	}
	return gnet.Run(&gnetRelay{backend: addr}, "tcp://"+listen,
		gnet.WithMulticore(false), gnet.WithNumEventLoop(1), gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithLoadBalancing(gnet.LeastConnections))
}
