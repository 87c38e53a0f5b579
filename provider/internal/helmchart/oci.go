package helmchart

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	orasregistry "oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// The OCI registry is spoken to with oras-go, the library Helm's registry
// client is built on, rather than through that client: it reads the user's
// helm and docker credential stores when it is given no credentials, and it
// ignores the context. Helm's conventions are kept: its media types, and
// chart versions as tags with "+" written "_".

// The media types of a chart's layer, as helm.sh/helm/v4/pkg/registry
// defines them; that package is not imported for two strings, as it brings
// the docker credential helpers with it.
const (
	chartLayerMediaType       = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	legacyChartLayerMediaType = "application/tar+gzip"
)

// ociChart is where in a registry a chart is: the repository
// (host/path/name) and the tag or digest the reference itself gave, if any.
type ociChart struct {
	ref      orasregistry.Reference
	registry *remote.Repository
	shown    string // oci://host/path/name, for errors
	sentAuth bool
	args     credentialArgs // the arguments behind the credentials, for errors
}

func openOCI(src Source) (*ociChart, error) {
	raw := src.Chart
	if src.Repository != "" {
		if isOCI(src.Chart) {
			return nil, errors.New("the chart is a full oci:// reference and a repository is set too: give one or the other")
		}
		raw = strings.TrimSuffix(src.Repository, "/") + "/" + src.Chart
	}
	ref, err := orasregistry.ParseReference(strings.TrimPrefix(raw, "oci://"))
	if err != nil {
		return nil, notOCIReference(raw, err, src.credentialArgs())
	}
	origin := &url.URL{Scheme: "https", Host: ref.Registry}
	if src.PlainHTTP {
		origin.Scheme = "http"
	}
	client, err := newHTTPClient(src, origin, false)
	if err != nil {
		return nil, err
	}
	repository, err := remote.NewRepository(ref.Registry + "/" + ref.Repository)
	if err != nil {
		return nil, notOCIReference(raw, err, src.credentialArgs())
	}
	authClient := &auth.Client{Client: client, Cache: auth.NewCache()}
	authClient.SetUserAgent("k8sconnect (Helm chart loader)")
	sentAuth := src.Username != "" || src.Password != ""
	if sentAuth {
		authClient.Credential = auth.StaticCredential(ref.Registry, auth.Credential{Username: src.Username, Password: src.Password})
	}
	repository.Client = authClient
	repository.PlainHTTP = src.PlainHTTP
	return &ociChart{
		ref:      ref,
		registry: repository,
		shown:    "oci://" + ref.Registry + "/" + ref.Repository,
		sentAuth: sentAuth,
		args:     src.credentialArgs(),
	}, nil
}

// notOCIReference explains a reference oras cannot parse. Its reason quotes
// the reference, so it is left out when the reference holds userinfo that
// parsing could not take out; args say where the credentials go instead
// (a dependency's are not the chart's).
func notOCIReference(raw string, err error, args credentialArgs) error {
	shown := hideUserinfo(raw)
	if shown != raw {
		return fmt.Errorf("%q does not parse as an OCI chart reference with the credentials in it: give them as %s", shown, args.toSet)
	}
	return fmt.Errorf("%q is not an OCI chart reference (oci://host/path/name): %w", raw, err)
}

