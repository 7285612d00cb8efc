// Package testcerts makes a throwaway PKI for TLS tests: a CA, and server and
// client certificates it signed, as PEM files in a test's temporary folder.
package testcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Certs is a throwaway PKI for TLS tests: a CA, and a server
// certificate (IP 127.0.0.1, DNS localhost) and a client certificate it
// signed, written as PEM files into the test's temporary directory. Each
// call makes a new CA, so two Certs do not trust each other.
type Certs struct {
	CA                    string // the CA certificate
	ServerCert, ServerKey string
	ClientCert, ClientKey string
}

// New makes a new CA and the certificates it signed; two calls do not trust
// each other.
func New(t testing.TB) Certs {
	t.Helper()
	dir := t.TempDir()
	now := time.Now()
	caKey := newTestKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "tritontop test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	c := Certs{
		CA:         writeTestPEM(t, dir, "ca.pem", "CERTIFICATE", caDER),
		ServerCert: filepath.Join(dir, "server.pem"), ServerKey: filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"), ClientKey: filepath.Join(dir, "client-key.pem"),
	}
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, certFile, keyFile string) {
		key := newTestKey(t)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: cn},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		}
		if usage == x509.ExtKeyUsageServerAuth {
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
			tmpl.DNSNames = []string{"localhost"}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		writeTestPEM(t, dir, filepath.Base(certFile), "CERTIFICATE", der)
		writeTestPEM(t, dir, filepath.Base(keyFile), "PRIVATE KEY", keyDER)
	}
	leaf(2, "tritontop test server", x509.ExtKeyUsageServerAuth, c.ServerCert, c.ServerKey)
	leaf(3, "tritontop test client", x509.ExtKeyUsageClientAuth, c.ClientCert, c.ClientKey)
	return c
}

// ServerTLS is the server side of c: its server certificate, and for
// mutual TLS a demand for a client certificate signed by c's CA.
func (c Certs) ServerTLS(t testing.TB, mutual bool) *tls.Config {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(c.ServerCert, c.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	conf := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if mutual {
		conf.ClientAuth = tls.RequireAndVerifyClientCert
		conf.ClientCAs = c.Pool(t)
	}
	return conf
}

// Pool holds c's CA certificate.
func (c Certs) Pool(t testing.TB) *x509.CertPool {
	t.Helper()
	data, err := os.ReadFile(c.CA)
	if err != nil {
		t.Fatal(err)
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(data) {
		t.Fatalf("%s holds no certificate", c.CA)
	}
	return p
}

func newTestKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func writeTestPEM(t testing.TB, dir, name, blockType string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
