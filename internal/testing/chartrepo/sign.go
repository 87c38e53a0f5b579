package chartrepo

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/provenance"
	"sigs.k8s.io/yaml"
)

// Signer is an OpenPGP key made for one test, never written anywhere but
// the test's temporary directory, that signs charts as `helm package
// --sign` does.
type Signer struct {
	// Keyring is a public keyring holding only this key, in GnuPG's binary
	// pubring.gpg format, as keyring takes it.
	Keyring string

	signatory *provenance.Signatory
}

// NewSigner makes a key for name (an Ed25519 key: made at once, unlike RSA)
// and writes its public keyring.
func NewSigner(t testing.TB, name string) *Signer {
	t.Helper()
	entity, err := openpgp.NewEntity(name, "throwaway key of a k8sconnect test", name+"@chartrepo.invalid",
		&packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})
	if err != nil {
		t.Fatalf("chartrepo: making a key: %v", err)
	}
	var public bytes.Buffer
	if err := entity.Serialize(&public); err != nil {
		t.Fatalf("chartrepo: writing the public key: %v", err)
	}
	keyring := filepath.Join(t.TempDir(), "pubring.gpg")
	if err := os.WriteFile(keyring, public.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return &Signer{Keyring: keyring, signatory: &provenance.Signatory{Entity: entity}}
}

// Sign returns the provenance file (.prov) of a chart archive, as helm
// package --sign writes it beside <name>-<version>.tgz: the chart's metadata
// and the archive's sha256 under that file name, clear-signed, with Helm's
// own signer.
func (s *Signer) Sign(t testing.TB, archive []byte) []byte {
	t.Helper()
	c, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		t.Fatalf("chartrepo: not a chart archive: %v", err)
	}
	metadata, err := yaml.Marshal(c.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	prov, err := s.signatory.ClearSign(archive, c.Name()+"-"+c.Metadata.Version+".tgz", metadata)
	if err != nil {
		t.Fatalf("chartrepo: signing %s %s: %v", c.Name(), c.Metadata.Version, err)
	}
	return []byte(prov)
}
