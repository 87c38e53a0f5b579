package chartrepo

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"sigs.k8s.io/yaml"
)

// Options configure a server.
type Options struct {
	// Username and Password, when either is set, are required (basic auth)
	// on every request.
	Username string
	Password string
	// TLS serves HTTPS with a certificate from a CA made for the server
	// (CAFile). A registry is served over TLS unless PlainHTTP is set.
	TLS bool
	// PlainHTTP serves a registry over plain HTTP, as a registry on the
	// local machine often is. Registry only.
	PlainHTTP bool
	// ClientCertificates demands a client certificate signed by that CA
	// (ClientCertFile, ClientKeyFile); it implies TLS. HTTP repository only.
	ClientCertificates bool
	// BlobsElsewhere makes a registry answer blob downloads with a redirect
	// to a storage server on another port, as registries redirect to object
	// storage. Registry only.
	BlobsElsewhere bool
}

// Repository is an HTTP chart repository on loopback.
type Repository struct {
	// URL is the repository's URL, without a trailing slash.
	URL string
	// CAFile is the PEM file of the CA that signed the server's certificate,
	// when it serves TLS.
	CAFile string
	// ClientCertFile and ClientKeyFile are a client certificate the server
	// accepts, when it demands one.
	ClientCertFile string
	ClientKeyFile  string

	requestLog
	mu      sync.Mutex
	entries map[string][]map[string]any
	files   map[string][]byte
	moved   map[string]string
}

// Entry says how the index lists an archive, when a test wants it wrong.
type Entry struct {
	// URL is what the index gives as the archive's URL; empty:
	// charts/<name>-<version>.tgz, relative, served here.
	URL string
	// Digest is what the index gives as the archive's sha256; empty: the
	// real one.
	Digest string
	// NoDigest leaves the digest out of the index.
	NoDigest bool
}

// NewRepository starts a repository, stopped when the test ends.
func NewRepository(t testing.TB, opts Options) *Repository {
	t.Helper()
	r := &Repository{
		requestLog: requestLog{username: opts.Username, password: opts.Password},
		entries:    map[string][]map[string]any{},
		files:      map[string][]byte{},
		moved:      map[string]string{},
	}
	server := httptest.NewUnstartedServer(r.wrap(http.HandlerFunc(r.serve)))
	if opts.TLS || opts.ClientCertificates {
		certs := newServerTLS(t, "chartrepo")
		r.CAFile = certs.caFile
		if opts.ClientCertificates {
			r.ClientCertFile, r.ClientKeyFile = certs.requireClientCertificates(t)
		}
		server.TLS = certs.config
		server.StartTLS()
	} else {
		server.Start()
	}
	t.Cleanup(server.Close)
	r.URL = server.URL
	return r
}

// Add packages the chart archive into the index, served here, with its
// digest.
func (r *Repository) Add(t testing.TB, archive []byte) {
	t.Helper()
	r.AddEntry(t, archive, Entry{})
}

// AddSigned is Add, with the archive's provenance file signed by s served
// beside it (charts/<name>-<version>.tgz.prov), as a repository of signed
// charts serves them.
func (r *Repository) AddSigned(t testing.TB, archive []byte, s *Signer) {
	t.Helper()
	r.AddEntry(t, archive, Entry{})
	r.Serve(archiveFile(t, archive)+".prov", s.Sign(t, archive))
}

// archiveFile is where the repository serves an archive.
func archiveFile(t testing.TB, archive []byte) string {
	t.Helper()
	c, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		t.Fatalf("chartrepo: not a chart archive: %v", err)
	}
	return fmt.Sprintf("charts/%s-%s.tgz", c.Name(), c.Metadata.Version)
}

// AddEntry lists archive in the index as entry says. The archive is served
// here at charts/<name>-<version>.tgz whatever URL the index gives.
func (r *Repository) AddEntry(t testing.TB, archive []byte, entry Entry) {
	t.Helper()
	c, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		t.Fatalf("chartrepo: not a chart archive: %v", err)
	}
	file := fmt.Sprintf("charts/%s-%s.tgz", c.Name(), c.Metadata.Version)
	sum := sha256.Sum256(archive)
	listed := map[string]any{
		"apiVersion": c.Metadata.APIVersion,
		"name":       c.Name(),
		"version":    c.Metadata.Version,
		"urls":       []string{file},
		"created":    time.Unix(0, 0).UTC().Format(time.RFC3339),
		"digest":     hex.EncodeToString(sum[:]),
	}
	if entry.URL != "" {
		listed["urls"] = []string{entry.URL}
	}
	if entry.Digest != "" {
		listed["digest"] = entry.Digest
	}
	if entry.NoDigest {
		delete(listed, "digest")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := r.entries[c.Name()][:0]
	for _, e := range r.entries[c.Name()] {
		if e["version"] != c.Metadata.Version {
			kept = append(kept, e)
		}
	}
	r.entries[c.Name()] = append(kept, listed)
	r.files["/"+file] = archive
}

// Serve serves data at urlPath, outside the index.
func (r *Repository) Serve(urlPath string, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.files[path.Clean("/"+urlPath)] = data
}

// Redirect answers requests for urlPath with a 302 to target.
func (r *Repository) Redirect(urlPath, target string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.moved[path.Clean("/"+urlPath)] = target
}

func (r *Repository) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		http.Error(w, "read-only", http.StatusMethodNotAllowed)
		return
	}
	p := path.Clean(req.URL.Path)
	r.mu.Lock()
	target, moved := r.moved[p]
	data, found := r.files[p]
	var index []byte
	if p == "/index.yaml" {
		var err error
		index, err = yaml.Marshal(map[string]any{"apiVersion": "v1", "entries": r.entries, "generated": time.Unix(0, 0).UTC()})
		if err != nil {
			r.mu.Unlock()
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	r.mu.Unlock()
	switch {
	case moved:
		http.Redirect(w, req, target, http.StatusFound)
	case index != nil:
		if notModified(w, req, index) {
			return
		}
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(index)
	case found:
		if notModified(w, req, data) {
			return
		}
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(data)
	default:
		http.NotFound(w, req)
	}
}

// notModified gives data an ETag, as most static hosts do, so that clients can
// revalidate their copy, and answers 304 Not Modified when the request
// names it.
func notModified(w http.ResponseWriter, req *http.Request, data []byte) bool {
	sum := sha256.Sum256(data)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	if req.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return true
	}
	return false
}
