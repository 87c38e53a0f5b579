package release

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// TerraformProvider is the provider's executable name, as Terraform and
// OpenTofu look for it in a provider package (with _v<version> after it).
const TerraformProvider = "terraform-provider-k8sconnect"

// TerraformZipName is the provider package of one platform, named as the
// registries and a packed filesystem mirror want it:
// terraform-provider-k8sconnect_<version>_<os>_<arch>.zip.
func TerraformZipName(version string, p Platform) string {
	return fmt.Sprintf("%s_%s_%s_%s.zip", TerraformProvider, version, p.OS, p.Arch)
}

// TerraformSumsName is the checksum file of a release's provider packages.
func TerraformSumsName(version string) string {
	return fmt.Sprintf("%s_%s_SHA256SUMS", TerraformProvider, version)
}

// TerraformManifestName is the release's copy of terraform-registry-manifest.json.
func TerraformManifestName(version string) string {
	return fmt.Sprintf("%s_%s_manifest.json", TerraformProvider, version)
}

// PulumiSumsName is the checksum file of a release's plugin archives.
func PulumiSumsName(version string) string {
	return fmt.Sprintf("%s-v%s-SHA256SUMS", PulumiPlugin, strings.TrimPrefix(version, "v"))
}

// WriteTerraformZip writes the provider package dst: a zip holding the
// executable provider (terraform-provider-k8sconnect_v<version>, .exe on
// Windows) at its top level, executable for the owner and everyone, as
// Terraform unpacks it. The entry's time is fixed, so the same binary makes
// the same zip.
func WriteTerraformZip(dst, provider string) error {
	in, err := os.Open(provider)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeReplacing(dst, func(out io.Writer) error {
		zw := zip.NewWriter(out)
		hdr := &zip.FileHeader{Name: filepath.Base(provider), Method: zip.Deflate, Modified: archiveTime}
		hdr.SetMode(0o755)
		w, err := zw.CreateHeader(hdr)
		if err == nil {
			_, err = io.Copy(w, in)
		}
		return errors.Join(err, zw.Close())
	})
}

// writeReplacing writes dst through a temporary file beside it, renamed over
// dst only when write and every close succeeded: a failed or interrupted
// build never leaves a truncated archive under a release's file name.
func writeReplacing(dst string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := errors.Join(write(tmp), tmp.Close(), os.Chmod(tmp.Name(), 0o644)); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// WriteSHA256Sums writes dst in the format of sha256sum (and of the
// registries' SHA256SUMS): "<hex>  <file name>" per file, sorted by name.
func WriteSHA256Sums(dst string, files []string) error {
	lines := make([]string, 0, len(files))
	for _, f := range files {
		sum, err := FileSHA256(f)
		if err != nil {
			return err
		}
		lines = append(lines, sum+"  "+filepath.Base(f)+"\n")
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i][66:] < lines[j][66:] })
	return os.WriteFile(dst, []byte(strings.Join(lines, "")), 0o644)
}

// FileSHA256 is the hex SHA-256 of a file's content.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
