package archetype

import (
	"fmt"
	"reflect"
	"time"

	"github.com/mlange-42/ark/ecs"
)

// Option configures [Encode] and [Decode]. Each option says which of the two it affects;
// the other ignores it, so one option list can serve both.
type Option func(*options)

type options struct {
	timestamp    int64
	hasTimestamp bool
	lz4          bool
	noResources  bool
	ignore       bool
	skipComps    map[reflect.Type]bool
	skipEntities map[reflect.Type]bool
	transient    map[reflect.Type]bool
	skipRes      map[reflect.Type]bool
	skipResNames map[string]bool
	aliases      map[string]reflect.Type
	versions     map[reflect.Type]uint32
	migrations   map[migrationKey]migration
	compactPool  bool
	toStable     func(ecs.Entity) (uint64, bool)
	fromStable   func(uint64) ecs.Entity
	keep         func(rest []byte, cause error) // KeepUndecodable
	keptRefs     map[int]bool                   // reference-table entries that point to kept entities
	key          []byte                         // Key: AES-256-GCM key of encrypted files
	keyed        bool                           // Key was given (a nil or short key is refused, not ignored)
}

type migrationKey struct {
	typ  reflect.Type
	from uint32
}

// migration turns an old value, read by field name, into a new value of the target type.
type migration func(old map[string]any) (reflect.Value, error)

func buildOptions(opts []Option) *options {
	o := &options{}
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
	return o
}

func addTypes(m *map[reflect.Type]bool, comps []ecs.Comp) {
	if *m == nil {
		*m = map[reflect.Type]bool{}
	}
	for _, c := range comps {
		(*m)[c.Type()] = true
	}
}

// version returns the type version of t: set by [TypeVersion], else from its PECSVersion method.
func (o *options) version(info *typeInfo) uint32 {
	if v, ok := o.versions[info.typ]; ok {
		return v
	}
	return info.version
}

// Timestamp fixes the time written into the header (milliseconds since the Unix epoch), so that
// the same world always gives the same bytes. Without it, [Encode] writes the current time.
// Encode only.
func Timestamp(t time.Time) Option {
	return func(o *options) {
		o.timestamp = t.UnixMilli()
		o.hasTimestamp = true
	}
}

// SkipComponents leaves the given component types out. Encode: entities are saved without
// them (relation targets of skipped relation components too). Decode: stored columns of these
// types are read and dropped, so entities are created without them.
func SkipComponents(comps ...ecs.Comp) Option {
	return func(o *options) { addTypes(&o.skipComps, comps) }
}

// SkipEntitiesWith leaves out every entity that has any of the given components (transient
// markers, or components saved elsewhere). Encode only. Their pool slots are written as free
// with the generation bumped, exactly as if the entities had been removed before saving: after
// [Decode] old handles to them are dead, relation targets pointing at them are the zero entity,
// and their ids are recycled by the next entities the game creates.
func SkipEntitiesWith(comps ...ecs.Comp) Option {
	return func(o *options) { addTypes(&o.skipEntities, comps) }
}

// Transient marks component types whose membership is saved but whose data is not: the type
// is in the registry with [TypeTransient], entities keep the component, and after [Decode] it
// holds the zero value. Encode only; a file says by itself which of its types are transient.
func Transient(comps ...ecs.Comp) Option {
	return func(o *options) { addTypes(&o.transient, comps) }
}

// SkipResources leaves the given resource types out: Encode does not write them, Decode does
// not touch them. Types are given as ecs.C[T]() like components.
func SkipResources(res ...ecs.Comp) Option {
	return func(o *options) { addTypes(&o.skipRes, res) }
}

// SkipResourceNames leaves out the resources whose types have the given full names (package
// path, dot, type name, as the inspect command lists them), like [SkipResources] for types of packages the
// program does not import: the arksave plugin leaves ark-tools' scheduler resources out this way.
// Encode and Decode.
func SkipResourceNames(names ...string) Option {
	return func(o *options) {
		if o.skipResNames == nil {
			o.skipResNames = map[string]bool{}
		}
		for _, n := range names {
			o.skipResNames[n] = true
		}
	}
}

