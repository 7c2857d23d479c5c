// Package mapserve serves a live web map and inspector of an arksave save
// directory: what arksave serve runs, as a library, so that a game can
// serve its saves with its own generator and colours.
//
// The page shows the saved pixel world as map tiles at several zoom levels,
// pans and zooms with mouse and touch, draws the entities stored with the
// chunks with their ids (pixel bodies by their bounds, other regional
// entities as a marker at their position), and on a click shows a chunk's
// record or an entity's components. A panel lists the generations and
// backups, the chunk stores and the ECS world file, and the result of
// arksave check. While a game autosaves into the directory the page
// follows each new generation and redraws only what changed.
//
// Labels never overlap: those that would at the zoom shown merge into one
// label at their centre ("12 bodies"), which zooms in on a click; the
// closer the zoom, the fewer share one, and at the closest each entity
// has its own unless two stand nearly on one spot. A go-to box takes world
// pixels ("x,y") or a chunk ("chunk x,y") and centres the map there; a
// find box takes the id of a pixel body, a regional entity or a player
// ("kind:id" picks the kind), centres the map on it and opens its panel,
// or says that the generation shown has none.
//
// Without the game's generator (Options.Generator) the map has only the
// stored chunks' pixels to draw, and the page says so ("terrain not
// generated"); a game gives its generator and colours, as demo/map does:
//
//	m, err := mapserve.New(dir, mapserve.Options{Generator: terrain.Generator{}, Palette: palette})
//
// A time slider runs over the generations the save keeps (the committed
// one and its backups): the page shows any of them, and follows the live
// one at the slider's right end. An overlay tints the chunks that two
// generations store differently (added, removed, changed). The address
// keeps the generation shown and the one compared with.
//
// # Outline
//
//   - [New] opens a save directory read-only and returns a [Server], an
//     http.Handler; [Server.Close] stops it.
//   - [Options]: the file system, the game's [chunkstore.Generator] and
//     colours, where its regional entities stand ([PositionFields]), how
//     often the manifest is polled, the tile cache.
//   - [NewMulti] serves several saves' servers under one handler, each at
//     /w/NAME/ (its directory's name) with a switcher on the page; a name
//     in an address only selects among them.
//   - [Server.Refresh] reads the manifest once and moves to a new
//     generation if there is one; the server does so every Options.Poll.
//   - New fails for a path that holds no save with an error matching
//     arksave.ErrNoSave, and for a save whose committed generation does
//     not open with one matching arksave.ErrCorrupt.
//
// # Regional entities
//
// An entity of any archetype with components.Regional is stored in an
// entity section of the chunk it stands in. The map reads every section of
// a generation's entity blocks without the game's types
// (archetype.ExportSectionJSON) and lists each entity that is not a pixel
// body by its stable id, with its components in the JSON export's view. A
// section stores no position the map could know, so it asks
// Options.Position; without an answer it takes the first component (in the
// section's order) with number fields X and Y, or x and y; failing that it
// draws the entity at the centre of its chunk and says so ("placed":
// "chunk" in /api/entities).
//
// Players (components.Player) are saved apart from the chunks, each as one
// record of its entities. A player is on the map (kind "player") where an
// entity of its record has a position found the same way (Options.Position,
// else X and Y); a player without one is not.
//
// # Reading while a game saves
//
// The server never writes into the directory and never takes its lock: it
// reads the manifest, opens the chunk store of the committed generation
// read-only through the root the manifest keeps, and reads records that
// the store only ever appends, so a game keeps saving undisturbed. Should a
// commit move a file on while a generation opens, it opens the new one
// (savedir.ReadConsistent). Every file it opens is one the manifest names,
// checked by the save directory's rules; nothing a request says is ever
// used as a file name.
//
// A kept generation a request names (the gen parameter) is looked up among
// the backup manifests the directory lists and opened read-only through the
// root its manifest keeps, like the live one. At most four are held open
// besides the live one, the least recently used closed first; each closes
// when the save drops it.
//
// # HTTP interface
//
//	GET /                              the page (index.html, app.js, style.css, embedded;
//	                                   its addresses are relative, so it works under /w/NAME/)
//	GET /api/world                     generation, live generation, chunk size, extent,
//	                                   stored chunks, warnings, whether a generator draws
//	                                   the terrain, the saves served with it (NewMulti)
//	GET /api/tiles/{z}/{x}/{y}.png     a 256x256 tile: level z is 2^z world pixels a tile pixel
//	GET /api/chunk?x=X&y=Y             a chunk's record: kind, sizes, version, bodies
//	GET /api/entities                  every entity: kind, id, position, bounds
//	GET /api/entity?kind=K&id=ID       one entity with its components (the JSON export's view):
//	                                   kind "body" by body id, "entity" by stable id,
//	                                   "player" by player id
//	GET /api/diff?a=G1[&b=G2]          the chunks generation G2 (absent: the live one) stores
//	                                   differently from G1: added, removed, changed, each [x, y]
//	GET /api/generations               generations and backups, chunk stores, the world file
//	GET /api/check[?fresh=1]           the save's check, as arksave check --json prints it
//	GET /api/events                    server-sent events: one "generation" event a commit
//
// /api/world, the tiles, /api/chunk, /api/entities and /api/entity take gen=G,
// a kept generation (/api/generations lists them), and answer for it; without
// it, for the live generation. A generation the save does not keep is 404,
// the answer naming those it keeps; a gen that is not a generation's number
// is 400.
//
// Under [NewMulti] each save's page and API are at /w/NAME/ with the paths
// above (/w/NAME/api/world, ...); / and /w/NAME redirect to a page, and a
// NAME that is not one of the saves given is 404, the answer listing them.
//
// Tiles carry an ETag made from the versions of the records drawn in them
// and the save's identity, with Cache-Control: no-cache, so that a browser
// revalidates and gets 304 Not Modified for a tile whose chunks did not
// change. A record's version is the store file and place its content was
// first read from: a store only appends, so a chunk saved anew is a new
// version, while a compaction, which copies every record into a new file,
// changes none. Rendered tiles are kept in a cache bounded in bytes, keyed
// the same way. A request that names an unknown path, parameter, zoom
// level, or coordinates outside the saved map gets a 4xx status and reads
// nothing.
//
// Each new generation is an event for the pages with the world rectangles
// to redraw: the chunks whose content changed, and the bodies of body
// blocks that changed, where they were and where they are; it says when
// the entities changed (a body, another regional entity or a player
// added, moved or removed), so that pages read /api/entities again.
package mapserve
