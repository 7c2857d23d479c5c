package arksave

import (
	"cmp"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"math"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/errs"
	"github.com/arksave/arksave/internal/plugin"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/seal"
	"github.com/arksave/arksave/systems"
	"github.com/arksave/arksave/vfs"
)

// Problem is damage found while loading a chunk or its bodies: the chunk
// was regenerated, or its bodies dropped. File names the chunk store,
// Section says which ("chunk" or "bodies"), Pos the chunk, Err the damage
// (matching ErrCorrupt). A load that fell back to a backup reports that as
// a Problem of the manifest (Section "generation"), followed by what was
// damaged, each naming its file. It is the chunk store's report
// (chunkstore.Problem), so that a tool reading the store gives the same.
type Problem = chunkstore.Problem

// DefaultTickDuration is the game time of one tick when
// Plugin.TickDuration is not set (1/60 s): 30 ticks of autosave interval
// are 30 * DefaultTickDuration.
const DefaultTickDuration = time.Second / 60

// System is an ECS system in the shape ark-tools' app.App schedules
// (app.System): the arktools module runs the plugin under it.
type System interface {
	Initialize(w *ecs.World)
	Update(w *ecs.World)
	Finalize(w *ecs.World)
}

// Defaults of the Plugin's fields, filled in by Install in one place.
const (
	defaultChunkSize  = 512
	defaultTileSize   = 32
	defaultMaxPending = 64
	maxChunkSize      = 1 << 12
	defaultHysteresis = 0.20
	defaultCheckpoint = 10 * time.Second
)

// DefaultLayers returns the layers of [components.Pixel] the plugin
// registers unless the game gives its own (Plugin.Layers): material (always
// saved), colour and damage saved, of the flags byte the pixel-body flag
// saved and the simulation flags not (they load as 0). Heat
// (components.Chunk.Heat) is not a pixel layer and is never saved; a game
// with a temperature layer adds it in bits of its own pixel layout, saved
// or not, with its default.
func DefaultLayers() []chunkstore.Layer {
	return []chunkstore.Layer{
		{Name: "material", Offset: components.MaterialShift, Bits: 8, Persist: true},
		{Name: "color", Offset: components.ColorShift, Bits: 8, Persist: true},
		{Name: "damage", Offset: components.DamageShift, Bits: 8, Persist: true},
		{Name: "pixel-body-flag", Offset: components.FlagsShift, Bits: 1, Persist: true},
		{Name: "simulation-flags", Offset: components.FlagsShift + 1, Bits: 7, Persist: false},
	}
}

