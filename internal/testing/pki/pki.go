// Package pki is the one certificate authority of the test infrastructure: the
// embedded control plane's CAs, serving and client certificates, and the fault
// proxy's serving certificate are all made here. ECDSA P-256 keys; a CA is
// trusted an hour back for clock skew.
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// KeyPair is a certificate and its private key, parsed and PEM-encoded.
type KeyPair struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	CertPEM []byte
	KeyPEM  []byte
}

// Certificates live long enough for a dev cluster left running for months;
// the clock of the machine is trusted an hour back for skew.
const (
	caValidity   = 10 * 365 * 24 * time.Hour
	leafValidity = 2 * 365 * 24 * time.Hour
)

// NewKey makes a private key.
func NewKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

func serialNumber() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

// NewCA makes a self-signed certificate authority.
func NewCA(commonName string) (*KeyPair, error) {
	return newPair(&x509.Certificate{
		Subject:        pkix.Name{CommonName: commonName, Organization: []string{"k8sconnect"}},
		KeyUsage:       x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		IsCA:           true,
		MaxPathLenZero: true,
	}, caValidity, nil)
}

// Issue signs a leaf certificate with the CA.
func (ca *KeyPair) Issue(subject pkix.Name, usage x509.ExtKeyUsage, dnsNames []string, ips []net.IP) (*KeyPair, error) {
	return newPair(&x509.Certificate{
		Subject:     subject,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{usage},
		DNSNames:    dnsNames,
		IPAddresses: ips,
	}, leafValidity, ca)
}

// newPair makes a key and a certificate for it from tmpl, valid from an hour
// ago (clock skew) for validity, signed by parent, or by the new key itself
// when parent is nil (a CA).
func newPair(tmpl *x509.Certificate, validity time.Duration, parent *KeyPair) (*KeyPair, error) {
	key, err := NewKey()
	if err != nil {
		return nil, err
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl.SerialNumber, tmpl.NotBefore, tmpl.NotAfter = serial, now.Add(-time.Hour), now.Add(validity)
	tmpl.BasicConstraintsValid = true
	if parent == nil {
		return sign(tmpl, tmpl, key, key)
	}
	return sign(tmpl, parent.Cert, key, parent.Key)
}

func sign(tmpl, parent *x509.Certificate, key *ecdsa.PrivateKey, parentKey crypto.Signer) (*KeyPair, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, fmt.Errorf("signing certificate for %s: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyPEM, err := EncodeKey(key)
	if err != nil {
		return nil, err
	}
	return &KeyPair{
		Cert:    cert,
		Key:     key,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  keyPEM,
	}, nil
}

// EncodeKey is key in PEM.
func EncodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// EncodePublicKey is key's public half in PEM.
func EncodePublicKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// TLS is the pair as a tls.Certificate, for a server to present.
func (kp *KeyPair) TLS() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key, Leaf: kp.Cert}
}

// Loopback is a serving certificate for 127.0.0.1, ::1 and localhost.
func (ca *KeyPair) Loopback(commonName string) (*KeyPair, error) {
	return ca.Issue(pkix.Name{CommonName: commonName}, x509.ExtKeyUsageServerAuth, []string{"localhost"},
		[]net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback})
}
