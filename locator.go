package arksave

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// ErrUnknownPath is the error of a [Locator] asked for a logical path it
// cannot place: an unknown scope, a world or dimension nobody added, a
// scope whose root is not set, or a path that would leave its root.
var ErrUnknownPath = errors.New("arksave: no such logical path")

// Locator says where a game's files live, by logical path, so that code
// asks for "user/config.json" or the save directory of world "Valley"'s
// dimension "caves" and never builds a file-system path itself. It knows
// where things are, not what they are.
//
// The scopes of a logical path:
//
//	engine/...                      defaults shipped with the engine (Engine)
//	game/...                        the game's assets (Game)
//	user/...                        the player's settings (User)
//	world/<name>/...                a world: its save directory (AddWorld, or Worlds/<name>)
//	world/<name>/dim/<dim>/...      a named dimension of the world: a save directory of its own,
//	                                <world>/dim/<dim> unless AddDimension placed it elsewhere
//
// A world and each of its dimensions are separate save directories (give
// each to its own Plugin.Dir): the files of one are never those of
// another, and a dimension's directory inside its world's is left alone by
// the world's saves. A logical path is slash-separated and relative; a
// name or element that is empty, ".", ".." or holds a separator is
// refused, so a resolved path never leaves its root. The zero Locator
// knows no root; [NewLocator] fills the usual ones. A Locator is not safe
// for concurrent change: set it up, then share it.
type Locator struct {
	// Engine, Game and User are the roots of the engine/, game/ and user/
	// scopes ("" leaves a scope out).
	Engine, Game, User string
	// Worlds is where a world that AddWorld did not place lives:
	// Worlds/<name> ("": only added worlds resolve).
	Worlds string

	worlds map[string]*locatedWorld
}

type locatedWorld struct {
	dir  string
	dims map[string]string // dimension -> path relative to dir
}

// NewLocator returns a Locator with the platform's roots for the game
// app: User in the user configuration directory (os.UserConfigDir()/app)
// and Worlds in the user data directory ($XDG_DATA_HOME/app/worlds, else
// ~/.local/share/app/worlds on Unix, the configuration directory on
// Windows and macOS). Engine and Game are the game's to set. app must be
// one plain path element.
func NewLocator(app string) (*Locator, error) {
	if err := checkElem("app", app); err != nil {
		return nil, err
	}
	l := &Locator{}
	if d, err := os.UserConfigDir(); err == nil {
		l.User = filepath.Join(d, app)
	}
	l.Worlds = filepath.Join(userDataDir(app), "worlds")
	return l, nil
}

// userDataDir is the folder of the game's data: XDG's data home on Unix,
// the configuration directory elsewhere, the temp directory failing both.
func userDataDir(app string) string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, app)
	}
	if runtime.GOOS != "windows" && runtime.GOOS != "darwin" {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, ".local", "share", app)
		}
	}
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, app)
	}
	return filepath.Join(os.TempDir(), app)
}

// AddWorld places world name at dir (its save directory), replacing where
// it was placed before; its dimensions stay registered.
func (l *Locator) AddWorld(name, dir string) error {
	if err := checkElem("world name", name); err != nil {
		return err
	}
	if dir == "" {
		return fmt.Errorf("%w: world %q: empty directory", ErrUnknownPath, name)
	}
	if l.worlds == nil {
		l.worlds = map[string]*locatedWorld{}
	}
	if w := l.worlds[name]; w != nil {
		w.dir = filepath.Clean(dir)
		return nil
	}
	l.worlds[name] = &locatedWorld{dir: filepath.Clean(dir)}
	return nil
}

// RemoveWorld forgets world name and its dimensions. Its files stay.
func (l *Locator) RemoveWorld(name string) { delete(l.worlds, name) }

// AddDimension registers dimension dim of world, whose save directory is
// subpath inside the world's directory (slash-separated; "" for the
// default dim/<dim>). The world must be known (added, or Worlds set).
func (l *Locator) AddDimension(world, dim, subpath string) error {
	if err := checkElem("dimension name", dim); err != nil {
		return err
	}
	if subpath == "" {
		subpath = "dim/" + dim
	}
	if err := checkRel("dimension "+dim+" subpath", subpath); err != nil {
		return err
	}
	w, err := l.world(world)
	if err != nil {
		return err
	}
	if w.dims == nil {
		w.dims = map[string]string{}
	}
	w.dims[dim] = filepath.FromSlash(subpath)
	return nil
}

