package helmchart

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"helm.sh/helm/v4/pkg/provenance"
)

// Provenance, as `helm install --verify`: a signed chart comes with a
// provenance file (.prov), a clear-signed text holding the sha256 of the
// archive under the file name `helm package --sign` gave it. Verify checks
// the archive against it, and the signature against a public keyring, before
// the chart is loaded. The checking is Helm's own (pkg/provenance); this file
// finds the keyring and says what went wrong in words that say what to do.
//
// Nothing here is cached: every load with Verify checks the archive it uses,
// downloaded or kept, against the provenance file and the keyring as they are
// then, so a key removed from the keyring takes effect at the next plan and
// a kept archive never stands for a verified one.

// provMediaType is the media type of the layer helm push gives a chart's
// provenance file in an OCI registry (helm.sh/helm/v4/pkg/registry's
// ProvLayerMediaType, not imported for the reason oci.go gives).
const provMediaType = "application/vnd.cncf.helm.chart.provenance.v1.prov"

// maxProvBytes bounds a provenance file: a few lines of Chart.yaml and a
// signature.
const maxProvBytes = 1 << 20

// noProvHint is what to do about a chart that has no provenance file.
const noProvHint = "sign the chart (helm package --sign writes the .prov beside the archive, and helm push sends it to a registry), or set verify = false to use it unverified"

// keyring is the public keyring a Source's chart is verified with.
type keyring struct {
	path      string
	signatory *provenance.Signatory
}

// defaultKeyring is where helm looks when --keyring is not given: GnuPG's
// home ($GNUPGHOME, else ~/.gnupg), its pubring.gpg, or pubring.kbx when
// only that exists (GnuPG 2.1 and later write a keybox).
func defaultKeyring() (string, error) {
	home := os.Getenv("GNUPGHOME")
	if home == "" {
		user, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding the default keyring ~/.gnupg/pubring.gpg: %w; set keyring", err)
		}
		home = filepath.Join(user, ".gnupg")
	}
	legacy := filepath.Join(home, "pubring.gpg")
	if _, err := os.Stat(legacy); errors.Is(err, fs.ErrNotExist) {
		keybox := filepath.Join(home, "pubring.kbx")
		if _, err := os.Stat(keybox); err == nil {
			return keybox, nil
		}
	}
	return legacy, nil
}

// openKeyring reads the keyring at path (empty: the default), a leading ~
// being the user's home, as for kubeconfig_file.
func openKeyring(path string) (*keyring, error) {
	var err error
	which := "the keyring"
	if path == "" {
		which = "the default keyring"
		if path, err = defaultKeyring(); err != nil {
			return nil, err
		}
	} else if path == "~" || strings.HasPrefix(path, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("keyring %q: cannot expand ~: %w", path, err)
		}
		path = filepath.Join(home, path[1:])
	}
	signatory, err := provenance.NewFromKeyring(path, "")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("verify = true, and %s %s does not exist: set keyring to a public keyring that holds the chart signer's key "+
			"(gpg --export KEY-ID > FILE writes one; an armored export or a GnuPG pubring.kbx is read too)", which, path)
	case errors.Is(err, fs.ErrPermission):
		return nil, fmt.Errorf("verify = true, and %s %s cannot be read (%w): make it readable to the user running the plan, or set keyring to another", which, path, err)
	case err != nil:
		return nil, fmt.Errorf("verify = true, and %s %s is not an OpenPGP public keyring (%w): export one with gpg --export KEY-ID > FILE", which, path, err)
	case len(signatory.KeyRing) == 0:
		return nil, fmt.Errorf("verify = true, and %s %s holds no public key: add the chart signer's key (gpg --export KEY-ID > FILE)", which, path)
	}
	return &keyring{path: path, signatory: signatory}, nil
}

// verify checks archive against prov and the keyring. names are the file
// names the archive may have been signed under, the first the one helm
// would check (the file's or the URL's last element); a later one (the
// chart-1.2.3.tgz helm package gives the file it signs) is used when the
// provenance file lists that and not the first, as for a chart URL that
// does not end in the package's name. The signed sha256 binds the archive
// whichever name it was listed under. archiveAt names the archive and
// provAt the provenance file ("the provenance file URL"), for the error.
func (k *keyring) verify(archive, prov []byte, names []string, archiveAt, provAt string) error {
	verification, err := k.signatory.Verify(archive, prov, signedName(prov, names))
	if err == nil {
		return nil
	}
	if verification != nil && verification.SignedBy != nil {
		// The signature held; the archive is not the one it signs.
		return fmt.Errorf("chart %s does not match %s (%w): the archive was altered, or the .prov belongs to another archive", archiveAt, provAt, err)
	}
	signer := signerOf(prov)
	switch {
	case signer == "":
		return fmt.Errorf("%s is not a clear-signed Helm provenance file (%w): %s", provAt, err, noProvHint)
	case errors.Is(err, pgperrors.ErrUnknownIssuer):
		return fmt.Errorf("chart %s is signed by key %s, which is not in the keyring %s: if you trust that key, add it to the keyring "+
			"(gpg --import, then gpg --export KEY-ID > %s), or set keyring to one that holds it", archiveAt, signer, k.path, k.path)
	}
	return fmt.Errorf("the signature in %s (key %s) does not verify with the keyring %s (%w): the provenance file was altered, "+
		"or the key has expired or been revoked", provAt, signer, k.path, err)
}

// signedName is the first of names that the provenance file lists, or the
// first name when it lists none of them (or cannot be read; Verify then
// says why).
func signedName(prov []byte, names []string) string {
	if block, _ := clearsign.Decode(prov); block != nil {
		var sums provenance.SumCollection
		if provenance.ParseMessageBlock(block.Plaintext, nil, &sums) == nil {
			for _, name := range names {
				if _, ok := sums.Files[name]; ok {
					return name
				}
			}
		}
	}
	return names[0]
}

// packageName is the file name helm package gives a chart's archive, and
// so the name its provenance file lists.
func packageName(name, version string) string {
	return name + "-" + version + ".tgz"
}

// signerOf is the ID of the key that signed a provenance file, as gpg shows
// it, or "" when prov is not clear-signed.
func signerOf(prov []byte) string {
	block, _ := clearsign.Decode(prov)
	if block == nil || block.ArmoredSignature == nil {
		return ""
	}
	p, err := packet.NewReader(block.ArmoredSignature.Body).Next()
	if err != nil {
		return ""
	}
	sig, ok := p.(*packet.Signature)
	switch {
	case !ok:
		return ""
	case len(sig.IssuerFingerprint) > 0:
		return fmt.Sprintf("%X", sig.IssuerFingerprint)
	case sig.IssuerKeyId != nil:
		return fmt.Sprintf("%016X", *sig.IssuerKeyId)
	}
	return "unknown"
}
