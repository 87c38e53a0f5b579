package helmchart

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

// Limits on what a repository may send: the largest public indexes are tens
// of megabytes; a chart archive over 100 MiB is refused by Helm's loader
// anyway.
const (
	maxIndexBytes   = 512 << 20
	maxArchiveBytes = 100 << 20
	chartsShown     = 10
)

// httpRepository is a chart repository served over HTTP(S): an index.yaml
// and the archives it lists.
type httpRepository struct {
	url      *url.URL // without userinfo
	client   *http.Client
	username string
	password string
	// passCredentials sends them to every host, not only the repository's.
	passCredentials bool
	// args name the arguments behind the credentials, for a 401 or 403.
	args credentialArgs
}

func openHTTPRepository(src Source) (*httpRepository, error) {
	u, err := url.Parse(src.Repository)
	if err != nil && hideUserinfo(src.Repository) != src.Repository {
		return nil, fmt.Errorf("repository %q does not parse as a URL with the credentials in it: give them as %s",
			hideUserinfo(src.Repository), src.credentialArgs().toSet)
	}
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("repository %q is not an http(s):// chart repository URL nor an oci:// registry", hideUserinfo(src.Repository))
	}
	u.User = nil
	client, err := newHTTPClient(src, u, src.PassCredentials)
	if err != nil {
		return nil, err
	}
	return &httpRepository{url: u, client: client, username: src.Username, password: src.Password, passCredentials: src.PassCredentials,
		args: src.credentialArgs()}, nil
}

// loadFromRepository resolves src.Version against the repository's index,
// and loads that version's archive from the cache or the repository.
func loadFromRepository(ctx context.Context, src Source) (*Chart, error) {
	r, err := openHTTPRepository(src)
	if err != nil {
		return nil, err
	}
	cache, err := openCache()
	if err != nil {
		return nil, err
	}
	index, err := r.index(ctx, cache)
	if err != nil {
		return nil, err
	}
	entry, err := r.resolve(index, src.Chart, src.Version, src.Devel)
	if err != nil {
		return nil, err
	}
	archive, archiveURL, err := r.archive(ctx, cache, entry)
	if err != nil {
		return nil, err
	}
	if src.keyring != nil {
		names := []string{path.Base(archiveURL.Path), packageName(entry.Name, entry.Version)}
		if err := r.verify(ctx, cache, src.keyring, archive, archiveURL, names, true); err != nil {
			return nil, err
		}
	}
	c, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("loading chart %s %s from %s: %w", entry.Name, entry.Version, displayURL(r.url), err)
	}
	if err := sameChart(c, entry.Name, entry.Version); err != nil {
		return nil, fmt.Errorf("%s: %w", displayURL(r.url), err)
	}
	return &Chart{Chart: c, Version: entry.Version}, nil
}

// sameChart checks that the archive is the chart and version the index (or a
// tag) promised, so the version recorded is the version rendered.
func sameChart(c *chart.Chart, name, version string) error {
	if c.Metadata.Name != name || c.Metadata.Version != version {
		return fmt.Errorf("the archive listed as %s %s holds chart %s %s", name, version, c.Metadata.Name, c.Metadata.Version)
	}
	return nil
}

// get fetches u, sending the credentials only if u is on the repository's
// own origin, and reads at most limit bytes. notFound says what a 404 means.
func (r *httpRepository) get(ctx context.Context, u *url.URL, limit int64, notFound string) ([]byte, error) {
	data, _, err := r.getConditional(ctx, u, limit, notFound, validators{})
	return data, err
}

// getConditional is get with the validators of a copy the caller holds: it
// returns notModified, and no data, when the server says that copy is
// current, and the new validators with new data.
func (r *httpRepository) getConditional(ctx context.Context, u *url.URL, limit int64, notFound string, held validators) (data []byte, fresh validators, err error) {
	shown := displayURL(u)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), http.NoBody)
	if err != nil {
		return nil, fresh, fmt.Errorf("requesting %s: %w", shown, err)
	}
	req.Header.Set("User-Agent", "k8sconnect (Helm chart loader)")
	if held.ETag != "" {
		req.Header.Set("If-None-Match", held.ETag)
	}
	if held.LastModified != "" {
		req.Header.Set("If-Modified-Since", held.LastModified)
	}
	sendCredentials := (r.username != "" || r.password != "") && (r.passCredentials || sameOrigin(u, r.url))
	if sendCredentials {
		req.SetBasicAuth(r.username, r.password)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fresh, transportError(ctx, shown, err, r.args)
	}
	defer func() { _ = resp.Body.Close() }()
	switch {
	case resp.StatusCode == http.StatusNotModified && held.any():
		return nil, validators{notModified: true}, nil
	case resp.StatusCode != http.StatusOK:
		// A redirect elsewhere dropped the credentials; a 401 there is not
		// about them.
		sent := sendCredentials && (r.passCredentials || sameOrigin(resp.Request.URL, r.url))
		return nil, fresh, statusError(shown, resp.StatusCode, sent, notFound, r.args)
	}
	data, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fresh, transportError(ctx, shown, err, r.args)
	}
	if int64(len(data)) > limit {
		return nil, fresh, fmt.Errorf("%s is larger than %d MiB; refusing it", shown, limit>>20)
	}
	fresh = validators{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}
	return data, fresh, nil
}

