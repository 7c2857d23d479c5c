package cli

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
)

func init() {
	register(&command{
		name:    "version",
		args:    "[--json]",
		summary: "print the arksave module's version and the format versions this build reads and writes",
		run:     runVersion,
		flags:   func() *flag.FlagSet { return jsonFlags("version", new(bool)) },
	})
}

// formatJSON is one file format: what this build writes and the oldest it reads.
type formatJSON struct {
	Name   string `json:"name"`
	Writes string `json:"writes"`
	Reads  string `json:"reads"`
}

type versionJSON struct {
	Module   string       `json:"module"`
	Version  string       `json:"version"`
	Revision string       `json:"revision,omitempty"`
	Modified bool         `json:"modified,omitempty"`
	Go       string       `json:"go"`
	Formats  []formatJSON `json:"formats"`
}

// buildVersion reads the module version from the build information: the
// tagged version for `go install ...@vX`, "(devel)" with the VCS revision
// for a build from a checkout.
func buildVersion() versionJSON {
	v := versionJSON{Module: "github.com/arksave/arksave", Version: "(unknown)", Go: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v.Module, v.Version = bi.Main.Path, bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	v.Formats = []formatJSON{
		{Name: "save directory manifest", Writes: fmt.Sprint(savedir.ManifestVersion),
			Reads: fmt.Sprintf("%d to %d", savedir.OldestManifestVersion, savedir.ManifestVersion)},
		{Name: "PECS world file", Writes: fmt.Sprintf("%d.%d (entity sections %d.%d)", archetype.VersionMajor, archetype.WorldVersionMinor, archetype.VersionMajor, archetype.VersionMinor),
			Reads: fmt.Sprintf("%d.0 to %d.%d", archetype.OldestVersionMajor, archetype.VersionMajor, archetype.VersionMinor)},
		{Name: "PXSW chunk store", Writes: fmt.Sprint(chunkstore.FormatVersion),
			Reads: fmt.Sprintf("%d to %d", chunkstore.OldestFormatVersion, chunkstore.FormatVersion)},
	}
	return v
}

func runVersion(args []string, stdout, stderr io.Writer) error {
	var asJSON bool
	rest, err := parseFlags(jsonFlags("version", &asJSON), args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("version takes no arguments")
	}
	v := buildVersion()
	if asJSON {
		return writeJSON(stdout, v)
	}
	fmt.Fprintf(stdout, "arksave %s: module %s, built with %s", v.Version, v.Module, v.Go)
	if v.Revision != "" {
		rev := v.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		fmt.Fprintf(stdout, ", revision %s", rev)
		if v.Modified {
			fmt.Fprint(stdout, " with local changes")
		}
	}
	fmt.Fprintln(stdout)
	for _, f := range v.Formats {
		fmt.Fprintf(stdout, "  %-24s writes %-4s reads %s\n", f.Name, f.Writes, f.Reads)
	}
	return nil
}
