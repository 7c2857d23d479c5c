package arktools_test

import (
	"math/rand/v2"
	"time"

	"github.com/mlange-42/ark-tools/resource"
	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
)

// The game of the examples and tests: a day counter with weather drawn from ark-tools' Rand.

// Weather is what the sky does; the concrete types behind it are registered for saves.
type Weather interface{ Describe() string }

// Rain and Sun are the weathers.
type (
	Rain struct{ MM float64 }
	Sun  struct{}
)

func (r Rain) Describe() string { return "rain" }
func (Sun) Describe() string    { return "sun" }

func init() {
	archetype.Register[Rain]()
	archetype.Register[Sun]()
}

// Calendar is the game's own resource: exported and unexported fields, an interface, a time
// with a zone, a history.
type Calendar struct {
	Day     int
	Weather Weather
	started time.Time
	rainy   []int
}

// Cloud is a game component with an unexported field.
type Cloud struct {
	X, Y float64
	mass float32
}

// weatherSystem advances the calendar one day per tick, drawing from the app's Rand.
type weatherSystem struct {
	rng *rand.Rand
	cal *Calendar
}

func (s *weatherSystem) Initialize(w *ecs.World) {
	s.rng = rand.New(ecs.GetResource[resource.Rand](w).Source)
	s.cal = ecs.GetResource[Calendar](w)
}

func (s *weatherSystem) Update(w *ecs.World) {
	s.cal.Day++
	if mm := s.rng.Float64(); mm < 0.4 {
		s.cal.Weather = Rain{MM: mm * 10}
		s.cal.rainy = append(s.cal.rainy, s.cal.Day)
	} else {
		s.cal.Weather = Sun{}
	}
	if s.rng.IntN(4) == 0 {
		ecs.NewMap1[Cloud](w).NewEntity(&Cloud{X: s.rng.Float64(), Y: float64(s.cal.Day), mass: float32(s.rng.NormFloat64())})
	}
}

func (s *weatherSystem) Finalize(w *ecs.World) {}

// prepare registers the game's types and adds its resources, as every start of the game does.
func prepare(w *ecs.World, start time.Time) {
	ecs.ComponentID[Cloud](w)
	ecs.AddResource(w, &Calendar{started: start})
}

// gameStart is the calendar's start: a time in a loaded zone.
func gameStart() time.Time {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		loc = time.FixedZone("CET", 3600)
	}
	return time.Date(2026, 3, 1, 8, 0, 0, 0, loc)
}
