package helmchart

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/Masterminds/semver/v3"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

// isChartURL reports whether a chart argument is the http(s) URL of a
// packaged chart, which `helm install NAME https://host/chart-1.2.3.tgz` and
// hashicorp/helm's helm_release take in place of a chart, rather than a
// path. The scheme is case-insensitive, as in any URL: "HTTPS://..." is not
// a file name anyone means.
func isChartURL(s string) bool {
	for _, scheme := range []string{"http://", "https://"} {
		if len(s) >= len(scheme) && strings.EqualFold(s[:len(scheme)], scheme) {
			return true
		}
	}
	return false
}

// loadFromURL downloads the packaged chart src.Chart names and completes its
// dependencies as a local chart's are.
//
// The archive is kept in the cache under its URL and used from there on the
// next loads, without asking the server again. A URL is taken to name one
// chart version, as chart-1.2.3.tgz does: what a user expects is that the
// plan and the apply after it (separate processes, minutes or days apart)
// install the same chart, and that a plan made twice shows the same thing.
// Downloading on every load, as `helm install URL` does, would let a server
// that republishes the URL between them change what is applied behind the
// plan's back. The version is still the way to move: a cached archive that
// is not the version (or outside the constraint) asked for is downloaded
// again, so setting version to the republished one takes it. The apply of a
// release pins the version its plan loaded, as for any chart Source.Remote
// counts, and the plan's copy is that version, so the apply reads it. Only an archive that loaded as a chart of the wanted version is
// kept: an error page or a wrong version is never served from the cache.
func loadFromURL(ctx context.Context, src Source) (*Chart, error) {
	u, err := parseChartURL(src.Chart)
	if err != nil {
		return nil, err
	}
	shown := displayURL(u)
	client, err := newHTTPClient(src, u, src.PassCredentials)
	if err != nil {
		return nil, err
	}
	// The URL's own origin takes the place of a repository's for the rule of
	// where the credentials go: there, and past a redirect only with
	// PassCredentials.
	origin := &httpRepository{url: u, client: client, username: src.Username, password: src.Password, passCredentials: src.PassCredentials}
	cache, err := openCache()
	if err != nil {
		return nil, err
	}

	key := urlArchiveKey(shown, src.Username)
	c := cachedURLChart(cache, key, shown, src)
	if c == nil {
		data, err := origin.get(ctx, u, maxArchiveBytes, "there is no file at this URL; check the chart URL")
		if err != nil {
			return nil, err
		}
		c, err = readChartArchive(shown, data)
		if err != nil {
			return nil, err
		}
		if err := urlVersionMatches(shown, c, src.Version, src.Devel); err != nil {
			return nil, err
		}
		cache.storeUnverified(key, data)
	}

	builder := &dependencyBuilder{tls: src, building: map[string]bool{}}
	if err := builder.complete(ctx, c, shown, 0); err != nil {
		return nil, err
	}
	return &Chart{Chart: c, Version: c.Metadata.Version}, nil
}

// parseChartURL parses an http(s) chart URL, from which normalise has
// already taken the credentials, unless it did not parse.
func parseChartURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil && hideUserinfo(raw) != raw {
		return nil, fmt.Errorf("chart %q does not parse as a URL with the credentials in it: give them as repository_username and repository_password", hideUserinfo(raw))
	}
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("chart %q is not a valid http(s) URL of a packaged chart (https://host/path/chart-1.2.3.tgz)", hideUserinfo(raw))
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.User = nil
	return u, nil
}

// urlArchiveKey names a URL's archive among the unverified ones by the URL
// and the user name it was downloaded as, as an index's copy is: a cached
// archive is used without asking the server, so a configuration without
// credentials, or with another user's, must not find the copy that one with
// them downloaded. (The password is left out: a hash of it in a file name
// would be one more copy of it on disk; the cache is the user's own.) A
// repository's archives are keyed with the name the index gives every entry
// where this key has none, so the two never share a key.
func urlArchiveKey(shown, username string) string {
	return unverifiedKey(shown, "", username)
}

// cachedURLChart is the cached archive of the URL, loaded, when it is a chart
// of the version src asks for; nil, to download it, otherwise: the file was
// corrupted since it was kept, or the version moved on (an invalid version
// is reported by the download's check).
func cachedURLChart(cache *archiveCache, key, shown string, src Source) *chart.Chart {
	data, ok := cache.unverified(key)
	if !ok {
		return nil
	}
	c, err := readChartArchive(shown, data)
	if err != nil || urlVersionMatches(shown, c, src.Version, src.Devel) != nil {
		return nil
	}
	return c
}

func readChartArchive(shown string, data []byte) (*chart.Chart, error) {
	c, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s is not a packaged Helm chart (a .tgz as `helm package` writes it): %w; check that the URL leads to the archive itself, not to a page about it", shown, err)
	}
	return c, nil
}

// urlVersionMatches checks the archive's version against version, exact or
// a constraint, as the chart's version is checked in a repository: the
// archive is the only version a URL offers, so a mismatch is an error,
// never a reason to look elsewhere.
func urlVersionMatches(shown string, c *chart.Chart, version string, devel bool) error {
	got := c.Metadata.Version
	if version == "" || got == version {
		return nil
	}
	constraint, err := semver.NewConstraint(version)
	if err != nil {
		return fmt.Errorf("version %q of chart %s is neither a version nor a semver constraint: %w", version, shown, err)
	}
	constraint.IncludePrerelease = devel
	parsed, err := semver.NewVersion(got)
	if err == nil && constraint.Check(parsed) {
		return nil
	}
	hint := ""
	if err == nil && parsed.Prerelease() != "" && !devel {
		hint = "; pre-releases match a constraint only with devel = true"
	}
	return fmt.Errorf("%s holds chart %s %s, which version = %q does not allow: check the URL, or set version to match the archive (or leave it empty to take the archive as it is)%s",
		shown, c.Metadata.Name, got, version, hint)
}