// Dimensions returns the dimensions registered for world, sorted.
func (l *Locator) Dimensions(world string) []string {
	w := l.worlds[world]
	if w == nil {
		return nil
	}
	out := make([]string, 0, len(w.dims))
	for d := range w.dims {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// World returns the save directory of world name.
func (l *Locator) World(name string) (string, error) {
	w, err := l.world(name)
	if err != nil {
		return "", err
	}
	return w.dir, nil
}

// Dimension returns the save directory of dimension dim of world: where
// AddDimension placed it, else <world>/dim/<dim>.
func (l *Locator) Dimension(world, dim string) (string, error) {
	if err := checkElem("dimension name", dim); err != nil {
		return "", err
	}
	w, err := l.world(world)
	if err != nil {
		return "", err
	}
	if sub, ok := w.dims[dim]; ok {
		return filepath.Join(w.dir, sub), nil
	}
	return filepath.Join(w.dir, "dim", dim), nil
}

// world returns the placed world, or one under Worlds.
func (l *Locator) world(name string) (*locatedWorld, error) {
	if err := checkElem("world name", name); err != nil {
		return nil, err
	}
	if w := l.worlds[name]; w != nil {
		return w, nil
	}
	if l.Worlds == "" {
		return nil, fmt.Errorf("%w: world %q was never added and the locator has no Worlds root", ErrUnknownPath, name)
	}
	if l.worlds == nil {
		l.worlds = map[string]*locatedWorld{}
	}
	w := &locatedWorld{dir: filepath.Join(l.Worlds, name)}
	l.worlds[name] = w
	return w, nil
}

// Resolve returns the file-system path of a logical path (see Locator):
// "user/config.json", "game/textures/sand.png", "world/Valley/world.json",
// "world/Valley/dim/caves". The path is not required to exist.
func (l *Locator) Resolve(logical string) (string, error) {
	if err := checkRel("logical path", logical); err != nil {
		return "", err
	}
	scope, rest, _ := strings.Cut(logical, "/")
	switch scope {
	case "engine", "game", "user":
		root := l.User
		switch scope {
		case "engine":
			root = l.Engine
		case "game":
			root = l.Game
		}
		if root == "" {
			return "", fmt.Errorf("%w: %q: the locator has no %s root", ErrUnknownPath, logical, scope)
		}
		return filepath.Join(root, filepath.FromSlash(rest)), nil
	case "world":
		return l.resolveWorld(logical, rest)
	}
	return "", fmt.Errorf("%w: %q: unknown scope %q (want engine, game, user or world)", ErrUnknownPath, logical, scope)
}

// resolveWorld resolves rest, a logical path after "world/".
func (l *Locator) resolveWorld(logical, rest string) (string, error) {
	if rest == "" {
		return "", fmt.Errorf("%w: %q: name a world (world/<name>)", ErrUnknownPath, logical)
	}
	elems := strings.Split(rest, "/")
	if len(elems) >= 3 && elems[1] == "dim" {
		dir, err := l.Dimension(elems[0], elems[2])
		if err != nil {
			return "", err
		}
		return filepath.Join(append([]string{dir}, elems[3:]...)...), nil
	}
	dir, err := l.World(elems[0])
	if err != nil {
		return "", err
	}
	return filepath.Join(append([]string{dir}, elems[1:]...)...), nil
}

// checkElem refuses a name that is not one plain path element.
func checkElem(what, s string) error {
	if s == "" || s == "." || s == ".." || strings.ContainsAny(s, `/\`) || strings.ContainsRune(s, 0) {
		return fmt.Errorf("%w: %s %q: want one plain name (no / or \\, not . or .. or empty)", ErrUnknownPath, what, s)
	}
	return nil
}

// checkRel refuses a slash-separated path that is absolute or has an
// element checkElem refuses.
func checkRel(what, p string) error {
	if p == "" {
		return fmt.Errorf("%w: %s: empty", ErrUnknownPath, what)
	}
	for _, e := range strings.Split(p, "/") {
		if checkElem(what, e) != nil {
			return fmt.Errorf("%w: %s %q: element %q is empty, . or .., or holds \\ (paths are relative and slash-separated)", ErrUnknownPath, what, p, e)
		}
	}
	return nil
}
