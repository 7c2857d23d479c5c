package savetool

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/errs"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
)

// ChangeKind says how an item differs between two generations.
type ChangeKind string

// How an item differs, from generation A to generation B.
const (
	ChangeAdded   ChangeKind = "added"   // in B, not in A
	ChangeRemoved ChangeKind = "removed" // in A, not in B
	ChangeChanged ChangeKind = "changed" // in both, different
	ChangeMoved   ChangeKind = "moved"   // a pixel body in both, at another place or speed only
)

// DiffReport is what differs between two kept generations of a save
// directory, from A to B ([Diff]). Each list is sorted by position or id;
// an item that reads the same in both is in none.
type DiffReport struct {
	Dir string `json:"dir"`
	A   uint64 `json:"a"` // the generation numbers compared (the committed one's number for 0)
	B   uint64 `json:"b"`
	// Chunks are the stored chunks that differ.
	Chunks []ChunkChange `json:"chunks"`
	// Bodies are the pixel bodies that differ, by stable id.
	Bodies []BodyChange `json:"bodies"`
	// Regional are the regional entities that are not pixel bodies and
	// differ, by stable id.
	Regional []EntityChange `json:"regional"`
	// Players are the players whose records differ, by id.
	Players []PlayerChange `json:"players"`
	// World are the entities of the ECS world file that differ, by entity.
	World []WorldChange `json:"world"`
	// Resources are the world's resources that differ, by type name.
	Resources []ResourceChange `json:"resources"`
	// Shared counts the store entries (chunks and body blocks) that A and
	// B share: the same record of the same store, skipped unread.
	Shared int `json:"shared"`
	// Damaged lists what did not read in either generation: such an item
	// is reported here, never as a change.
	Damaged []DiffDamage `json:"damaged"`
	// WorldEncrypted says the world files are encrypted and were not
	// compared: Options.Key was not given. Not damage.
	WorldEncrypted bool `json:"world_encrypted,omitempty"`

	keyErr error // the first encrypted chunk record that did not open
}

// IsEmpty reports whether the two generations read the same: no change
// and nothing damaged.
func (r *DiffReport) IsEmpty() bool {
	return r.Changes() == 0 && len(r.Damaged) == 0
}

// Changes counts the items that differ.
func (r *DiffReport) Changes() int {
	return len(r.Chunks) + len(r.Bodies) + len(r.Regional) + len(r.Players) + len(r.World) + len(r.Resources)
}

// ChunkChange is one stored chunk that differs between the generations.
type ChunkChange struct {
	X    int32      `json:"x"`
	Y    int32      `json:"y"`
	Key  []int32    `json:"key,omitempty"` // every axis, for a store of 3 or 4 axes
	Kind ChangeKind `json:"kind"`
	From string     `json:"from,omitempty"` // storage type in A ("delta", "full", ...); "" when not stored
	To   string     `json:"to,omitempty"`   // storage type in B
	// Pixels counts the pixels that differ; an added or removed chunk
	// counts those that differ from the generated chunk.
	Pixels int `json:"pixels"`
	// AtLeast says Pixels is a lower bound: a Delta chunk (the generated
	// chunk and its changed pixels) against a Full, Palette or Empty one,
	// or a chunk that is not stored against one that is not Delta, cannot
	// be compared pixel for pixel without the game's generator; the
	// pixels both name are.
	AtLeast bool `json:"at_least,omitempty"`
	// Extra says the game's extra data of the chunk differs.
	Extra bool `json:"extra,omitempty"`
}

// DiffPos is a chunk position in a diff.
type DiffPos struct {
	X   int32   `json:"x"`
	Y   int32   `json:"y"`
	Key []int32 `json:"key,omitempty"` // every axis, for a store of 3 or 4 axes
}

func (p DiffPos) String() string {
	if p.Key != nil {
		return KeyText(p.Key)
	}
	return fmt.Sprintf("(%d, %d)", p.X, p.Y)
}

// Equal reports whether p and q name the same chunk.
func (p DiffPos) Equal(q DiffPos) bool { return p.X == q.X && p.Y == q.Y && slices.Equal(p.Key, q.Key) }

