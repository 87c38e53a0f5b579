package chartrepo

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"os"
	"path/filepath"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/pki"
)

// serverTLS is a CA made for one server, its serving certificate for
// loopback, and the CA written to a PEM file as a client is given it.
type serverTLS struct {
	ca     *pki.KeyPair
	config *tls.Config
	caFile string
}

func newServerTLS(t testing.TB, name string) *serverTLS {
	t.Helper()
	ca, err := pki.NewCA(name + " test CA")
	if err != nil {
		t.Fatal(err)
	}
	serving, err := ca.Loopback(name)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return &serverTLS{
		ca:     ca,
		config: &tls.Config{Certificates: []tls.Certificate{serving.TLS()}, MinVersion: tls.VersionTLS12},
		caFile: caFile,
	}
}

// requireClientCertificates makes the server demand a client certificate
// signed by its CA, and returns the PEM files of one.
func (s *serverTLS) requireClientCertificates(t testing.TB) (certFile, keyFile string) {
	t.Helper()
	client, err := s.ca.Issue(pkix.Name{CommonName: "chartrepo client"}, x509.ExtKeyUsageClientAuth, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(s.ca.Cert)
	s.config.ClientCAs = pool
	s.config.ClientAuth = tls.RequireAndVerifyClientCert
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
	if err := os.WriteFile(certFile, client.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, client.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
