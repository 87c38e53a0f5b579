package chartrepo

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// The media types Helm gives a chart in a registry.
const (
	chartConfigMediaType = "application/vnd.cncf.helm.config.v1+json"
	chartLayerMediaType  = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	provLayerMediaType   = "application/vnd.cncf.helm.chart.provenance.v1.prov"
)

// Registry is an OCI registry on loopback, over TLS unless asked otherwise,
// keeping what is pushed in memory.
type Registry struct {
	// Host is host:port, as an oci:// reference names the registry.
	Host string
	// CAFile is the PEM file of the CA that signed the server's certificate;
	// empty over plain HTTP.
	CAFile string

	requestLog
	storage   requestLog
	client    *http.Client
	plainHTTP bool
}

// NewRegistry starts a registry, stopped when the test ends. Username,
// Password, BlobsElsewhere and PlainHTTP of opts apply; it serves TLS
// unless PlainHTTP is set.
func NewRegistry(t testing.TB, opts Options) *Registry {
	t.Helper()
	r := &Registry{requestLog: requestLog{username: opts.Username, password: opts.Password}, plainHTTP: opts.PlainHTTP}
	handler := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	if opts.PlainHTTP {
		if opts.BlobsElsewhere {
			t.Fatal("chartrepo: BlobsElsewhere is served over TLS only")
		}
		server := httptest.NewServer(r.wrap(handler))
		t.Cleanup(server.Close)
		r.Host = strings.TrimPrefix(server.URL, "http://")
		r.client = &http.Client{}
		return r
	}
	certs := newServerTLS(t, "chartrepo-registry")
	if opts.BlobsElsewhere {
		handler = r.redirectBlobs(t, handler, certs)
	}
	server := httptest.NewUnstartedServer(r.wrap(handler))
	server.TLS = certs.config
	server.StartTLS()
	t.Cleanup(server.Close)
	r.Host = strings.TrimPrefix(server.URL, "https://")
	r.CAFile = certs.caFile
	pool := x509.NewCertPool()
	pool.AddCert(certs.ca.Cert)
	r.client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	return r
}

// redirectBlobs starts a second server, on another port and without auth
// (as a presigned storage URL), that serves the registry's blobs, and
// answers blob downloads with a redirect there.
func (r *Registry) redirectBlobs(t testing.TB, registry http.Handler, certs *serverTLS) http.Handler {
	storage := httptest.NewUnstartedServer(r.storage.wrap(registry))
	storage.TLS = certs.config
	storage.StartTLS()
	t.Cleanup(storage.Close)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/sha256:") {
			http.Redirect(w, req, storage.URL+req.URL.RequestURI(), http.StatusTemporaryRedirect)
			return
		}
		registry.ServeHTTP(w, req)
	})
}

// StorageRequests are the requests the blob storage server got, when
// BlobsElsewhere is set.
func (r *Registry) StorageRequests() []Request {
	return r.storage.Requests()
}

// Ref is the oci:// reference of a chart pushed under repository: its path
// in the registry with the chart name last.
func (r *Registry) Ref(repository, name string) string {
	return "oci://" + r.Host + "/" + strings.Trim(repository, "/") + "/" + name
}

// Push stores the chart archive as helm push would: at
// <repository>/<name>:<version with + as _>, with the chart's metadata as the
// config and the archive as the one layer. It returns the manifest's digest
// (sha256:...).
func (r *Registry) Push(t testing.TB, repository string, archive []byte) string {
	t.Helper()
	return r.PushWithProvenance(t, repository, archive, nil)
}

// PushWithProvenance is Push with prov, the chart's provenance file, as a
// second layer, as helm push sends the .prov it finds beside the archive.
// prov need not be the archive's own (Signer.Sign), for a test of one that
// does not match.
func (r *Registry) PushWithProvenance(t testing.TB, repository string, archive, prov []byte) string {
	t.Helper()
	c, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		t.Fatalf("chartrepo: not a chart archive: %v", err)
	}
	config, err := json.Marshal(c.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store := memory.New()
	push := func(mediaType string, data []byte) ocispec.Descriptor {
		desc := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(data), Size: int64(len(data))}
		if err := store.Push(ctx, desc, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		return desc
	}
	configDesc := push(chartConfigMediaType, config)
	layers := []ocispec.Descriptor{push(chartLayerMediaType, archive)}
	if prov != nil {
		layers = append(layers, push(provLayerMediaType, prov))
	}
	manifest, err := oras.PackManifest(ctx, store, oras.PackManifestVersion1_0, "", oras.PackManifestOptions{
		ConfigDescriptor: &configDesc,
		Layers:           layers,
	})
	if err != nil {
		t.Fatal(err)
	}
	tag := strings.ReplaceAll(c.Metadata.Version, "+", "_")
	if err := store.Tag(ctx, manifest, tag); err != nil {
		t.Fatal(err)
	}
	target, err := remote.NewRepository(r.Host + "/" + strings.Trim(repository, "/") + "/" + c.Name())
	if err != nil {
		t.Fatal(err)
	}
	target.PlainHTTP = r.plainHTTP
	r.mu.Lock()
	credential := auth.Credential{Username: r.username, Password: r.password}
	r.mu.Unlock()
	target.Client = &auth.Client{Client: r.client, Credential: auth.StaticCredential(r.Host, credential)}
	if _, err := oras.Copy(ctx, store, tag, target, tag, oras.DefaultCopyOptions); err != nil {
		t.Fatalf("chartrepo: pushing %s %s: %v", c.Name(), c.Metadata.Version, err)
	}
	return manifest.Digest.String()
}