// KeyText writes a chunk key's axes as chunk positions are written:
// "(x, y, z, w)".
func KeyText(axes []int32) string {
	parts := make([]string, len(axes))
	for i, a := range axes {
		parts[i] = strconv.Itoa(int(a))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// BodyChange is one pixel body that differs between the generations.
type BodyChange struct {
	ID   uint64     `json:"id"`
	Kind ChangeKind `json:"kind"`           // moved: only its chunk, transform or velocities differ
	From *DiffPos   `json:"from,omitempty"` // the chunk that holds it in A
	To   *DiffPos   `json:"to,omitempty"`   // in B
}

// EntityChange is one regional entity that differs between the
// generations: what is stored with a chunk in its entity sections.
type EntityChange struct {
	ID         uint64     `json:"id"` // its stable id (components.Regional)
	Kind       ChangeKind `json:"kind"`
	From       *DiffPos   `json:"from,omitempty"`       // the chunk that holds it in A
	To         *DiffPos   `json:"to,omitempty"`         // in B
	Components []string   `json:"components,omitempty"` // changed: the components added, removed or changed (full type names)
}

// PlayerChange is one player whose record differs.
type PlayerChange struct {
	ID   string     `json:"id"`
	Kind ChangeKind `json:"kind"`
}

// WorldChange is one entity of the world file that differs: an entity
// is [id, generation] as Ark has it.
type WorldChange struct {
	Entity     [2]uint32  `json:"entity"`
	Kind       ChangeKind `json:"kind"`
	Components []string   `json:"components,omitempty"` // changed: the components added, removed or changed
}

// ResourceChange is one resource of the world file that differs.
type ResourceChange struct {
	Name string     `json:"name"`
	Kind ChangeKind `json:"kind"`
}

// damage lists what of generation gen does not read, and why; it
// reports whether there was anything (err not nil).
func (r *DiffReport) damage(gen uint64, what string, err error) bool {
	if err != nil {
		r.Damaged = append(r.Damaged, DiffDamage{Generation: gen, What: what, Err: err.Error()})
	}
	return err != nil
}

// recordDamage is damage for a chunk or body record that does not read:
// one that is encrypted and read without the key or with another is not
// damage, and Diff fails naming --key-file (keyErr).
func (r *DiffReport) recordDamage(gen uint64, what string, err error) {
	if isKeyError(err) {
		r.keyErr = cmp.Or(r.keyErr, err)
		return
	}
	r.damage(gen, what, err)
}

// DiffDamage is an item of one generation that does not read.
type DiffDamage struct {
	Generation uint64 `json:"generation"`
	What       string `json:"what"` // "chunk (x, y)", "bodies of chunk (x, y)", "player \"id\"", "world file", ...
	Err        string `json:"error"`
}

// Diff compares generations a and b (0: the committed one; else a
// backup's) of the save directory at dir and reports what differs: the
// stored chunks, with the number of pixels that changed; the pixel bodies
// and the other regional entities of the chunks' entity blocks, by stable
// id; the players, by id; the entities and resources of the world files,
// read through their JSON export (no Go type of the game is needed).
//
// Entries of the chunk store that both generations share (the same record
// of the same store file) are skipped without reading them, so that the
// cost follows what changed, not the world; other entries are decoded and
// compared, so that a chunk written again with the same pixels (a
// compaction, a copy of the store) is not reported. Players whose index
// entries name the same record bytes are not read either. What does not
// read in either generation is listed as damaged, not as a change.
//
// A generation the directory does not keep is an error matching
// autosave.ErrNoGeneration that names the kept ones. Diff takes no lock
// and changes nothing: it works while a game saves into the directory, on
// one consistent view of it (savedir.ReadConsistent).
func Diff(dir string, a, b uint64, o Options) (*DiffReport, error) {
	_, fsys := newTracker(o)
	if _, err := openSave(fsys, dir); err != nil {
		return nil, err
	}
	var rep *DiffReport
	err := savedir.ReadConsistent(fsys, dir, func(d *savedir.Dir) error {
		ma, err := pickGeneration(d, dir, a)
		if err != nil {
			return err
		}
		mb, err := pickGeneration(d, dir, b)
		if err != nil {
			return err
		}
		rep = newDiffReport(dir, ma.Generation, mb.Generation)
		if err := diffStores(d, ma, mb, rep, o.Key); err != nil {
			return err
		}
		if rep.keyErr != nil {
			return keyFailure(rep.keyErr)
		}
		diffPlayers(d, ma, mb, rep)
		diffWorld(d, ma, mb, rep, o.Key)
		if len(rep.Damaged) > 0 && d.Stale() {
			return errMovedOn // read again: a commit moved a file under the reader
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// newDiffReport returns an empty report, its lists empty (not null in
// JSON).
func newDiffReport(dir string, a, b uint64) *DiffReport {
	return &DiffReport{Dir: dir, A: a, B: b, Chunks: []ChunkChange{}, Bodies: []BodyChange{}, Regional: []EntityChange{},
		Players: []PlayerChange{}, World: []WorldChange{}, Resources: []ResourceChange{}, Damaged: []DiffDamage{}}
}

// errMovedOn makes savedir.ReadConsistent read again when a generation
// looked damaged while a commit moved the directory on.
var errMovedOn = errors.New("savetool: the save moved on while it was read")

// genStore is the chunk store of one generation, open for a diff.
type genStore struct {
	gen  uint64
	name string
	s    *chunkstore.Store
}

// diffStores compares the chunk stores of ma and mb into rep.
// A store that does not open because it is damaged is listed as damaged,
// and no chunk is compared; any other failure to open one is the error.
func diffStores(d *savedir.Dir, ma, mb *savedir.Manifest, rep *DiffReport, key []byte) error {
	sa, errA := openDiffStore(d, ma, key)
	sb, errB := openDiffStore(d, mb, key)
	if sa != nil {
		defer sa.Close()
	}
	if sb != nil {
		defer sb.Close()
	}
	for _, err := range []error{errA, errB} {
		if err != nil && !errors.Is(err, errs.Corrupt) {
			return err
		}
	}
	badA := rep.damage(ma.Generation, "chunk store "+ma.Chunks.Name, errA)
	if badB := rep.damage(mb.Generation, "chunk store "+mb.Chunks.Name, errB); badA || badB {
		return nil
	}
	ga := genStore{gen: ma.Generation, name: ma.Chunks.Name, s: sa}
	gb := genStore{gen: mb.Generation, name: mb.Chunks.Name, s: sb}
	c := newChunkDiff(ga, gb, rep)
	c.walk()
	c.diffBlocks()
	return nil
}

// openDiffStore opens the chunk store generation m names, read-only, with
// the save's key (nil for none).
func openDiffStore(d *savedir.Dir, m *savedir.Manifest, key []byte) (*chunkstore.Store, error) {
	s, err := openGeneration(d, m, *inspectOptions(d.FS(), key))
	if err != nil {
		return nil, fmt.Errorf("generation %d: %s: %w", m.Generation, m.Chunks.Name, err)
	}
	return s, nil
}

// chunkDiff compares the chunks of two stores.
type chunkDiff struct {
	a, b genStore
	rep  *DiffReport
	// sameFiles says handles of a and b address the same files: a
	// handle both hold is one record.
	sameFiles bool
	// sameBase says Delta chunks of a and b are changes of the same
	// generated chunks (the seed and generator version agree).
	sameBase bool
	npix     int
	// blocks are the positions whose body block differs, for the
	// bodies' and regional entities' diff.
	blocks []blockPos
}

// blockPos is the position of a body block that differs, and which
// generations hold one there.
type blockPos struct {
	key  chunkstore.Key
	a, b bool
}

func newChunkDiff(a, b genStore, rep *DiffReport) *chunkDiff {
	oa, ob := a.s.Options(), b.s.Options()
	size := int(oa.ChunkSize)
	return &chunkDiff{a: a, b: b, rep: rep, sameFiles: a.name == b.name,
		sameBase: oa.Seed == ob.Seed && a.s.GeneratorVersion() == b.s.GeneratorVersion() && oa.ChunkSize == ob.ChunkSize,
		npix:     size * size}
}

// walk merges the page tables of a and b, entry by entry in one order.
func (c *chunkDiff) walk() {
	var ea []storetool.Entry
	storetool.Tool.Entries(c.a.s, func(e storetool.Entry) bool {
		ea = append(ea, e)
		return true
	})
	slices.SortFunc(ea, compareEntry)
	i := 0
	var eb []storetool.Entry
	storetool.Tool.Entries(c.b.s, func(e storetool.Entry) bool {
		eb = append(eb, e)
		return true
	})
	slices.SortFunc(eb, compareEntry)
	for _, e := range eb {
		for i < len(ea) && compareEntry(ea[i], e) < 0 {
			c.only(&ea[i], nil)
			i++
		}
		if i < len(ea) && compareEntry(ea[i], e) == 0 {
			c.both(&ea[i], &e)
			i++
			continue
		}
		c.only(nil, &e)
	}
	for ; i < len(ea); i++ {
		c.only(&ea[i], nil)
	}
}

// compareEntry orders entries by key, highest axis first, and a chunk
// before its body block.
func compareEntry(a, b storetool.Entry) int {
	if n := cmp.Compare(a.Key.Axes(), b.Key.Axes()); n != 0 {
		return n
	}
	for i := a.Key.Axes() - 1; i >= 0; i-- {
		if n := cmp.Compare(a.Key.Axis(i), b.Key.Axis(i)); n != 0 {
			return n
		}
	}
	return cmp.Compare(isBodies(a), isBodies(b))
}

func isBodies(e storetool.Entry) int {
	if e.Type == chunkstore.BodyBlock {
		return 1
	}
	return 0
}

// both compares an entry both generations hold.
func (c *chunkDiff) both(ea, eb *storetool.Entry) {
	if c.sameFiles && ea.Handle == eb.Handle && ea.Type == eb.Type {
		c.rep.Shared++
		return
	}
	if ea.Type == chunkstore.BodyBlock {
		c.blocks = append(c.blocks, blockPos{key: ea.Key, a: true, b: true})
		return
	}
	c.chunk(ea, eb)
}

// only handles an entry one generation holds: ea in A alone, or eb in B.
func (c *chunkDiff) only(ea, eb *storetool.Entry) {
	e := ea
	if e == nil {
		e = eb
	}
	if e.Type == chunkstore.BodyBlock {
		c.blocks = append(c.blocks, blockPos{key: e.Key, a: ea != nil, b: eb != nil})
		return
	}
	c.chunk(ea, eb)
}

// side is a chunk of one generation as stored: its pixels (Full, Palette,
// Empty), or the changes to the generated chunk (Delta, and not stored).
type side struct {
	typ    string
	pixels []uint32 // nil: generated, with delta applied
	delta  map[uint32]uint32
	extra  []byte
}

// read reads the chunk at e of g; nil e is a chunk g does not store.
func (c *chunkDiff) read(g genStore, e *storetool.Entry) (side, bool) {
	if e == nil {
		return side{}, true
	}
	if e.Type == chunkstore.Empty {
		return side{typ: e.Type.String(), pixels: make([]uint32, c.npix)}, true
	}
	raw, _, err := storetool.Tool.ReadRawKey(g.s, e.Key)
	if err != nil {
		c.rep.recordDamage(g.gen, "chunk "+keyString(e.Key), err)
		return side{}, false
	}
	sd := side{typ: raw.Type.String(), pixels: raw.Pixels, extra: raw.Extra}
	if raw.Type == chunkstore.Delta {
		sd.delta = make(map[uint32]uint32, len(raw.Delta))
		for _, p := range raw.Delta {
			sd.delta[p.Index] = p.Pixel
		}
	}
	return sd, true
}

// chunk compares a chunk of A and B, either of them missing.
func (c *chunkDiff) chunk(ea, eb *storetool.Entry) {
	a, okA := c.read(c.a, ea)
	b, okB := c.read(c.b, eb)
	if !okA || !okB {
		return
	}
	e := ea
	kind := ChangeChanged
	switch {
	case ea == nil:
		e, kind = eb, ChangeAdded
	case eb == nil:
		kind = ChangeRemoved
	}
	n, atLeast := c.countPixels(&a, &b)
	extra := string(a.extra) != string(b.extra)
	if n == 0 && !atLeast && !extra && kind == ChangeChanged {
		return // the same pixels, written again
	}
	cc := ChunkChange{X: e.Pos.X, Y: e.Pos.Y, Kind: kind, From: a.typ, To: b.typ, Pixels: n, AtLeast: atLeast, Extra: extra}
	if e.Key.Axes() > 2 {
		for i := range e.Key.Axes() {
			cc.Key = append(cc.Key, e.Key.Axis(i))
		}
	}
	c.rep.Chunks = append(c.rep.Chunks, cc)
}

// countPixels counts the pixels that differ between a and b, and says
// whether the count is only a lower bound.
func (c *chunkDiff) countPixels(a, b *side) (int, bool) {
	switch {
	case a.pixels != nil && b.pixels != nil:
		n := max(len(a.pixels), len(b.pixels)) - min(len(a.pixels), len(b.pixels))
		for i := range min(len(a.pixels), len(b.pixels)) {
			if a.pixels[i] != b.pixels[i] {
				n++
			}
		}
		return n, false
	case a.pixels == nil && b.pixels == nil && c.sameBase:
		n := 0
		for i, p := range a.delta {
			if q, ok := b.delta[i]; !ok || q != p {
				n++
			}
		}
		for i := range b.delta {
			if _, ok := a.delta[i]; !ok {
				n++
			}
		}
		return n, false
	case a.pixels == nil && b.pixels == nil:
		return len(a.delta) + len(b.delta), true // against other generated chunks
	}
	full, delta := a.pixels, b.delta
	if full == nil {
		full, delta = b.pixels, a.delta
	}
	n := 0
	for i, p := range delta {
		if int(i) >= len(full) || full[i] != p {
			n++
		}
	}
	return n, true
}

// keyString writes a chunk key as chunk positions are written: "(x, y)".
func keyString(k chunkstore.Key) string {
	if k.Axes() == 2 {
		return k.Pos().String()
	}
	return k.String()
}
