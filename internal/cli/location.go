package cli

import "github.com/arksave/arksave/vfs"

// openLocation opens a command's save argument: a path of this machine as
// it is (the real file system), a location with a scheme (nats://...)
// through the backend this build registered. Close it when done.
func openLocation(arg string) (*vfs.Location, error) { return vfs.OpenLocation(arg) }

// remote reports whether arg is a location with a scheme rather than a path.
func remote(arg string) bool { return vfs.Scheme(arg) != "" }