// loadOCI resolves the version to a tag, fetches the manifest, and loads the
// chart layer from the cache or the registry.
func loadOCI(ctx context.Context, src Source) (*Chart, error) {
	oc, err := openOCI(src)
	if err != nil {
		return nil, err
	}
	cache, err := openCache()
	if err != nil {
		return nil, err
	}
	reference, err := oc.reference(ctx, src.Version, src.Devel)
	if err != nil {
		return nil, err
	}
	archive, prov, err := oc.chartLayer(ctx, cache, reference, src.keyring != nil)
	if errors.Is(err, errdef.ErrNotFound) && oc.ref.Reference == "" && src.Version != "" {
		// Say which versions there are, if the registry will list them.
		if tags, tagsErr := oc.versions(ctx); tagsErr == nil {
			return nil, noMatchingVersion("chart "+oc.shown, tags, src.Version, src.Devel)
		}
	}
	if err != nil {
		return nil, err
	}
	c, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("loading chart %s:%s: %w", oc.shown, reference, err)
	}
	// The tag stands for the chart's version (helm push makes it so); a tag or
	// digest the user wrote is taken as it is unless a version was given too.
	want := src.Version
	if oc.ref.Reference == "" {
		want = tagVersion(reference)
	}
	if want != "" && c.Metadata.Version != want {
		return nil, fmt.Errorf("%s at %s holds chart version %s, not %s", oc.shown, reference, c.Metadata.Version, want)
	}
	if src.keyring != nil {
		// The archive has been read (not rendered) to learn the name helm
		// package signed it under; helm push insists that the reference's
		// name and tag are the chart's, so it is the name helm checks too.
		names := []string{packageName(c.Metadata.Name, c.Metadata.Version)}
		at := oc.at(reference)
		if err := src.keyring.verify(archive, prov, names, at, "the provenance layer of "+at); err != nil {
			return nil, err
		}
	}
	return &Chart{Chart: c, Version: c.Metadata.Version}, nil
}

// tagVersion is the chart version a tag stands for.
func tagVersion(tag string) string { return strings.ReplaceAll(tag, "_", "+") }

// reference is the tag (or digest) to fetch: the reference's own, an exact
// version, or the newest tag that satisfies the constraint, as Helm picks.
func (oc *ociChart) reference(ctx context.Context, version string, devel bool) (string, error) {
	own := oc.ref.Reference
	switch {
	case own != "" && version != "" && tagVersion(own) != version && !strings.HasPrefix(own, "sha256:"):
		return "", fmt.Errorf("the reference %s:%s and the version %q disagree: give the version once", oc.shown, own, version)
	case own != "":
		return own, nil
	}
	// A full version is a tag, fetched without listing the tags (which a
	// registry may not allow). Helm takes any version its lenient parser
	// accepts as a tag, so "1" would look for a tag "1"; here "1" is a
	// constraint, as it is for an HTTP repository.
	if version != "" {
		if _, err := semver.StrictNewVersion(version); err == nil {
			return strings.ReplaceAll(version, "+", "_"), nil
		}
	}
	tags, err := oc.versions(ctx)
	if err != nil {
		return "", err
	}
	picked, err := pickVersion("chart "+oc.shown, tags, version, devel)
	if err != nil {
		return "", err
	}
	return strings.ReplaceAll(picked, "+", "_"), nil
}

// versions lists the repository's tags that are semantic versions, newest
// first.
func (oc *ociChart) versions(ctx context.Context) ([]string, error) {
	var parsed []*semver.Version
	err := oc.registry.Tags(ctx, "", func(tags []string) error {
		for _, tag := range tags {
			if v, err := semver.StrictNewVersion(tagVersion(tag)); err == nil {
				parsed = append(parsed, v)
			}
		}
		return nil
	})
	if err != nil {
		return nil, oc.explain(ctx, "listing the versions", oc.shown, err, "not found in the registry (no such chart)")
	}
	sort.Sort(sort.Reverse(semver.Collection(parsed)))
	versions := make([]string, len(parsed))
	for i, v := range parsed {
		versions[i] = v.Original()
	}
	return versions, nil
}

// at names the chart at reference, a tag or a digest.
func (oc *ociChart) at(reference string) string {
	if strings.HasPrefix(reference, "sha256:") {
		return oc.shown + "@" + reference
	}
	return oc.shown + ":" + reference
}

