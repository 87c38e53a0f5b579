// Package release makes the files a k8sconnect release publishes. Tests build
// them the same way, so what they install is what a user downloads.
package release

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// PulumiPlugin is the Pulumi resource plugin's executable, as the engine
// looks for it (pulumi-<kind>-<package name>).
const PulumiPlugin = "pulumi-resource-k8sconnect"

// PulumiPluginArchiveName is the name of the plugin's archive for one
// platform: the release asset name the engine downloads from a github://
// plugin URL, pulumi-resource-k8sconnect-v<version>-<os>-<arch>.tar.gz
// (version with or without its leading v).
func PulumiPluginArchiveName(version, goos, goarch string) string {
	return fmt.Sprintf("%s-v%s-%s-%s.tar.gz", PulumiPlugin, strings.TrimPrefix(version, "v"), goos, goarch)
}

// PulumiPluginArchiveFiles are the repository files an archive carries beside
// the plugin.
var PulumiPluginArchiveFiles = []string{"LICENSE", "README.md"}

// WritePulumiPluginArchive writes the plugin's archive to dst: a gzipped tar
// with the plugin executable (built for the archive's platform) and
// PulumiPluginArchiveFiles of the repository at repoRoot, all at the top
// level, which is what `pulumi plugin install resource k8sconnect <version>
// --file <archive>` and the engine's download unpack into the plugin cache.
// A Windows plugin (plugin's name ends in .exe) keeps its .exe, which the
// engine looks for there. Entries carry a fixed time, so the same inputs make
// the same archive.
func WritePulumiPluginArchive(dst, plugin, repoRoot string) error {
	name := PulumiPlugin
	if strings.HasSuffix(plugin, ".exe") {
		name += ".exe"
	}
	entries := []struct{ src, name string }{{plugin, name}}
	for _, f := range PulumiPluginArchiveFiles {
		entries = append(entries, struct{ src, name string }{filepath.Join(repoRoot, f), f})
	}
	return writeReplacing(dst, func(out io.Writer) error {
		gz := gzip.NewWriter(out)
		tw := tar.NewWriter(gz)
		for _, e := range entries {
			if err := addFile(tw, e.src, e.name); err != nil {
				return err
			}
		}
		return errors.Join(tw.Close(), gz.Close())
	})
}

// archiveTime is the modification time of every entry.
var archiveTime = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func addFile(tw *tar.Writer, src, name string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", src)
	}
	mode := int64(0o644)
	if st.Mode()&0o111 != 0 {
		mode = 0o755
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: st.Size(), ModTime: archiveTime, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := io.Copy(tw, f); err != nil {
		return fmt.Errorf("archiving %s: %w", src, err)
	}
	return nil
}
