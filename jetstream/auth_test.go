package jetstream_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/testkit/contract"
	"github.com/arksave/arksave/jetstream"
	"github.com/arksave/arksave/vfs"
)

// worldPermissions are what a user needs to keep one world: its subjects
// and the JetStream API of its stream, and replies.
func worldPermissions(world string) *server.Permissions {
	stream := "ARKSAVE_" + world
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{
			"arksave." + world + ".>",
			"$JS.API.STREAM.*." + stream,
			"$JS.API.STREAM.MSG.GET." + stream,
			"$JS.API.DIRECT.GET." + stream,
			"$JS.API.DIRECT.GET." + stream + ".>",
		}},
		Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>"}},
	}
}

// Authorization: a user allowed one world saves there; a wrong or missing
// password fails clearly and changes nothing; another world's data can be
// neither read nor written.
func TestAuthorization(t *testing.T) {
	s := startServer(t, func(o *server.Options) {
		o.Users = []*server.User{
			{Username: "admin", Password: "admin-pw"},
			{Username: "alice", Password: "alice-pw", Permissions: worldPermissions("alice")},
		}
	})
	host := s.Addr().String()
	open := func(location string) (*jetstream.FS, string, error) {
		f, world, err := jetstream.Open(location)
		if err == nil {
			t.Cleanup(func() { f.Close() })
		}
		return f, world, err
	}
	admin, _, err := open("nats://admin:admin-pw@" + host + "/bob")
	must(t, err)
	wb := openWriter(t, admin, "bob", 0)
	must(t, saveGen(wb, 1).Err)
	must(t, wb.Close())

	alice, world, err := open("nats://alice:alice-pw@" + host + "/alice?timeout=1s")
	must(t, err)
	wa := openWriter(t, alice, world, 0)
	for g := 1; g <= 2; g++ {
		must(t, saveGen(wa, g).Err)
	}
	must(t, wa.Close())
	contract.ExpectGeneration(t, alice, "alice", 2)

	for _, bad := range []string{"nats://alice:wrong@" + host + "/alice", "nats://" + host + "/alice"} {
		_, _, err := open(bad)
		expect(t, errors.Is(err, fs.ErrPermission) && strings.Contains(err.Error(), "refused the credentials"), "%s: %v", vfs.Redact(bad), err)
		expect(t, !strings.Contains(err.Error(), "wrong"), "the password is in the message: %v", err)
	}
	contract.ExpectGeneration(t, admin, "alice", 2)

	start := time.Now()
	_, err = savedir.OpenDirReadOnly(alice, "bob")
	expect(t, errors.Is(err, fs.ErrPermission) && strings.Contains(err.Error(), "do not allow"), "alice reads bob's world: %v", err)
	_, err = alice.Open("bob/manifest")
	expect(t, errors.Is(err, fs.ErrPermission), "alice opens bob's manifest: %v", err)
	_, err = savedir.OpenDir(alice, "bob")
	expect(t, err != nil, "alice opens bob's world to write")
	expect(t, time.Since(start) < 30*time.Second, "refusals took %v", time.Since(start))
	contract.ExpectGeneration(t, admin, "bob", 1)
}
