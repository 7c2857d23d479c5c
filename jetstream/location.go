package jetstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/arksave/arksave/vfs"
)

func init() { vfs.Register("nats", openLocation) }

func openLocation(location string) (vfs.FS, string, io.Closer, error) {
	f, world, err := Open(location)
	if err != nil {
		return nil, "", nil, err
	}
	return f, world, f, nil
}

// Location is a parsed "nats://" location: how to reach the server, the
// world, and the FS's options.
type Location struct {
	Servers []string // server URLs, credentials in the first one's user info
	World   string
	Options Options
	// Creds is a credentials file (a user JWT and its nkey seed); NKey an
	// nkey seed file; CA, Cert and Key files for TLS.
	Creds, NKey, CA, Cert, Key string
}

// ParseLocation reads a location of the form
//
//	nats://[user[:password]@]host[:port]/<world>[?param=value&...]
//
// with the parameters creds, nkey (files), tls_ca, tls_cert, tls_key
// (files; tls_ca alone makes the connection use TLS with that CA), servers
// (more server URLs, comma-separated), replicas, lease (a duration such as
// 10s), steal (true or false), timeout (a duration) and block (bytes).
func ParseLocation(location string) (*Location, error) {
	u, err := url.Parse(location)
	if err != nil {
		return nil, fmt.Errorf("jetstream: location %s: %w", vfs.Redact(location), err)
	}
	if u.Scheme != "nats" {
		return nil, fmt.Errorf("jetstream: location %s: the scheme is %q, not nats", vfs.Redact(location), u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("jetstream: location %s names no server (nats://host:4222/<world>)", vfs.Redact(location))
	}
	world := strings.Trim(u.Path, "/")
	if !ValidWorld(world) {
		return nil, fmt.Errorf("jetstream: location %s: %q is not a world's name: 1 to 64 letters, digits, '-' and '_' after the server (nats://host:4222/<world>)", vfs.Redact(location), world)
	}
	l := &Location{World: world}
	server := url.URL{Scheme: "nats", User: u.User, Host: u.Host}
	l.Servers = []string{server.String()}
	q := u.Query()
	for key, vals := range q {
		v := vals[len(vals)-1]
		bad := func(err error) error {
			return fmt.Errorf("jetstream: location %s: parameter %s=%q: %w", vfs.Redact(location), key, v, err)
		}
		switch key {
		case "creds":
			l.Creds = v
		case "nkey":
			l.NKey = v
		case "tls_ca":
			l.CA = v
		case "tls_cert":
			l.Cert = v
		case "tls_key":
			l.Key = v
		case "servers":
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					l.Servers = append(l.Servers, s)
				}
			}
		case "replicas", "block":
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, bad(err)
			}
			if key == "replicas" {
				l.Options.Replicas = n
			} else {
				l.Options.BlockSize = n
			}
		case "lease", "timeout":
			d, err := time.ParseDuration(v)
			if err != nil {
				return nil, bad(err)
			}
			if key == "lease" {
				l.Options.LeaseTTL = d
			} else {
				l.Options.Timeout = d
			}
		case "steal":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, bad(err)
			}
			l.Options.Steal = b
		default:
			return nil, bad(errors.New("unknown parameter (creds, nkey, tls_ca, tls_cert, tls_key, servers, replicas, lease, steal, timeout, block)"))
		}
	}
	if (l.Cert == "") != (l.Key == "") {
		return nil, fmt.Errorf("jetstream: location %s: tls_cert and tls_key go together", vfs.Redact(location))
	}
	if _, err := l.Options.withDefaults(); err != nil {
		return nil, fmt.Errorf("jetstream: location %s: %w", vfs.Redact(location), err)
	}
	return l, nil
}

// Open connects to the server a "nats://" location names and returns an
// FS on the connection and the world's name, the path of the save in the
// FS. Wrong or missing credentials fail here, with the server's reason,
// before anything is read or written. Close the FS when done.
func Open(location string) (*FS, string, error) {
	l, err := ParseLocation(location)
	if err != nil {
		return nil, "", err
	}
	f, err := l.Connect()
	if err != nil {
		return nil, "", err
	}
	return f, l.World, nil
}

// Connect connects to the location's server and returns an FS that owns
// the connection.
func (l *Location) Connect() (*FS, error) {
	o := l.Options
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	perm := &permissions{}
	opts := []nats.Option{
		nats.Name("arksave"),
		nats.Timeout(o.Timeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ErrorHandler(perm.handle),
	}
	if l.Creds != "" {
		opts = append(opts, nats.UserCredentials(l.Creds))
	}
	if l.NKey != "" {
		opt, err := nats.NkeyOptionFromSeed(l.NKey)
		if err != nil {
			return nil, fmt.Errorf("jetstream: nkey file %s: %w", l.NKey, err)
		}
		opts = append(opts, opt)
	}
	if l.CA != "" {
		opts = append(opts, nats.RootCAs(l.CA))
	}
	if l.Cert != "" {
		opts = append(opts, nats.ClientCert(l.Cert, l.Key))
	}
	where := strings.Join(redactAll(l.Servers), ",")
	nc, err := nats.Connect(strings.Join(l.Servers, ","), opts...)
	if err != nil {
		hint := ""
		if errors.Is(err, nats.ErrAuthorization) || strings.Contains(strings.ToLower(err.Error()), "authorization") {
			hint = ": the server refused the credentials (user and password in the location, creds or nkey file); nothing was read or written"
			err = fmt.Errorf("%w: %w", fs.ErrPermission, err)
		}
		return nil, fmt.Errorf("jetstream: connect to %s for world %s: %w%s", where, l.World, err, hint)
	}
	f, err := New(nc, l.Options)
	if err != nil {
		nc.Close()
		return nil, err
	}
	f.ownsNC, f.perm = true, perm
	return f, nil
}

func redactAll(servers []string) []string {
	out := make([]string, len(servers))
	for i, s := range servers {
		out[i] = vfs.Redact(s)
	}
	return out
}

// permissions remembers the server's last permissions violation: a denied
// publish gets no answer, only this asynchronous error.
type permissions struct {
	mu   sync.Mutex
	err  error
	when time.Time
}

func (p *permissions) handle(_ *nats.Conn, _ *nats.Subscription, err error) {
	if err == nil || !errors.Is(err, nats.ErrPermissionViolation) && !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
		return
	}
	p.mu.Lock()
	p.err, p.when = err, time.Now()
	p.mu.Unlock()
}

func (p *permissions) recent(within time.Duration) error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil && time.Since(p.when) <= within {
		return p.err
	}
	return nil
}

// explain turns a request that timed out because the server refused it
// into an error matching fs.ErrPermission that says so.
func (f *FS) explain(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, nats.ErrPermissionViolation) {
		return fmt.Errorf("%w: %w", fs.ErrPermission, err)
	}
	timedOut := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders)
	if timedOut {
		if perm := f.perm.recent(2*f.opts.Timeout + time.Second); perm != nil {
			return fmt.Errorf("%w: the server refused a request (%v): the credentials do not allow this world", fs.ErrPermission, perm)
		}
	}
	return err
}
