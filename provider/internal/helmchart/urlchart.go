package helmchart

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"path"
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
// A URL may be republished (a "latest" archive), so a load asks the server
// whether the kept copy is current, with the ETag or Last-Modified it came
// with (a 304 costs no download), as a repository's index is asked for on
// every load: a plan must show what the URL serves now, not what one
// machine's cache happens to hold, or two machines plan differently. One
// load is not asked again: an exact version that the kept copy is. That is
// the apply, which pins the version its plan loaded (as for any chart
// Source.Remote counts), so the apply installs the bytes the plan showed
// even if the URL is republished between them; a new version there is the
// next plan's change. Only an archive that loaded as a chart of the wanted
// version is kept: an error page or a wrong version is never served from
// the cache.
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
	origin := &httpRepository{url: u, client: client, username: src.Username, password: src.Password, passCredentials: src.PassCredentials,
		args: src.credentialArgs()}
	cache, err := openCache()
	if err != nil {
		return nil, err
	}

	key := urlArchiveKey(shown, src.Username)
	held, heldData := cache.revalidated(urlArea, key)
	var kept *chart.Chart
	if heldData != nil {
		kept, _ = readChartArchive(shown, heldData)
	}
	if kept == nil {
		// Nothing kept, or a copy corrupted since: ask for the whole file.
		held = validators{}
	}
	c, archive := kept, heldData
	ask := kept == nil || !exactVersion(src.Version) || urlVersionMatches(shown, kept, src.Version, src.Devel) != nil
	if ask {
		data, fresh, err := origin.getConditional(ctx, u, maxArchiveBytes, "there is no file at this URL; check the chart URL", held)
		if err != nil {
			return nil, err
		}
		if !fresh.notModified {
			if c, err = readChartArchive(shown, data); err != nil {
				return nil, err
			}
			archive = data
		}
		if err := urlVersionMatches(shown, c, src.Version, src.Devel); err != nil {
			return nil, err
		}
		if !fresh.notModified {
			cache.storeRevalidated(urlArea, key, fresh, data)
		}
	}
	if src.keyring != nil {
		// The provenance file is asked for when the archive is, and a kept
		// archive not asked about is checked against the .prov kept with it.
		names := []string{path.Base(u.Path), packageName(c.Metadata.Name, c.Metadata.Version)}
		if err := origin.verify(ctx, cache, src.keyring, archive, u, names, ask); err != nil {
			return nil, err
		}
	}

	builder := &dependencyBuilder{chart: src, origin: u, building: map[string]bool{}}
	if err := builder.complete(ctx, c, shown, 0); err != nil {
		return nil, err
	}
	return &Chart{Chart: c, Version: c.Metadata.Version}, nil
}

// exactVersion reports whether version names one version rather than a
// range: a whole semver version (1.2.3); "1.2" is a range of patches, as a
// constraint reads it.
func exactVersion(version string) bool {
	_, err := semver.StrictNewVersion(version)
	return err == nil
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

// urlArchiveKey names a URL's archive by the URL and the user name it was
// downloaded as, as an index's copy is: the apply's load uses the copy
// without asking the server, so a configuration without credentials, or
// with another user's, must not find the copy that one with them
// downloaded. (The password is left out: a hash of it in a file name would
// be one more copy of it on disk; the cache is the user's own.)
func urlArchiveKey(shown, username string) string {
	return indexKey(shown, username)
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
