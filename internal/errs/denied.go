package errs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Denied reports whether err is a refused permission (it matches
// fs.ErrPermission), and the path the refusal names: that of the innermost
// *fs.PathError or *os.LinkError in its chain, "" when it names none.
func Denied(err error) (path string, ok bool) {
	if !errors.Is(err, fs.ErrPermission) {
		return "", false
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		path = pe.Path
	}
	var le *os.LinkError
	if path == "" && errors.As(err, &le) {
		path = le.Old
	}
	return path, true
}

// DeniedHint says what a refused permission is and the one right next step,
// for a message after err: a permission problem on a path, not damage. It
// returns "" when err is no refused permission.
func DeniedHint(err error) string {
	path, ok := Denied(err)
	if !ok {
		return ""
	}
	if path == "" {
		return "this is a permission problem, not damage: give the user running this program access to the save directory and its files, and run again"
	}
	return fmt.Sprintf("this is a permission problem on %s, not damage: give the user running this program access to it (ls -l %s shows its owner and mode) and run again", path, path)
}
