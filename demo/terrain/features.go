package terrain

import "github.com/arksave/arksave/demo/sand"

// set writes p at world (wx, wy) if that pixel is in the chunk and holds
// want (as a material).
func (g *chunkGen) set(wx, wy int, want sand.Material, p uint32) {
	i, j := wx-g.x0, wy-g.y0
	if i < 0 || j < 0 || i >= g.size || j >= g.size {
		return
	}
	k := j*g.size + i
	if sand.Material(g.dst[k]&0xff) == want {
		g.dst[k] = p
	}
}

// trees plants trees on dry grass: a trunk of wood and a canopy of leaves.
// Each tree is anchored in a column cell, so chunks agree on trees that
// straddle their borders.
func (g *chunkGen) trees() {
	if g.y0 >= g.maxCaveFree || g.y0+g.size <= g.minSurface-maxTree {
		return
	}
	first, _ := floorDiv(g.x0-maxCanopy-treeCell, treeCell)
	last, _ := floorDiv(g.x0+g.size+maxCanopy, treeCell)
	for cell := first; cell <= last; cell++ {
		h := hash2(g.seed^saltTree, cell, 0)
		if h%100 >= 45 {
			continue
		}
		tx := cell*treeCell + 4 + int(h>>8%(treeCell-8))
		base := SurfaceY(tx, g.seed)
		if base >= WaterLevel-4 || base < -120 || value1(g.seed^saltDesert, tx, 2048) > one*3/10 {
			continue // lake, beach, bare mountain or desert
		}
		if d := SurfaceY(tx-4, g.seed) - SurfaceY(tx+4, g.seed); d > 6 || d < -6 {
			continue // too steep
		}
		height := 22 + int(h>>16%32)
		radius := 8 + int(h>>24%(maxCanopy-7))
		top := base - height
		for wx := tx - 1; wx <= tx+1; wx++ {
			ground := SurfaceY(wx, g.seed)
			for wy := top; wy < ground; wy++ {
				shade := 110 + 40*(wx-tx) + int(pixHash(g.seed32, wx, wy)&31)
				g.set(wx, wy, sand.Air, g.px(sand.Wood, shade))
			}
		}
		for dy := -radius - 2; dy <= radius+2; dy++ {
			for dx := -radius - 3; dx <= radius+3; dx++ {
				wx, wy := tx+dx, top+dy
				hp := pixHash(g.seed32, wx, wy)
				if dx*dx*2+dy*dy*3 > radius*radius*5/2+int(hp&63)-32 {
					continue
				}
				g.set(wx, wy, sand.Air, g.px(sand.Leaf, 80+int(hp>>8&127)-dy*4))
			}
		}
	}
}

// ores scatters blobs of coal, and deep down of gold, through the stone.
func (g *chunkGen) ores() {
	if g.y0+g.size <= g.maxCaveFree {
		return
	}
	cx0, _ := floorDiv(g.x0-maxOre, oreCell)
	cx1, _ := floorDiv(g.x0+g.size+maxOre, oreCell)
	cy0, _ := floorDiv(g.y0-maxOre, oreCell)
	cy1, _ := floorDiv(g.y0+g.size+maxOre, oreCell)
	for cy := cy0; cy <= cy1; cy++ {
		for cx := cx0; cx <= cx1; cx++ {
			h := hash2(g.seed^saltOre, cx, cy)
			if h%100 >= 9 {
				continue
			}
			ox := cx*oreCell + int(h>>8%oreCell)
			oy := cy*oreCell + int(h>>16%oreCell)
			r := 2 + int(h>>24%4)
			m := sand.Coal
			if oy > goldDepth && h>>32%3 == 0 {
				m = sand.Gold
			}
			for dy := -r; dy <= r; dy++ {
				for dx := -r; dx <= r; dx++ {
					hp := pixHash(g.seed32, ox+dx, oy+dy)
					if dx*dx+dy*dy > r*r+int(hp&3)-1 {
						continue
					}
					g.set(ox+dx, oy+dy, sand.Stone, g.px(m, 60+int(hp>>8&127)))
				}
			}
		}
	}
}
