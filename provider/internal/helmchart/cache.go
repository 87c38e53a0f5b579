package helmchart

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// CacheDirEnv names the environment variable that moves the chart cache; tests
// point it at a temporary directory.
//
// Without it the cache is os.UserCacheDir()/k8sconnect/helm
// (~/.cache/k8sconnect/helm on Linux, ~/Library/Caches/k8sconnect/helm on
// macOS): Terraform plans and applies in separate processes, often minutes
// apart, and both load the chart, so the cache must outlive the process. It
// is our own directory, not Helm's ~/.cache/helm: what Helm keeps there (the
// repositories.yaml index cache) answers to the user's helm CLI
// configuration, which a Terraform configuration must not silently depend on.
const CacheDirEnv = "K8SCONNECT_HELM_CACHE_DIR"

// archiveCache keeps chart archives downloaded from repositories and
// registries. Layout:
//
//	sha256/<hex>.tgz    an archive whose digest the index or the OCI manifest
//	                    gave, named by that digest and checked again on
//	                    every read, so a different digest never finds it and
//	                    a corrupted file is fetched anew
//	unverified/<key>.tgz an archive the index gave no digest for, keyed by the
//	                    sha256 of its URL, name and version: another version
//	                    or location misses, but a repository that republishes
//	                    the same version at the same URL is not noticed (as
//	                    with helm's own cache)
//	indexes/<key>       the last index.yaml of a repository, after a line
//	                    holding the ETag or Last-Modified it came with, keyed
//	                    by the sha256 of its URL and the username; it is used
//	                    only when the repository answers 304 Not Modified to
//	                    them
//	urls/<key>          the same for the archive at a chart URL (urlchart.go),
//	                    kept with or without validators
//	provenance/<key>    the same for the provenance file (.prov) of an
//	                    archive from a repository or chart URL, kept when
//	                    verify is set; it is checked, never trusted, on
//	                    every load (provenance.go)
//
// Entries are written to a temporary file and renamed, so processes sharing
// the cache never read half a file. Entries unused for 90 days are removed
// (cache_prune.go). Failing to write the cache does not fail
// a load: the chart is in memory by then.
type archiveCache struct {
	dir string
}

func openCache() (*archiveCache, error) {
	if dir := os.Getenv(CacheDirEnv); dir != "" {
		return &archiveCache{dir: dir}, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return nil, fmt.Errorf("finding a directory to cache charts in (set %s): %w", CacheDirEnv, err)
	}
	return &archiveCache{dir: filepath.Join(base, "k8sconnect", "helm")}, nil
}

// normaliseDigest takes a sha256 digest as an index (hex) or a registry
// (sha256:hex) writes it, and returns the lowercase hex.
func normaliseDigest(digest string) (string, error) {
	hexDigest := strings.ToLower(strings.TrimPrefix(digest, "sha256:"))
	if raw, err := hex.DecodeString(hexDigest); err != nil || len(raw) != sha256.Size {
		return "", fmt.Errorf("%q is not a sha256 digest", digest)
	}
	return hexDigest, nil
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// verified returns the archive with that sha256 (hex), if the cache has it
// intact.
func (c *archiveCache) verified(hexDigest string) ([]byte, bool) {
	path := filepath.Join(c.dir, "sha256", hexDigest+".tgz")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	if sha256Hex(data) != hexDigest {
		_ = os.Remove(path)
		return nil, false
	}
	markUsed(path)
	return data, true
}

func (c *archiveCache) storeVerified(hexDigest string, data []byte) {
	c.write(filepath.Join(c.dir, "sha256", hexDigest+".tgz"), data)
}

// unverifiedKey names an archive by what identifies it when no digest does.
func unverifiedKey(chartURL, name, version string) string {
	return sha256Hex([]byte(chartURL + "\n" + name + "\n" + version))
}

func (c *archiveCache) unverified(key string) ([]byte, bool) {
	path := filepath.Join(c.dir, "unverified", key+".tgz")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	markUsed(path)
	return data, true
}

func (c *archiveCache) storeUnverified(key string, data []byte) {
	c.write(filepath.Join(c.dir, "unverified", key+".tgz"), data)
}

func (c *archiveCache) write(path string, data []byte) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".partial-*")
	if err != nil {
		return
	}
	_, writeErr := tmp.Write(data)
	closeErr := tmp.Close()
	if writeErr != nil || closeErr != nil {
		_ = os.Remove(tmp.Name())
		return
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return
	}
	c.maybePrune(time.Now())
}

// validators are what a server said identifies the copy of a file it sent
// (RFC 9110 section 8.8), for asking next time whether it changed.
type validators struct {
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"lastModified,omitempty"`
	notModified  bool
}

func (v validators) any() bool { return v.ETag != "" || v.LastModified != "" }

// The areas of the cache whose entries are revalidated with the server.
const (
	indexArea = "indexes"
	urlArea   = "urls"
	provArea  = "provenance"
)

func indexKey(indexURL, username string) string {
	return sha256Hex([]byte(indexURL + "\n" + username))
}

// revalidated returns the cached copy of a file of area and its validators,
// or no validators when there is no whole copy.
func (c *archiveCache) revalidated(area, key string) (validators, []byte) {
	path := filepath.Join(c.dir, area, key)
	raw, err := os.ReadFile(path)
	if err != nil {
		return validators{}, nil
	}
	markUsed(path)
	header, data, found := bytes.Cut(raw, []byte("\n"))
	var v validators
	if !found || json.Unmarshal(header, &v) != nil {
		return validators{}, nil
	}
	return v, data
}

// storeRevalidated keeps the validators and the file they describe in one
// file, its first line the validators, so that processes sharing the cache
// never pair one copy's validators with another copy.
func (c *archiveCache) storeRevalidated(area, key string, v validators, data []byte) {
	header, err := json.Marshal(v)
	if err != nil {
		return
	}
	c.write(filepath.Join(c.dir, area, key), append(append(header, '\n'), data...))
}
