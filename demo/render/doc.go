// Package render draws the demo world into an RGBA pixel buffer: chunk
// pixels through a [Palette], air over a sky gradient or a cave wall, and a
// dark checker where no chunk is loaded. It needs no window, so it is tested
// and used headless; the game hands its buffer to Ebiten's WritePixels.
package render