// Plugin configures arksave for a game. The zero value of every field but
// Dir is a sensible default; Install fills the defaults in.
//
// The systems Install returns save on their own (autosave, and what the
// game asks for through [Persistence]), but their Finalize does not save
// unless SaveOnFinalize is set: a game makes its final save with
// [Persistence.SaveNow] (after a scheduler's run too) and then calls
// [Persistence.Close].
type Plugin struct {
	// Dir is the save's location. Required. A path is a save directory; a
	// location with a scheme is a save kept by the backend registered for
	// it (see vfs.Register): "nats://host:4222/<world>" is a world in NATS
	// JetStream once the program imports github.com/arksave/arksave/jetstream.
	// The plugin holds the save (a lock file, see savedir.LockName; a
	// lease on JetStream) from Install to Persistence.Close: a second
	// Install on it, in this process or another, fails with ErrLocked.
	// With FS set, Dir is a path in FS.
	Dir string
	// Load continues the save in Dir: Install loads it. A Dir that does
	// not exist or holds no save is an error matching ErrNoSave (a
	// mistyped directory never silently starts a new world), unless
	// LoadOrCreate is set. A Dir whose manifest is damaged, or lost while
	// the save's files remain, is an error that names arksave repair. A
	// committed generation that is damaged (its world file, its players,
	// or the chunk store's records it uses) loads the newest intact backup
	// instead, committed as a new generation and reported in
	// autosave.State.Fallback and Persistence.Problems; without one, a
	// generation whose world file is intact loads as it is (damaged
	// chunks regenerate), else Install fails naming arksave repair. Only
	// proven damage (a checksum, a bound, a lost file) falls back: a file
	// that cannot be read (an I/O error, a permission) fails Install with
	// an error matching autosave.ErrUnreadable and the file system's
	// error, naming the file, and nothing is changed.
	Load bool
	// LoadVersion, when set, loads that kept generation of the save in Dir
	// (a backup, by number or by time, see [Version]) instead of the
	// committed one, as [Persistence.LoadVersion] does: a backup is made
	// current as a new generation, the committed one becoming a backup and
	// every backup kept, under the lock Install takes. It implies Load; a
	// directory without a save is an error matching ErrNoSave whatever
	// LoadOrCreate says, and LoadVersion with Overwrite is an error.
	LoadVersion Version
	// LoadOrCreate continues the save in Dir if there is one and starts a
	// new world there (creating Dir) if there is none.
	LoadOrCreate bool
	// Overwrite starts a new world in Dir even if it holds a save. The old
	// generations stay in backups/ as long as Autosave.MaxBackups or
	// Autosave.Retention keeps them.
	Overwrite bool
	// LockTimeout is how long Install waits for another holder of Dir to
	// let go (a game restarting while the last instance makes its final
	// save); zero fails at once with ErrLocked.
	LockTimeout time.Duration

	// ChunkSize, TileSize are the game's constants, checked against the save:
	// pixels per chunk edge (default 512, at most 4096) and per tile edge
	// (default 32).
	ChunkSize int
	TileSize  int
	// Seed is the world seed of a new world; a loaded save brings its own
	// (see [Persistence.Seed]).
	Seed uint64
	// Generator produces chunks that were never saved; the store saves
	// chunks as deltas against it, and a chunk whose saved record is
	// damaged reads as generated. Nil means chunks start as air.
	Generator chunkstore.Generator
	// Layers are the game's pixel layers (see chunkstore.Layer): which
	// bits of a pixel each holds, whether it is saved, and the value it
	// loads as where the save does not hold it (a layer the game added
	// after the chunk was saved, or one it does not save). Nil means
	// [DefaultLayers]: material, colour and damage saved, of the
	// flags only the pixel-body flag, the simulation flags not (they load
	// as 0). Heat is not a pixel layer (components.Chunk.Heat) and is never
	// saved.
	Layers []chunkstore.Layer
	// ChunkEncoding says how chunk records are chosen (default
	// chunkstore.EncodeSmallest: the smallest of delta, palette and full).
	ChunkEncoding chunkstore.Encoding

	// Autosave is the initial autosave.Config resource; nil means
	// autosave.DefaultConfig (every 300 s, one backup).
	Autosave *autosave.Config
	// TickDuration is the game time of one Update (default 1/60 s); the
	// autosave timer counts it.
	TickDuration time.Duration
	// MaxPendingChunks is how many unloaded dirty chunks wait in memory
	// before a save is started for them (default 64).
	MaxPendingChunks int
	// CompressionWorkers caps the goroutines that compress chunks during a
	// save (default: one per core). A game that needs every core for its
	// own loop can set 1.
	CompressionWorkers int
	// DataFileSize is the size a data file of the chunk store grows to
	// before the next one starts (default chunkstore.DefaultDataFileSize,
	// 128 MiB; at least 1 KiB). Between saves the writer compacts data file
	// by data file, so that a compaction costs one file, not the world.
	DataFileSize int64
	// ArchiveZstd makes the compaction between saves store the chunk and
	// body records it moves with zstd instead of LZ4 where that is
	// smaller (chunkstore.Options.ZstdArchive, at zstd's default level):
	// records that outlived their data file are cold, and history keeps
	// them. What a save writes stays LZ4. A save with zstd records needs
	// this version of arksave or a later one to load.
	ArchiveZstd bool
	// SaveOnFinalize makes the save system's Finalize save once more and
	// wait for the commit, so that a game run by a scheduler (ark-tools'
	// app.App calls Finalize after its last tick) ends with a final save.
	// Without it Finalize does not save: call Persistence.SaveNow after the
	// run. Either way, call Persistence.Close at the end.
	SaveOnFinalize bool

	// Name is the save's name for people: a game's load menu shows it
	// (ListSaves). It is written with every save into the directory's
	// meta.json, with the seed, creation and last save times, the play time
	// and the generation. Default: the directory's base name.
	Name string
	// Thumbnail, when set, is called on the game loop as each save starts
	// and its picture (a screenshot, a map) is kept as the save's
	// thumbnail.png beside meta.json. The plugin copies it at once (scaled
	// down to at most 512 pixels a side), so return a small picture: the
	// copy is part of the save's stall. A panic in it skips the thumbnail.
	// With Key set it is not called and no thumbnail.png is written (one
	// left by an earlier save without a key is removed at the next save):
	// a picture of the world would show what the key hides.
	Thumbnail func(w *ecs.World) image.Image

	// OnChunkLoaded, OnBodyLoaded and OnEntityLoaded are called for every
	// chunk, pixel body and regional entity the plugin spawns (a body is a
	// regional entity too: both are called for it), for the game to add
	// its own components.
	OnChunkLoaded  func(w *ecs.World, e ecs.Entity)
	OnBodyLoaded   func(w *ecs.World, e ecs.Entity)
	OnEntityLoaded func(w *ecs.World, e ecs.Entity)

	// Positions tell the plugin where regional entities
	// (components.Regional) stand: one per position component type of the
	// game, made with [Position]. Pixel bodies need none (their blitted
	// origin). See "Regional entities" in the package documentation.
	Positions []RegionalPosition
	// Hysteresis is how far past its chunk's border, in chunk widths, a
	// regional entity goes before it belongs to the next chunk (default
	// 0.20; a negative value is an error): one that wanders back and forth
	// over a border does not rewrite two chunks every tick.
	Hysteresis float64
	// Checkpoint is the game time in which every loaded chunk's regional
	// entities are looked at once and saved if their saved form changed
	// (movement within the hysteresis margin, changed components). Default
	// 10 s; negative turns checkpoints off (then only spawns, despawns,
	// crossings and Persistence.MarkDirty reach the save).
	Checkpoint time.Duration

	// SkipComponents and SkipResources are game types a save leaves out:
	// entities are saved without those components (and load without
	// them), those resources are neither saved nor touched by a load. For
	// a component whose presence matters but whose data does not, or for
	// aliases and migrations, use WorldOptions.
	SkipComponents []ecs.Comp
	SkipResources  []ecs.Comp

	// WorldOptions are passed to the PECS codec, for example to skip
	// components, register aliases or migrations (package archetype).
	WorldOptions []archetype.Option

	// Key, when set, encrypts the save with AES-256-GCM under this
	// 32-byte key: the world file of every save and every player's record
	// (archetype.Key), and every chunk record a save writes: the pixels
	// and extra data of every chunk (Full, Delta and Palette records) and
	// each chunk's regional entities and pixel bodies (chunkstore
	// Options.Key). Not encrypted, so that tools can check and move them
	// without the key: the manifest, the page table (which chunks are
	// stored, where and how large), record and file headers (kinds,
	// sizes, checksums, chunk positions) and meta.json (name, seed, times,
	// play time); thumbnail.png is not written (Thumbnail is not called).
	// Encrypted chunk records are never shared by the chunk dictionary, so
	// equal chunks do not show as equal. Loading a save written with a key
	// needs the same key: without one, Install and Load fail with
	// archetype.ErrEncrypted, with another with archetype.ErrWrongKey, and
	// change nothing. A save written without a key loads with one; its
	// next save encrypts the world file and the chunks it writes, while
	// chunks it does not rewrite stay as they were stored. Keep the key
	// apart from the save; a lost key loses the save.
	Key []byte

	// Logger receives what the plugin does, through log/slog, with
	// structured attributes: each save's start and outcome (Info "save
	// started", "save committed" with generation, duration, bytes, chunks,
	// bodies and entities; Error "save failed"), loads (Info "save
	// loaded"; Warn when a damaged generation made the load fall back to a
	// backup), a save directory held by another writer (Error) or opened
	// read-only (Warn), and failures between saves (Warn). Nil is silent.
	Logger *slog.Logger
	// FS is the file system saves go through; nil is the real one
	// (vfs.OS). A game's tests can save into memory (vfs.NewMem) and
	// inject faults or crashes (vfs.Faulty, vfs.NewCrashFS).
	FS vfs.FS
}

