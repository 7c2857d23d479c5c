package savetest_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

var updatePixels = flag.Bool("update-pixels", false, "rewrite the pixel fixtures in testdata/")

// TestPixelFixtures rewrites the committed saves of other pixel sizes with
// -update-pixels, and checks each: its store's pixel size, and every record
// kind in it.
func TestPixelFixtures(t *testing.T) {
	for _, f := range savetest.PixelFixtures {
		t.Run(f.Name, func(t *testing.T) {
			if *updatePixels {
				to := filepath.Join("testdata", f.Name)
				if err := os.RemoveAll(to); err != nil {
					t.Fatal(err)
				}
				if err := savetest.GeneratePixelFixture(to, f.Size, f.Widen); err != nil {
					t.Fatal(err)
				}
			}
			dir := filepath.Join(t.TempDir(), "save")
			build := map[string]func(string) error{"pixel-8": savetest.BuildPixel8, "pixel-8-misfit": savetest.BuildPixel8Misfit, "pixel-2": savetest.BuildPixel2}[f.Name]
			if err := build(dir); err != nil {
				t.Fatal(err)
			}
			s, err := savetest.OpenPixelStore(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			st := storetool.Tool.Stats(s)
			if p := storetool.Tool.PixelSize(s); p != f.Size || st.Full == 0 || st.Delta == 0 || st.Palette == 0 || st.BodyBlocks == 0 {
				t.Fatalf("%s: %d-byte pixels, %+v: want %d-byte ones in Full, Delta and Palette chunks and bodies", f.Name, p, st, f.Size)
			}
		})
	}
}
