package savedir

import "github.com/arksave/arksave/vfs"

// consistentTries bounds how often a reader starts over because a writer
// moved on under it.
const consistentTries = 8

// ReadConsistent calls read with the save directory at dir opened
// read-only (OpenDirReadOnly) and returns its error. While a game saves
// into the directory, a commit can move a file the reader was about to
// open (the world file into backups/, an old chunk store away): when read
// fails and the directory's manifest has changed since it opened, read is
// called again with the new generation, a few times at most.
func ReadConsistent(fsys vfs.FS, dir string, read func(d *Dir) error) error {
	var err error
	for range consistentTries {
		var d *Dir
		if d, err = OpenDirReadOnly(fsys, dir); err != nil {
			return err
		}
		if err = read(d); err == nil || !d.Stale() {
			return err
		}
	}
	return err
}
