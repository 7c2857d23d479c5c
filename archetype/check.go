package archetype

import (
	"errors"

	"github.com/mlange-42/ark/ecs"
)

// Check reports whether [Encode], with the same options, can save every component type
// registered in world and every resource the world holds so that [Decode] brings it back exactly.
// It looks at types only, once per type, and writes nothing: call it at start-up so that a type
// that cannot be saved fails then, not at the first save minutes later. The arksave plugin's
// Install calls it.
//
// Types left out are not checked: components given to [Transient], [SkipComponents] or
// [SkipEntitiesWith], resources given to [SkipResources] or [SkipResourceNames], all resources
// with [WithoutResources]. Values behind interfaces are checked by Encode when it meets them
// (their concrete types depend on the values).
//
// The result is nil, or one error per refused type (joined with errors.Join), each matching
// [ErrUnsupportedType] and naming the type, the field path, why, and the ways out.
func Check(world *ecs.World, opts ...Option) error {
	o := buildOptions(opts)
	var errs []error
	for _, id := range ecs.ComponentIDs(world) {
		ci, ok := ecs.ComponentInfo(world, id)
		t := ci.Type
		if !ok || o.skipComps[t] || o.skipEntities[t] || o.transient[t] {
			continue
		}
		if info := infoOf(t); info.raw || info.zero {
			continue
		}
		if _, err := valueSchemaOf(t, "component"); err != nil {
			errs = append(errs, err)
		}
	}
	for _, id := range ecs.ResourceIDs(world) {
		t, ok := ecs.ResourceType(world, id)
		if !ok || !world.Resources().Has(id) || o.skipsResource(t) {
			continue
		}
		if _, err := valueSchemaOf(t, "resource"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
