package components

// BodyID is the stable id of a pixel body: session<<32 | counter: a load starts a new
// session, so ids made after it never collide with saved ones.
// It survives saves, loads, chunk unloads and reloads.
type BodyID uint64

// BodyIDs is the resource that hands out [BodyID]s. Session is unique per
// play session: the plugin starts a fresh world at session 1 and every load
// continues at the saved session plus one, so ids made in different sessions
// never collide, including fragments of split bodies.
type BodyIDs struct {
	Session uint32
	Counter uint32
}

// New returns a fresh id. When the counter wraps, the session advances.
func (g *BodyIDs) New() BodyID {
	if g.Session == 0 {
		g.Session = 1
	}
	g.Counter++
	if g.Counter == 0 {
		g.Session++
		g.Counter = 1
	}
	return BodyID(uint64(g.Session)<<32 | uint64(g.Counter))
}

// PixelBody is a rigid body made of pixels (the fields its record in the chunk
// store keeps).
//
// X, Y and Rotation are the blitted transform: where the body's pixels were
// last written into the world. That, not the physics position, is what is
// saved, so that a reloaded body sits exactly on its pixels.
type PixelBody struct {
	ID              BodyID
	X, Y            float32 // blitted position of the origin, world pixels
	Rotation        float32 // blitted rotation, radians
	VX, VY          float32 // linear velocity, pixels per second
	AngularVelocity float32 // radians per second
	Width, Height   uint32  // pixel grid size
	OriginX         int32   // grid offset of the rotation origin
	OriginY         int32
	Pixels          []Pixel // Width*Height, row-major
	Shape           []bool  // Width*Height: true where the body has a pixel
	Extension       []byte  // game-defined data, saved as is
}

// IsEmpty reports whether the body has no pixel left. Empty bodies are
// never saved: a body that left nothing in the world leaves no record.
func (b *PixelBody) IsEmpty() bool {
	for _, s := range b.Shape {
		if s {
			return false
		}
	}
	return true
}

// Clone returns a deep copy of the body.
func (b *PixelBody) Clone() PixelBody {
	c := *b
	c.Pixels = append([]Pixel(nil), b.Pixels...)
	c.Shape = append([]bool(nil), b.Shape...)
	c.Extension = append([]byte(nil), b.Extension...)
	return c
}

// Persistable marks a pixel body that is saved with its chunk and restored
// when the chunk reloads. Bodies without it (or [Regional]) are despawned on
// unload. The plugin makes a persistable body a regional entity: it adds
// Regional with the body's ID (giving the body a fresh ID first if it has
// none), so that the body is saved like any regional entity, with all its
// components.
type Persistable struct{}

// Transient marks an entity that is never saved.
type Transient struct{}