// settings are a Plugin's fields resolved once: defaults filled in and
// checked, in the one value Install passes down.
type settings struct {
	dir   string        // Dir as a path in rt.Writer.FS, the one file system the save goes through
	loc   *vfs.Location // what resolving Dir opened; nil with Plugin.FS
	codec *worldCodec
	rt    plugin.Config
}

// resolve fills in the defaults and checks the fields: the one place where
// a Plugin's settings become what the writer, the chunk store, the loader
// and the systems use.
func (p Plugin) resolve() (settings, error) {
	if p.Dir == "" {
		return settings{}, errors.New("arksave: Plugin.Dir is empty")
	}
	chunk := cmpOr(p.ChunkSize, defaultChunkSize)
	tile := cmpOr(p.TileSize, defaultTileSize)
	if chunk <= 0 || chunk > maxChunkSize || tile <= 0 || tile > chunk {
		return settings{}, fmt.Errorf("arksave: chunk size %d and tile size %d: want 0 < tile <= chunk <= %d", chunk, tile, maxChunkSize)
	}
	if p.TickDuration < 0 || p.MaxPendingChunks < 0 || p.CompressionWorkers < 0 || p.DataFileSize < 0 {
		return settings{}, fmt.Errorf("arksave: negative TickDuration %v, MaxPendingChunks %d, CompressionWorkers %d or DataFileSize %d",
			p.TickDuration, p.MaxPendingChunks, p.CompressionWorkers, p.DataFileSize)
	}
	if p.Hysteresis < 0 || math.IsNaN(p.Hysteresis) {
		return settings{}, fmt.Errorf("arksave: Hysteresis %v: want 0 (the default, 0.20) or more chunk widths", p.Hysteresis)
	}
	if p.Autosave != nil {
		if err := savedir.CheckRetention(p.Autosave.Retention); err != nil {
			return settings{}, fmt.Errorf("arksave: Plugin.Autosave: %w", err)
		}
	}
	checkpoint := cmpOr(p.Checkpoint, defaultCheckpoint)
	if checkpoint < 0 {
		checkpoint = 0
	}
	locs := make([]plugin.Locator, 0, len(p.Positions))
	for _, pos := range p.Positions {
		if pos == nil {
			return settings{}, errors.New("arksave: a nil entry in Plugin.Positions")
		}
		locs = append(locs, pos.locator())
	}
	fsys, dir := p.FS, p.Dir
	var loc *vfs.Location
	if fsys == nil {
		var err error
		if loc, err = vfs.OpenLocation(p.Dir); err != nil {
			return settings{}, fmt.Errorf("arksave: Plugin.Dir: %w", err)
		}
		fsys, dir = loc.FS, loc.Path
	}
	layers := p.Layers
	if layers == nil {
		layers = DefaultLayers()
	}
	opts := p.WorldOptions
	if len(p.SkipComponents) > 0 || len(p.SkipResources) > 0 {
		opts = append([]archetype.Option{archetype.SkipComponents(p.SkipComponents...), archetype.SkipResources(p.SkipResources...)}, opts...)
	}
	codec := newWorldCodec(opts)
	var playerOpts []archetype.Option
	thumbnail := p.Thumbnail
	if p.Key != nil {
		thumbnail = nil // a picture of the world would show what the key hides
		if len(p.Key) != seal.KeySize {
			return settings{}, fmt.Errorf("arksave: Plugin.Key has %d bytes: %w; give 32 random bytes (AES-256), the same at every start", len(p.Key), archetype.ErrWrongKey)
		}
		codec.keyed = true
		codec.opts = append(codec.opts, archetype.Key(p.Key))
		playerOpts = []archetype.Option{archetype.Key(p.Key)}
	}
	return settings{
		dir:   dir,
		loc:   loc,
		codec: codec,
		rt: plugin.Config{
			Writer: savedir.Options{
				FS: fsys,
				Store: chunkstore.Options{
					ChunkSize:    uint16(chunk),
					TileSize:     uint16(tile),
					PixelSize:    4,
					Seed:         p.Seed,
					Generator:    p.Generator,
					Layers:       layers,
					Encoding:     p.ChunkEncoding,
					Workers:      p.CompressionWorkers,
					DataFileSize: p.DataFileSize,
					Key:          p.Key,
					ZstdArchive:  p.ArchiveZstd,
				},
				LockTimeout: p.LockTimeout,
				Logger:      p.Logger,
			},
			TickDuration:     cmpOr(p.TickDuration, DefaultTickDuration),
			MaxPendingChunks: cmpOr(p.MaxPendingChunks, defaultMaxPending),
			OnChunkLoaded:    p.OnChunkLoaded,
			OnBodyLoaded:     p.OnBodyLoaded,
			OnEntityLoaded:   p.OnEntityLoaded,
			Positions:        locs,
			Hysteresis:       cmpOr(p.Hysteresis, defaultHysteresis),
			Checkpoint:       checkpoint,
			SectionOptions:   opts,
			PlayerOptions:    playerOpts,
			WorldCodec:       codec,
			SaveOnFinalize:   p.SaveOnFinalize,
			Name:             cmp.Or(p.Name, saveName(p.Dir)),
			Thumbnail:        thumbnail,
		},
	}, nil
}

