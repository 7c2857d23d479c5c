package components

// Pixel is one pixel of a chunk or pixel body. Its four layers are its
// little-endian bytes: byte 0 material, byte 1 colour, byte 2 damage,
// byte 3 flags. This layout is part of the chunk store's file format.
type Pixel uint32

// Layer shifts and masks of [Pixel].
const (
	MaterialShift = 0  // material id: 0 is air
	ColorShift    = 8  // colour variant of the material
	DamageShift   = 16 // accumulated damage
	FlagsShift    = 24 // flag bits, see FlagPixelBody

	// FlagPixelBody marks a pixel written into the world by a pixel body.
	// It is the one flag that persists: the others are simulation state.
	FlagPixelBody = 1 << 0

	// PersistMask selects the bits of a pixel that are saved: material, colour
	// and damage always, of the flags only FlagPixelBody. Simulation flags and
	// heat are rebuilt by the game after a load. It is the persisted bits of
	// the plugin's default layers (arksave.DefaultLayers).
	PersistMask = 0x00FFFFFF | FlagPixelBody<<FlagsShift
)

// MakePixel builds a pixel from its layers.
func MakePixel(material, color, damage, flags uint8) Pixel {
	return Pixel(material) | Pixel(color)<<ColorShift | Pixel(damage)<<DamageShift | Pixel(flags)<<FlagsShift
}

// Material returns the material layer.
func (p Pixel) Material() uint8 { return uint8(p >> MaterialShift) }

// Color returns the colour layer.
func (p Pixel) Color() uint8 { return uint8(p >> ColorShift) }

// Damage returns the damage layer.
func (p Pixel) Damage() uint8 { return uint8(p >> DamageShift) }

// Flags returns the flags layer.
func (p Pixel) Flags() uint8 { return uint8(p >> FlagsShift) }
