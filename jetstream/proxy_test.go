package jetstream_test

import (
	"io"
	"net"
	"sync"
	"testing"
)

// proxy forwards TCP connections on loopback to a server and can hold
// every byte back (a program paused or cut off), drop every connection (a
// network fault), or keep the bytes of the connections open now and
// deliver them late, after the client went on over a new connection (a
// slow path of the old connection's last packets).
type proxy struct {
	l      net.Listener
	target string

	mu     sync.Mutex
	cond   *sync.Cond
	paused bool
	held   int // bytes held back since the last pause or hold
	links  []*link
	wg     sync.WaitGroup
}

// link is one forwarded connection: the client's side and the server's.
type link struct {
	c, s net.Conn
	held bool           // its bytes wait for release
	cut  bool           // its client's side is closed
	done sync.WaitGroup // its two pipes
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
		l := &link{c: c, s: s}
		p.mu.Lock()
		p.links = append(p.links, l)
		p.mu.Unlock()
		p.wg.Add(2)
		l.done.Add(2)
		go p.pipe(l, s, c)
		go p.pipe(l, c, s)
	}
}

func (p *proxy) pipe(l *link, dst, src net.Conn) {
	defer p.wg.Done()
	defer l.done.Done()
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if p.paused || l.held {
				p.held += n
				p.cond.Broadcast()
			}
			for p.paused || l.held {
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
// something while paused or held.
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

// hold holds back the bytes of the connections open now; connections
// made later pass.
func (p *proxy) hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held = 0
	for _, l := range p.links {
		l.held = true
	}
}

// cutClients closes the client's side of the held connections: the
// client sees them end and connects again, while what it sent on them
// still waits for release.
func (p *proxy) cutClients() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.links {
		if l.held {
			l.c.Close()
			l.cut = true
		}
	}
}

// release delivers what the held connections hold to the server and
// returns once the cut ones have delivered it all and are closed.
func (p *proxy) release() {
	p.mu.Lock()
	var cut []*link
	for _, l := range p.links {
		if l.held && l.cut {
			cut = append(cut, l)
		}
		l.held = false
	}
	p.cond.Broadcast()
	p.mu.Unlock()
	for _, l := range cut {
		l.done.Wait()
	}
}

// drop closes every connection through the proxy; clients reconnect.
func (p *proxy) drop() {
	p.mu.Lock()
	links := p.links
	p.links = nil
	p.mu.Unlock()
	for _, l := range links {
		l.c.Close()
		l.s.Close()
	}
}

func (p *proxy) close() {
	p.l.Close()
	p.resume()
	p.release()
	p.drop()
	p.wg.Wait()
}