// saveName is the default Plugin.Name: the last element of dir's path (a
// location's, without its query).
func saveName(dir string) string {
	dir, _, _ = strings.Cut(dir, "?")
	return path.Base(filepath.ToSlash(filepath.Clean(dir)))
}

// cmpOr returns v, or def when v is zero.
func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Install adds the plugin's resources to the world, opens the save
// directory and takes its lock (loading the save if Load or LoadOrCreate is
// set and there is one), and returns the systems to run every tick after
// the game's own: first the streaming system, then the save system
// (package systems).
//
// Install needs the world's component and resource types registered first
// when Load is set, as for any PECS decode: components with
// ecs.ComponentID, resources with ecs.AddResource.
//
// Install checks every registered component type and every resource the
// world holds (archetype.Check with the plugin's codec options): a type
// whose values could not come back exactly from a save (a channel or a
// function inside, say) makes Install fail with an error matching
// archetype.ErrUnsupportedType that names the type, the field and the ways
// out. Types registered later are checked at the first save that meets
// them. The plugin's own runtime resources and ark-tools' scheduler
// resources ([SchedulerResources]) are not saved.
//
// A save directory on a medium that cannot be written loads read-only:
// every save then fails with an error matching ErrReadOnly.
//
// A world holds one installation: a second Install into it while the
// first's Persistence is open fails with ErrInstalled, before it opens or
// locks anything. Once that Persistence is closed, Install may install the
// plugin in the world again.
//
// The resources Install adds: [autosave.Config], [autosave.State],
// [autosave.SimulationState], [Persistence], components.ChunkIndex and
// components.BodyIDs.
func (p Plugin) Install(w *ecs.World) ([]System, error) {
	if old := ecs.GetResource[Persistence](w); old != nil && old.rt != nil && !old.rt.Closed() {
		// Checked before anything is opened or locked: the first
		// installation keeps its directory and the runtime the systems use.
		return nil, fmt.Errorf("%w, saving to %s: close its Persistence first (Persistence.Close), or switch saves with Persistence.Load or Persistence.SaveAs",
			ErrInstalled, old.Dir())
	}
	s, err := p.resolve()
	if err != nil {
		return nil, err
	}
	systems, err := p.install(w, s)
	if err != nil {
		s.loc.Close()
		return nil, err
	}
	return systems, nil
}