// chartLayer fetches the manifest for reference and returns the chart
// archive it points to, from the cache when its digest is there, and with
// withProv the provenance file that helm push stores as another layer. The
// provenance file is fetched on every load (it is small, and the manifest
// names it by digest, so it always goes with this archive); it is not kept.
func (oc *ociChart) chartLayer(ctx context.Context, cache *archiveCache, reference string, withProv bool) (archive, prov []byte, err error) {
	what := oc.at(reference)
	desc, body, err := oc.registry.FetchReference(ctx, reference)
	if err != nil {
		return nil, nil, oc.explain(ctx, "fetching the manifest", what, err, "not found in the registry (no such chart or version)")
	}
	defer func() { _ = body.Close() }()
	if desc.Size > maxIndexBytes {
		return nil, nil, fmt.Errorf("the manifest of %s is too large", what)
	}
	raw, err := content.ReadAll(body, desc)
	if err != nil {
		return nil, nil, oc.explain(ctx, "reading the manifest", what, err, "")
	}
	var manifest ocispec.Manifest
	if err := json.Unmarshal(raw, &manifest); err != nil || desc.MediaType == ocispec.MediaTypeImageIndex {
		return nil, nil, fmt.Errorf("%s is not a Helm chart (its manifest is %s)", what, desc.MediaType)
	}
	var layer, provLayer *ocispec.Descriptor
	for i, l := range manifest.Layers {
		switch {
		case layer == nil && (l.MediaType == chartLayerMediaType || l.MediaType == legacyChartLayerMediaType):
			layer = &manifest.Layers[i]
		case provLayer == nil && l.MediaType == provMediaType:
			provLayer = &manifest.Layers[i]
		}
	}
	if layer == nil {
		return nil, nil, fmt.Errorf("%s is not a Helm chart: its manifest has no %s layer", what, chartLayerMediaType)
	}
	if layer.Size > maxArchiveBytes {
		return nil, nil, fmt.Errorf("the chart in %s is larger than %d MiB; refusing it", what, maxArchiveBytes>>20)
	}
	if withProv {
		if provLayer == nil {
			return nil, nil, fmt.Errorf("verify = true, and %s has no provenance: its manifest has no %s layer; %s", what, provMediaType, noProvHint)
		}
		if provLayer.Size > maxProvBytes {
			return nil, nil, fmt.Errorf("the provenance layer of %s is larger than %d MiB; refusing it", what, maxProvBytes>>20)
		}
		if prov, err = content.FetchAll(ctx, oc.registry.Blobs(), *provLayer); err != nil {
			return nil, nil, oc.explain(ctx, "downloading the provenance layer", what, err, "the manifest names a provenance layer the registry does not have")
		}
	}
	digest, digestErr := normaliseDigest(layer.Digest.String())
	if digestErr == nil {
		if data, ok := cache.verified(digest); ok {
			return data, prov, nil
		}
	}
	// FetchAll checks the size and the digest the manifest gives.
	data, err := content.FetchAll(ctx, oc.registry.Blobs(), *layer)
	if err != nil {
		return nil, nil, oc.explain(ctx, "downloading the chart layer", what, err, "the manifest names a layer the registry does not have")
	}
	if digestErr == nil {
		cache.storeVerified(digest, data)
	}
	return data, prov, nil
}

// explain turns an oras error met while doing something to target into one
// that says what to do.
func (oc *ociChart) explain(ctx context.Context, doing, target string, err error, notFound string) error {
	var response *errcode.ErrorResponse
	switch {
	case errors.As(err, &response):
		explained := statusError(target, response.StatusCode, oc.sentAuth, notFound, oc.args)
		if len(response.Errors) > 0 {
			return fmt.Errorf("%s: %w; the registry says: %s", doing, explained, response.Errors.Error())
		}
		return fmt.Errorf("%s: %w", doing, explained)
	case errors.Is(err, auth.ErrBasicCredentialNotFound):
		// The registry asked for basic auth and none was given.
		return fmt.Errorf("%s: %w", doing, statusError(target, http.StatusUnauthorized, false, "", oc.args))
	case errors.Is(err, errdef.ErrNotFound) && notFound != "":
		return &rewordedError{msg: fmt.Sprintf("%s: %s: %s", doing, target, notFound), cause: err}
	case errors.Is(err, content.ErrMismatchedDigest) || errors.Is(err, content.ErrTrailingData):
		return fmt.Errorf("%s: %s does not match its digest; not using it: %w", doing, target, err)
	}
	return fmt.Errorf("%s: %w", doing, transportError(ctx, target, err, oc.args))
}
