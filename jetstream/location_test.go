package jetstream_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/arksave/arksave/internal/testkit/contract"
	"github.com/arksave/arksave/jetstream"
)

func TestParseLocation(t *testing.T) {
	l, err := jetstream.ParseLocation("nats://u:p@h:4222/w-1?servers=nats://h2:4222,nats://h3:4222&replicas=3&lease=2s&steal=true&timeout=3s&block=4096&creds=a.creds&nkey=b.nk&tls_ca=ca.pem&tls_cert=c.pem&tls_key=k.pem")
	must(t, err)
	expect(t, l.World == "w-1" && len(l.Servers) == 3 && l.Servers[0] == "nats://u:p@h:4222" && l.Servers[2] == "nats://h3:4222", "servers and world: %+v", l)
	expect(t, l.Options == jetstream.Options{Replicas: 3, LeaseTTL: 2 * time.Second, Steal: true, Timeout: 3 * time.Second, BlockSize: 4096}, "options: %+v", l.Options)
	expect(t, l.Creds == "a.creds" && l.NKey == "b.nk" && l.CA == "ca.pem" && l.Cert == "c.pem" && l.Key == "k.pem", "files: %+v", l)

	for _, bad := range []string{
		"http://h/w",                // another scheme
		"nats:///w",                 // no server
		"nats://h:4222",             // no world
		"nats://h/a/b",              // not a world's name
		"nats://h/w.x",              // not a world's name
		"nats://h/w?replicas=x",     // not a number
		"nats://h/w?replicas=7",     // too many
		"nats://h/w?lease=10ms",     // below the server's second
		"nats://h/w?nosuch=1",       // unknown parameter
		"nats://h/w?tls_cert=c.pem", // a certificate without its key
		"nats://u:secret@h/w?steal=maybe",
	} {
		_, err := jetstream.ParseLocation(bad)
		expect(t, err != nil, "%s: no error", bad)
		expect(t, !strings.Contains(err.Error(), "secret"), "%s: the password is in the message: %v", bad, err)
	}
}

// writePEM writes a PEM block to a file in dir and returns its path.
func writePEM(t *testing.T, dir, name, kind string, der []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	must(t, os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
	return p
}

// testCA makes a certificate authority and a certificate it signs for
// 127.0.0.1; it returns the CA's PEM file and the server's TLS config.
func testCA(t *testing.T, dir, name string) (caFile string, cfg *tls.Config) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	must(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	must(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature,
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	must(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	must(t, err)
	pair, err := tls.X509KeyPair(
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	must(t, err)
	return writePEM(t, dir, name+".pem", "CERTIFICATE", caDER), &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
}

// A server that takes TLS connections only and knows its users by nkey: a
// location with the right CA and nkey seed file saves there; another CA,
// no nkey, or another user's seed fail clearly, before anything is read
// or written.
func TestTLSAndNKey(t *testing.T) {
	dir := t.TempDir()
	ca, serverTLS := testCA(t, dir, "arksave test CA")
	otherCA, _ := testCA(t, dir, "another CA")
	user, err := nkeys.CreateUser()
	must(t, err)
	pub, err := user.PublicKey()
	must(t, err)
	seed, err := user.Seed()
	must(t, err)
	seedFile := filepath.Join(dir, "user.nk")
	must(t, os.WriteFile(seedFile, seed, 0o600))
	stranger, err := nkeys.CreateUser()
	must(t, err)
	strangerSeed, err := stranger.Seed()
	must(t, err)
	strangerFile := filepath.Join(dir, "stranger.nk")
	must(t, os.WriteFile(strangerFile, strangerSeed, 0o600))

	s := startServer(t, func(o *server.Options) {
		o.TLSConfig, o.TLS, o.TLSTimeout = serverTLS, true, 2
		o.Nkeys = []*server.NkeyUser{{Nkey: pub}}
	})
	base := "nats://" + s.Addr().String() + "/secure?timeout=2s"
	open := func(location string) (*jetstream.FS, error) {
		f, _, err := jetstream.Open(location)
		if err == nil {
			t.Cleanup(func() { f.Close() })
		}
		return f, err
	}
	fsys, err := open(base + "&tls_ca=" + ca + "&nkey=" + seedFile)
	must(t, err)
	w := openWriter(t, fsys, "secure", 0)
	must(t, saveGen(w, 1).Err)
	must(t, w.Close())

	for _, bad := range []struct{ location, why string }{
		{base + "&tls_ca=" + otherCA + "&nkey=" + seedFile, "certificate"},
		{base + "&nkey=" + seedFile, "certificate"},
		{base + "&tls_ca=" + ca, "credentials"},
		{base + "&tls_ca=" + ca + "&nkey=" + strangerFile, "credentials"},
	} {
		_, err := open(bad.location)
		expect(t, err != nil && strings.Contains(err.Error(), bad.why), "%s: %v", bad.location, err)
		if bad.why == "credentials" {
			expect(t, errors.Is(err, fs.ErrPermission), "%s: not a permission error: %v", bad.location, err)
		}
	}
	contract.ExpectGeneration(t, fsys, "secure", 1)
	_, err = open(base + "&tls_ca=" + ca + "&nkey=" + filepath.Join(dir, "missing.nk"))
	expect(t, err != nil && strings.Contains(err.Error(), "missing.nk"), "a missing nkey file: %v", err)
}