func (p Plugin) install(w *ecs.World, s settings) ([]System, error) {
	p.Dir = s.dir
	if !p.LoadVersion.isZero() {
		if p.Overwrite {
			return nil, fmt.Errorf("arksave: Plugin.LoadVersion %+v with Overwrite: a load keeps the save, Overwrite starts a new world; set one of them", p.LoadVersion)
		}
		p.Load, p.LoadOrCreate = true, false
	}
	load := p.Load || p.LoadOrCreate
	if p.Load && !p.LoadOrCreate {
		// Look before creating or locking anything: a mistyped directory
		// stays as it is.
		if err := p.expectSave(s.rt.Writer.FS); err != nil {
			return nil, err
		}
	}
	registerComponents(w)
	// Every type a save would write must come back exactly: refuse at start-up
	// what cannot, not at the first autosave minutes later.
	if err := archetype.Check(w, s.codec.opts...); err != nil {
		return nil, fmt.Errorf("arksave: the world holds types that cannot be saved (register the game's types before Install to have them checked here): %w", err)
	}
	conf := autosave.DefaultConfig()
	if p.Autosave != nil {
		conf = *p.Autosave
	}
	addResource(w, &conf)
	addResource(w, &autosave.State{})
	addResource(w, &autosave.SimulationState{})
	addResource(w, components.NewChunkIndex())
	addResource(w, &components.BodyIDs{Session: 1})

	dir, err := savedir.OpenDir(s.rt.Writer.FS, p.Dir, savedir.LockTimeout(p.LockTimeout))
	if err != nil {
		if le := (*autosave.LockedError)(nil); errors.As(err, &le) && p.Logger != nil {
			p.Logger.Error("save directory locked", "dir", p.Dir, "holder", le.Who(), "err", err)
		} else if p.Logger != nil {
			p.Logger.Error("open save directory", "dir", p.Dir, "err", err)
		}
		return nil, err
	}
	if ro := dir.ReadOnly(); ro != nil && p.Logger != nil {
		p.Logger.Warn("save directory is read-only: saves will fail", "dir", p.Dir, "err", ro)
	}
	hasSave := dir.Manifest() != nil
	switch {
	case hasSave && !load && !p.Overwrite:
		dir.Close()
		return nil, fmt.Errorf("%s: %w", p.Dir, ErrSaveExists)
	case !hasSave && p.Load && !p.LoadOrCreate:
		dir.Close()
		return nil, p.noSave(dir)
	}
	var world []byte
	var fb *autosave.Fallback
	var picked *savedir.Picked
	if hasSave && load {
		// The generation to load, made current before the writer opens its store.
		world, fb, picked, err = p.loadFrom(dir, func(data []byte) error { return s.codec.Validate(data, w) })
		if err != nil {
			dir.Close()
			if p.Logger != nil {
				p.Logger.Error("load failed", "dir", p.Dir, "err", err)
			}
			return nil, fmt.Errorf("load %s: %w", p.Dir, err)
		}
	}
	s.rt.Writer.Fresh = hasSave && !load
	rt, err := plugin.New(w, dir, s.rt)
	if err != nil {
		return nil, err
	}
	addResource(w, &Persistence{rt: rt, loc: s.loc})
	if hasSave && load {
		if err := rt.Adopt(p.Dir, world, fb, picked); err != nil {
			rt.Close()
			return nil, err
		}
	}
	return []System{&systems.StreamSystem{}, &systems.SaveSystem{}}, nil
}

