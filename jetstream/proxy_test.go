package jetstream_test

import (
	"io"
	"net"
	"sync"
	"testing"
)

// proxy forwards TCP connections on loopback to a server and can hold
// every byte back (a program paused or cut off) or drop every connection
// (a network fault).
type proxy struct {
	l      net.Listener
	target string

	mu     sync.Mutex
	cond   *sync.Cond
	paused bool
	held   int // bytes held back since the last pause
	conns  []net.Conn
	wg     sync.WaitGroup
}

func startProxy(t testing.TB, target string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	p := &proxy{l: l, target: target}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// URL is the address clients connect to.
func (p *proxy) URL() string { return "nats://" + p.l.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, s)
		go p.pipe(s, c)
	}
}

func (p *proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if p.paused {
				p.held += n
				p.cond.Broadcast()
			}
			for p.paused {
				p.cond.Wait()
			}
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				src.Close()
			}
			return
		}
	}
}

// pause holds every byte back until resume.
func (p *proxy) pause() {
	p.mu.Lock()
	p.paused, p.held = true, 0
	p.mu.Unlock()
}

// waitHeld waits until the proxy holds bytes back: a client sent
// something while paused.
func (p *proxy) waitHeld() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.held == 0 {
		p.cond.Wait()
	}
}

func (p *proxy) resume() {
	p.mu.Lock()
	p.paused = false
	p.cond.Broadcast()
	p.mu.Unlock()
}

// drop closes every connection through the proxy; clients reconnect.
func (p *proxy) drop() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

func (p *proxy) close() {
	p.l.Close()
	p.resume()
	p.drop()
	p.wg.Wait()
}