// skipsResource reports whether resources of type t are left out.
func (o *options) skipsResource(t reflect.Type) bool {
	return o.noResources || o.skipRes[t] || o.skipResNames[typeName(t)]
}

// WithoutResources leaves out every resource: Encode writes none, Decode reads and drops them.
func WithoutResources() Option {
	return func(o *options) { o.noResources = true }
}

// LZ4 compresses every column and resource blob with the LZ4 block format, keeping a blob
// uncompressed where compression does not make it smaller. Sets [FlagLZ4]. Encode only;
// Decode reads both.
func LZ4() Option {
	return func(o *options) { o.lz4 = true }
}

// Alias makes Decode read the type stored under oldName (its full name: package path, dot,
// type name, as the inspect command lists it) as the given type, for renamed or moved types. It applies to
// components and resources. Decode only.
func Alias(oldName string, comp ecs.Comp) Option {
	return func(o *options) {
		if o.aliases == nil {
			o.aliases = map[string]reflect.Type{}
		}
		o.aliases[oldName] = comp.Type()
	}
}

// CompactPool makes [Encode] write the entity pool without what its free slots hold (format
// 2.1): a bitmap of the alive slots (a bit per slot), the alive ids with their generations, and
// one generation for every free slot, above every generation any slot has had. Alive entities
// keep their ids and generations and handles to dead entities stay dead, but free slots come
// back in ascending order with that one generation instead of as they were. A world whose
// entities are mostly left out ([SkipEntitiesWith]) then writes about a bit per entity slot
// instead of 8 bytes. Encode only.
func CompactPool() Option {
	return func(o *options) { o.compactPool = true }
}

// TypeVersion sets the type version of a component or resource type, overriding its
// PECSVersion method. Encode writes it; Decode compares stored versions against it.
func TypeVersion(comp ecs.Comp, version uint32) Option {
	return func(o *options) {
		if o.versions == nil {
			o.versions = map[reflect.Type]uint32{}
		}
		o.versions[comp.Type()] = version
	}
}

// IgnoreUnknownTypes makes Decode drop stored types that the target world has not registered,
// instead of failing with [ErrUnknownType]: their columns are read and dropped, entities are
// created without them, unknown resources are skipped. Decode only.
func IgnoreUnknownTypes() Option {
	return func(o *options) { o.ignore = true }
}

// Migrate registers a migration for type T from a stored type version. When Decode meets T
// stored with version fromVersion and T's current version differs (see [Versioned],
// [TypeVersion]), it reads each old value by field name and calls fn with it.
//
// The old value is a map from field name to value: nested structs and maps are maps too (map
// keys that are not strings formatted with fmt.Sprint), arrays and slices []any, signed integers
// int64, unsigned integers uint64, floats float64, strings and byte slices string, entities
// ecs.Entity; unexported fields are listed too (for msgpack types since format 2.0). Values
// behind interfaces come as []any{type name, value}, times as []any{Unix seconds, nanoseconds,
// location kind, location, zone, offset}. One exception: Go int and uint fields are written in
// their shortest form, so such fields of msgpack-encoded types come as int64 or uint64 depending
// on the value; convert them with a type switch. A value that was not a struct comes under the
// key "value". fn returns the new value; an error from fn stops Decode and is returned wrapped.
//
// Migrations apply to components and resources, and chain nowhere: register one per old
// version, each producing the current version.
func Migrate[T any](fromVersion uint32, fn func(old map[string]any) (T, error)) Option {
	t := reflect.TypeFor[T]()
	return func(o *options) {
		if o.migrations == nil {
			o.migrations = map[migrationKey]migration{}
		}
		o.migrations[migrationKey{typ: t, from: fromVersion}] = func(old map[string]any) (reflect.Value, error) {
			v, err := fn(old)
			if err != nil {
				return reflect.Value{}, fmt.Errorf("archetype: migrating %s from version %d: %w", typeName(t), fromVersion, err)
			}
			return reflect.ValueOf(&v).Elem(), nil
		}
	}
}