// index fetches and parses index.yaml. It is asked for on every load: it is
// what turns a constraint into a version and says the archive's digest, and
// a stale copy would hide a new release. A repository that gives an ETag or
// a Last-Modified date answers "not modified" to the next load instead of
// sending the whole index again (the cache keeps the last copy).
func (r *httpRepository) index(ctx context.Context, cache *archiveCache) (*repositoryIndex, error) {
	indexURL := r.url.JoinPath("index.yaml")
	indexURL.RawQuery = r.url.RawQuery
	key := indexKey(displayURL(indexURL), r.username)
	held, heldData := cache.revalidated(indexArea, key)
	data, fresh, err := r.getConditional(ctx, indexURL, maxIndexBytes, "no index.yaml there; is the repository URL right?", held)
	if err != nil {
		return nil, err
	}
	if fresh.notModified {
		data = heldData
	} else if fresh.any() {
		cache.storeRevalidated(indexArea, key, fresh, data)
	}
	index, err := parseIndex(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not a Helm chart repository index: %w", displayURL(indexURL), err)
	}
	return index, nil
}

// resolve finds the index entry for name at version (exact or constraint).
func (r *httpRepository) resolve(index *repositoryIndex, name, version string, devel bool) (*indexEntry, error) {
	entries, ok := index.Entries[name]
	if !ok || len(entries) == 0 {
		return nil, chartNotInIndex(name, displayURL(r.url), index)
	}
	available := make([]string, len(entries))
	for i, e := range entries {
		available[i] = e.Version
	}
	picked, err := pickVersion(fmt.Sprintf("chart %q in %s", name, displayURL(r.url)), available, version, devel)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Version == picked {
			return e, nil
		}
	}
	return nil, fmt.Errorf("version %s of chart %q vanished from the index", picked, name)
}

func chartNotInIndex(name, where string, index *repositoryIndex) error {
	names := make([]string, 0, len(index.Entries))
	for n := range index.Entries {
		names = append(names, n)
	}
	sort.Strings(names)
	switch {
	case len(names) == 0:
		return fmt.Errorf("chart %q is not in %s: the repository's index lists no charts", name, where)
	case len(names) > chartsShown:
		return fmt.Errorf("chart %q is not in %s, which has %d charts (%s, …)", name, where, len(names), strings.Join(names[:chartsShown], ", "))
	}
	return fmt.Errorf("chart %q is not in %s, which has %s", name, where, strings.Join(names, ", "))
}

// archive returns the entry's chart archive, and its URL, from the cache,
// or downloads it, checks it against the index's digest, and caches it.
func (r *httpRepository) archive(ctx context.Context, cache *archiveCache, entry *indexEntry) ([]byte, *url.URL, error) {
	what := fmt.Sprintf("chart %s %s", entry.Name, entry.Version)
	if len(entry.URLs) == 0 {
		return nil, nil, fmt.Errorf("the index of %s gives no URL for %s", displayURL(r.url), what)
	}
	archiveURL, err := chartURL(r.url, entry.URLs[0])
	if err != nil {
		return nil, nil, fmt.Errorf("the index of %s gives a bad URL for %s: %w", displayURL(r.url), what, err)
	}

	var digest, key string
	if entry.Digest != "" {
		if digest, err = normaliseDigest(entry.Digest); err != nil {
			return nil, nil, fmt.Errorf("the index of %s gives %s a bad digest: %w", displayURL(r.url), what, err)
		}
		if data, ok := cache.verified(digest); ok {
			return data, archiveURL, nil
		}
	} else {
		key = unverifiedKey(displayURL(archiveURL), entry.Name, entry.Version)
		if data, ok := cache.unverified(key); ok {
			return data, archiveURL, nil
		}
	}

	data, err := r.get(ctx, archiveURL, maxArchiveBytes, "the index lists it but it is not there")
	if err != nil {
		return nil, nil, fmt.Errorf("downloading %s: %w", what, err)
	}
	if digest == "" {
		cache.storeUnverified(key, data)
		return data, archiveURL, nil
	}
	if got := sha256Hex(data); got != digest {
		return nil, nil, fmt.Errorf("%s from %s has sha256 %s but the repository's index says %s: the download was altered or the repository changed it without updating its index; not using it",
			what, displayURL(archiveURL), got, digest)
	}
	cache.storeVerified(digest, data)
	return data, archiveURL, nil
}

// verify checks archive, from archiveURL, against its provenance file and
// the keyring (see provenance.go). The provenance file is archiveURL with
// .prov appended to its path, as helm looks for it, fetched with the
// archive's rules for credentials; a copy is kept with its validators, so
// that asking again costs a 304, and so that a load that does not ask
// about the archive (ask false: a chart URL's apply) checks it against the
// provenance file that came with it.
func (r *httpRepository) verify(ctx context.Context, cache *archiveCache, k *keyring, archive []byte, archiveURL *url.URL, names []string, ask bool) error {
	provURL := *archiveURL
	provURL.Path += ".prov"
	if provURL.RawPath != "" {
		provURL.RawPath += ".prov"
	}
	shown := displayURL(&provURL)
	key := indexKey(shown, r.username)
	held, prov := cache.revalidated(provArea, key)
	if prov == nil || ask {
		if prov == nil {
			held = validators{}
		}
		data, fresh, err := r.getConditional(ctx, &provURL, maxProvBytes, "not found, and verify = true needs it: "+noProvHint, held)
		if err != nil {
			return fmt.Errorf("fetching the provenance file: %w", err)
		}
		if !fresh.notModified {
			prov = data
			cache.storeRevalidated(provArea, key, fresh, data)
		}
	}
	return k.verify(archive, prov, names, displayURL(archiveURL), "the provenance file "+shown)
}
