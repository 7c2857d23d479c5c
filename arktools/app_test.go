package arktools_test

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/mlange-42/ark-tools/app"
	"github.com/mlange-42/ark-tools/resource"
	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
)

const (
	seed  = 7
	ticks = 40
	// loadDirEnv, when set, makes TestSaveAndLoadInNewProcess the child: it loads the save there.
	loadDirEnv = "ARKTOOLS_TEST_LOAD_DIR"
)

// newApp is the game: an app.App with the game's system and, when dir is given, the plugin's.
func newApp(t *testing.T, appSeed uint64, plugin *arksave.Plugin) (*app.App, *arksave.Persistence) {
	t.Helper()
	a := app.New().Seed(appSeed)
	prepare(a.World, gameStart())
	a.AddSystem(&weatherSystem{})
	if plugin == nil {
		return a, nil
	}
	systems, err := plugin.Install(a.World)
	if err != nil {
		t.Fatalf("Install: %v", err)
	}
	for _, s := range systems {
		a.AddSystem(s)
	}
	return a, ecs.GetResource[arksave.Persistence](a.World)
}

// TestSaveAndLoadInNewProcess runs a real app.App with the plugin's systems for a while, saves
// at shutdown (with the run flag set, as a game does when it quits), and has a new process of
// this test binary load the save into a fresh app with another seed. The child compares what it
// loaded with a replay of the same game in memory: resource.Tick, resource.Rand (its *rand.PCG
// state and the numbers it draws next), the game's Calendar (unexported fields, an interface, a
// time in Europe/Berlin) and Cloud entities must be deep-equal; the scheduler's own resources
// (app.Systems, resource.Termination) must be the child's, not the saved ones.
func TestSaveAndLoadInNewProcess(t *testing.T) {
	if dir := os.Getenv(loadDirEnv); dir != "" {
		loadAndCompare(t, dir)
		return
	}
	dir := t.TempDir()
	a, pers := newApp(t, seed, &arksave.Plugin{Dir: dir, ChunkSize: 64})
	a.Initialize()
	for range ticks {
		a.Update()
	}
	ecs.GetResource[resource.Termination](a.World).Terminate = true
	if res := pers.SaveNow(); res.Err != nil {
		t.Fatalf("save: %v", res.Err)
	}
	a.Finalize()
	if err := pers.Close(); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestSaveAndLoadInNewProcess$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), loadDirEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	t.Logf("the new process:\n%s", out)
	if err != nil || !strings.Contains(string(out), "loaded exactly") {
		t.Fatalf("the new process: %v\n%s", err, out)
	}
}

// loadAndCompare is the child: load the save into a fresh app and compare it with a replay.
func loadAndCompare(t *testing.T, dir string) {
	a, pers := newApp(t, rand.Uint64(), &arksave.Plugin{Dir: dir, ChunkSize: 64, Load: true})
	defer pers.Close()
	if pers.Generation() != 1 {
		t.Fatalf("loaded generation %d, want 1", pers.Generation())
	}
	replay, _ := newApp(t, seed, nil)
	replay.Initialize()
	for range ticks {
		replay.Update()
	}

	expectSame := func(what string, want, got any) {
		t.Helper()
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s:\n want %#v\n  got %#v", what, want, got)
		}
	}
	expectSame("resource.Tick", *ecs.GetResource[resource.Tick](replay.World), *ecs.GetResource[resource.Tick](a.World))
	wantRand, gotRand := ecs.GetResource[resource.Rand](replay.World), ecs.GetResource[resource.Rand](a.World)
	expectSame("resource.Rand", *wantRand, *gotRand)
	expectSame("Calendar", *ecs.GetResource[Calendar](replay.World), *ecs.GetResource[Calendar](a.World))
	expectSame("Cloud entities", clouds(replay.World), clouds(a.World))
	for i := range 5 {
		if w, g := wantRand.Uint64(), gotRand.Uint64(); w != g {
			t.Errorf("draw %d after loading: %d, the replay draws %d", i, g, w)
		}
	}
	if ecs.GetResource[resource.Termination](a.World).Terminate {
		t.Error("the saved run flag was loaded: the scheduler's resources must stay out of saves")
	}
	if sys := ecs.GetResource[app.Systems](a.World); len(sys.Systems()) != 3 {
		t.Errorf("app.Systems holds %d systems after loading, want this app's 3", len(sys.Systems()))
	}
	if cal := ecs.GetResource[Calendar](a.World); cal.Day != ticks || len(cal.rainy) == 0 || cal.started.Location().String() != gameStart().Location().String() {
		t.Errorf("calendar %+v", *cal)
	}

	// The loaded game runs on like the replay.
	a.Initialize()
	for range 10 {
		a.Update()
		replay.Update()
	}
	expectSame("Calendar after 10 more ticks", *ecs.GetResource[Calendar](replay.World), *ecs.GetResource[Calendar](a.World))
	if !t.Failed() {
		t.Log("loaded exactly")
	}
}

// clouds lists every Cloud entity with its value.
func clouds(w *ecs.World) map[ecs.Entity]Cloud {
	out := map[ecs.Entity]Cloud{}
	q := ecs.NewFilter1[Cloud](w).Query()
	for q.Next() {
		out[q.Entity()] = *q.Get()
	}
	return out
}
