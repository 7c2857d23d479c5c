package vfs

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// A Location is where a save lives: a file system and the path of the
// save in it. A location string without a scheme is a directory of the
// real file system ([OS]); one with a scheme ("nats://host:4222/world")
// is opened by the backend registered for it (see [Register]).
type Location struct {
	FS   FS
	Path string
	// String is the location as it was given, for messages.
	String string

	closer io.Closer
}

// Close releases what opening the location took (a connection); a
// directory has nothing to release.
func (l *Location) Close() error {
	if l == nil || l.closer == nil {
		return nil
	}
	c := l.closer
	l.closer = nil
	return c.Close()
}

// An Opener opens a location of its scheme: the file system, the path of
// the save in it, and what to close when done (nil for nothing).
type Opener func(location string) (fsys FS, path string, closer io.Closer, err error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Opener{}
)

// knownBackends names the package that registers a scheme, for the error
// of a program that did not import it.
var knownBackends = map[string]string{
	"nats": "github.com/arksave/arksave/jetstream",
}

// Register makes OpenLocation open locations of scheme ("nats" for
// "nats://...") with open. A backend registers itself in an init function,
// so that importing its package is enough. Registering a scheme twice
// replaces the first. Panics if scheme is not a URL scheme of two or more
// characters or open is nil.
func Register(scheme string, open Opener) {
	if open == nil || len(scheme) < 2 || Scheme(scheme+"://") != scheme {
		panic(fmt.Sprintf("vfs: Register(%q): not a scheme of two or more letters, digits, '+', '-' or '.' with an opener", scheme))
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	registry[scheme] = open
}

// Scheme returns the scheme of a location ("nats" of "nats://host/w"), or
// "" for a plain path. A scheme is two or more characters (a letter, then
// letters, digits, '+', '-', '.') before "://", so that a Windows drive
// ("C:\saves") is a path.
func Scheme(location string) string {
	scheme, rest, ok := strings.Cut(location, "://")
	if !ok || len(scheme) < 2 || rest == "" && !strings.HasSuffix(location, "://") {
		return ""
	}
	for i, c := range scheme {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return ""
		}
	}
	return strings.ToLower(scheme)
}

// OpenLocation opens a save's location: a plain path is a directory of
// [OS] (nothing is opened or checked), a "scheme://..." location is opened
// by the backend registered for the scheme (an error matching
// [ErrUnknownScheme], naming the package to import, when none is). Close
// the Location when done.
func OpenLocation(location string) (*Location, error) {
	scheme := Scheme(location)
	if scheme == "" {
		return &Location{FS: OS, Path: location, String: location}, nil
	}
	if scheme == "file" {
		p := strings.TrimPrefix(location[len(scheme)+3:], "localhost")
		return &Location{FS: OS, Path: p, String: location}, nil
	}
	registryMu.RLock()
	open := registry[scheme]
	registryMu.RUnlock()
	if open == nil {
		hint := ""
		if pkg := knownBackends[scheme]; pkg != "" {
			hint = fmt.Sprintf(" (a program that saves there imports %s)", pkg)
		}
		return nil, fmt.Errorf("%w: %s: %q is not supported by this program%s", ErrUnknownScheme, redact(location), scheme, hint)
	}
	fsys, p, closer, err := open(location)
	if err != nil {
		return nil, err
	}
	return &Location{FS: fsys, Path: p, String: location, closer: closer}, nil
}

// redact hides a password in a location for a message.
func redact(location string) string {
	scheme, rest, ok := strings.Cut(location, "://")
	if !ok {
		return location
	}
	hostEnd := strings.IndexAny(rest, "/?#")
	if hostEnd < 0 {
		hostEnd = len(rest)
	}
	at := strings.LastIndexByte(rest[:hostEnd], '@')
	if at < 0 {
		return location
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		return location
	}
	return scheme + "://" + user + ":xxxxx" + rest[at:]
}

// Redact returns location with its password, if any, replaced by "xxxxx",
// for messages and logs.
func Redact(location string) string { return redact(location) }