// loadFrom returns the world file of the generation Install loads from
// the locked directory: the newest intact one (Dir.LoadIntact), or the
// kept generation LoadVersion names (Dir.LoadPicked).
func (p Plugin) loadFrom(dir *savedir.Dir, validate func([]byte) error) ([]byte, *autosave.Fallback, *savedir.Picked, error) {
	if p.LoadVersion.isZero() {
		world, fb, err := dir.LoadIntact(validate)
		return world, fb, nil, err
	}
	return dir.LoadPicked(p.LoadVersion.Generation, p.LoadVersion.At, validate)
}

// expectSave returns an error matching ErrNoSave when Dir does not exist or
// holds no save, without creating or changing anything. A damaged or lost
// manifest is left to OpenDir, which names the repair.
func (p Plugin) expectSave(fsys vfs.FS) error {
	d, err := savedir.OpenDirReadOnly(fsys, p.Dir)
	if hint := errs.DeniedHint(err); hint != "" {
		return fmt.Errorf("arksave: load: %w; %s", err, hint)
	}
	if err != nil {
		return fmt.Errorf("arksave: load: %w; set Plugin.LoadOrCreate to start a new world there", err)
	}
	if err := d.LostManifest(); err != nil {
		return fmt.Errorf("arksave: load: %w", err)
	}
	if d.Manifest() == nil && errors.Is(d.ManifestErr(), ErrNoSave) {
		return p.noSave(d)
	}
	return nil
}

// noSave explains a directory that holds no save to load.
func (p Plugin) noSave(d *savedir.Dir) error {
	msg := fmt.Sprintf("arksave: load: %s holds no save", p.Dir)
	if files := d.Leftovers(); len(files) > 0 {
		msg += fmt.Sprintf(" (%s: what a first save left that did not commit; arksave repair %s can make a save of it)", strings.Join(files, ", "), p.Dir)
	}
	return fmt.Errorf("%w: %s; set Plugin.LoadOrCreate to start a new world there", ErrNoSave, msg)
}

// addResource adds res unless the world has a resource of its type; an
// existing one is overwritten in place so that pointers stay valid.
func addResource[T any](w *ecs.World, res *T) {
	if old := ecs.GetResource[T](w); old != nil {
		*old = *res
		return
	}
	ecs.AddResource(w, res)
}

func registerComponents(w *ecs.World) {
	ecs.ComponentID[components.ChunkPos](w)
	ecs.ComponentID[components.Chunk](w)
	ecs.ComponentID[components.ChunkState](w)
	ecs.ComponentID[components.PixelBody](w)
	ecs.ComponentID[components.Persistable](w)
	ecs.ComponentID[components.Transient](w)
	ecs.ComponentID[components.Focus](w)
	plugin.Register(w)
}

// RegionalPosition tells the plugin where regional entities with one
// position component type stand; make one with [Position].
type RegionalPosition interface {
	locator() plugin.Locator
}

// Position returns the [RegionalPosition] of position component T: xy
// returns the position in world pixels. A regional entity with several
// registered position components is placed by the first in
// Plugin.Positions (a pixel body by its PixelBody).
func Position[T any](xy func(*T) (x, y float64)) RegionalPosition {
	return positionOf{plugin.NewLocator(xy)}
}

type positionOf struct{ l plugin.Locator }

func (p positionOf) locator() plugin.Locator { return p.l }
