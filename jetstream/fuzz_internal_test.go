package jetstream

import (
	"strings"
	"testing"
)

// FuzzNameSubject: a name inside a world becomes one subject token and
// comes back exactly; any token read from a server decodes without panic
// into a name or is refused.
func FuzzNameSubject(f *testing.F) {
	for _, s := range []string{"manifest", "world-12.pecs", "backups/manifest-3", "a b%c", "%2E", "%", "%zz", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		tok := escapeName(name)
		if strings.ContainsAny(tok, ". *>\t\r\n") {
			t.Fatalf("%q escapes to %q: not one subject token", name, tok)
		}
		if back, ok := unescapeName(tok); !ok || back != name {
			t.Fatalf("%q -> %q -> %q %v", name, tok, back, ok)
		}
		unescapeName(name) // a token as a server may send it: decoded or refused
	})
}

// FuzzParseLocation: any location parses or is refused, without panic; a
// parsed one names a valid world and options within their bounds.
func FuzzParseLocation(f *testing.F) {
	for _, s := range []string{
		"nats://h:4222/w", "nats://u:p@h/w?lease=2s&replicas=3", "nats://h/w?servers=nats://a,nats://b",
		"nats://h/", "nats:///w", "http://h/w", "nats://h/w?block=1&timeout=-1s", "nats://[::1]:4222/w?steal=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, location string) {
		l, err := ParseLocation(location)
		if err != nil {
			return
		}
		if !ValidWorld(l.World) || len(l.Servers) == 0 {
			t.Fatalf("%q: world %q, servers %v", location, l.World, l.Servers)
		}
		if _, err := l.Options.withDefaults(); err != nil {
			t.Fatalf("%q: parsed options %+v are invalid: %v", location, l.Options, err)
		}
	})
}
