package helmchart

import (
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
)

// DependencyRepository gives the repositories and registries under URL,
// when a chart's dependencies name them, their credentials and TLS files.
// helm dependency build finds those in repositories.yaml (helm repo add) and
// in helm registry login's store; k8sconnect reads neither (cache.go says
// why), so the configuration says them.
type DependencyRepository struct {
	// URL is an http(s):// repository or an oci:// registry URL. It covers
	// itself and every URL under it, path segment by path segment, on the
	// same scheme, host and port only: https://charts.example.com/private
	// covers https://charts.example.com/private/team, not
	// https://charts.example.com/private-team nor http://charts.example.com.
	URL string
	// Username and Password are sent to a dependency's repository that URL
	// covers (to its scheme, host and port only, not past a redirect
	// elsewhere), in place of none.
	Username string
	Password string
	// CAFile, CertFile and KeyFile, when set, take the place of the chart's
	// own (Source's) for those dependencies.
	CAFile   string
	CertFile string
	KeyFile  string
}

// ParseRepositoryURL checks a DependencyRepository's URL: an http://,
// https:// or oci:// URL with a host, and no credentials, query or fragment
// in it. Its error quotes the URL without any credentials.
func ParseRepositoryURL(raw string) (*url.URL, error) {
	shown := hideUserinfo(raw)
	u, err := url.Parse(raw)
	switch {
	case shown != raw || (err == nil && u.User != nil):
		return nil, fmt.Errorf("%q has credentials in it: give them as username and password", shown)
	case err != nil || u.Host == "" || u.Hostname() == "" || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "oci"):
		return nil, fmt.Errorf("%q is not an http://, https:// or oci:// URL with a host (such as https://charts.example.com/private or oci://registry.example.com/charts)", shown)
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, fmt.Errorf("%q has a query or a fragment: give the repository's or registry's URL, which covers the URLs under it", shown)
	}
	return u, nil
}

// RepositoryURLKey is what two DependencyRepository URLs that cover the same
// URLs have in common (https://Host:443/a/ and https://host/a), so that
// validation can refuse a list that names one twice. plainHTTP is the
// chart's plain_http, which decides an oci:// URL's default port (portOf).
func RepositoryURLKey(u *url.URL, plainHTTP bool) string {
	p := prefixOf(u, plainHTTP)
	return p.scheme + "://" + p.host + ":" + p.port + "/" + strings.Join(p.segments, "/")
}

// repositoryPrefix is a URL as matching compares it.
type repositoryPrefix struct {
	scheme, host, port string
	// segments are the path's, cleaned as a request's path is (url.JoinPath
	// cleans the index's URL), so /public/../private is /private here too.
	segments []string
}

// prefixOf is u as matching compares it; plainHTTP is the chart's
// plain_http, with which its oci:// dependencies are fetched.
func prefixOf(u *url.URL, plainHTTP bool) repositoryPrefix {
	var segments []string
	for _, s := range strings.Split(path.Clean("/"+u.Path), "/") {
		if s != "" {
			segments = append(segments, s)
		}
	}
	return repositoryPrefix{scheme: u.Scheme, host: strings.ToLower(u.Hostname()), port: portOf(u, plainHTTP), segments: segments}
}

// covers reports whether q is p or a URL under p.
func (p repositoryPrefix) covers(q repositoryPrefix) bool {
	return p.scheme == q.scheme && p.host == q.host && p.port == q.port &&
		len(p.segments) <= len(q.segments) && slices.Equal(p.segments, q.segments[:len(p.segments)])
}

// dependencyRepositoryFor is the entry whose URL covers repository with the
// most path segments (the most specific), or nil. plainHTTP is the chart's
// plain_http (see portOf).
func dependencyRepositoryFor(entries []DependencyRepository, repository *url.URL, plainHTTP bool) *DependencyRepository {
	target := prefixOf(repository, plainHTTP)
	var best *DependencyRepository
	bestLen := -1
	for i := range entries {
		u, err := ParseRepositoryURL(entries[i].URL)
		if err != nil {
			continue // load has refused it already
		}
		if p := prefixOf(u, plainHTTP); p.covers(target) && len(p.segments) > bestLen {
			best, bestLen = &entries[i], len(p.segments)
		}
	}
	return best
}

// checkDependencyRepositories refuses an entry that could not be matched,
// and two that cover the same URLs (which one's credentials a dependency got
// would be up to their order), as validation at plan time does first where
// it knows plain_http.
func checkDependencyRepositories(entries []DependencyRepository, plainHTTP bool) error {
	seen := map[string]string{}
	for _, e := range entries {
		u, err := ParseRepositoryURL(e.URL)
		if err != nil {
			return fmt.Errorf("dependency_repositories: %w", err)
		}
		key := RepositoryURLKey(u, plainHTTP)
		if first, ok := seen[key]; ok {
			return fmt.Errorf("dependency_repositories: %q and %q are the same repository: give each repository one entry", first, e.URL)
		}
		seen[key] = e.URL
	}
	return nil
}

// reach gives a dependency's Source (normalised: its Repository without
// credentials) the credentials and TLS files to reach its repository with:
//
//   - credentials written in Chart.yaml's URL of it, which are for it alone;
//   - else those of the dependency_repositories entry that covers it;
//   - else the chart's own repository_username and repository_password if
//     the dependency's repository is on the chart's own scheme, host and
//     port (a downloaded chart's: a local chart has no host), as helm sends
//     a repository's credentials to its own host only;
//   - else none. Chart.yaml may name any host, so credentials never go to
//     one the configuration did not name.
//
// TLS files are the entry's where it gives them, else the chart's, which
// grant nothing a server could reuse.
func (b *dependencyBuilder) reach(src Source) Source {
	u, err := url.Parse(src.Repository)
	var entry *DependencyRepository
	if err == nil && u.Host != "" {
		entry = dependencyRepositoryFor(b.chart.DependencyRepositories, u, b.chart.PlainHTTP)
	}
	src.CAFile, src.CertFile, src.KeyFile = b.chart.CAFile, b.chart.CertFile, b.chart.KeyFile
	if entry != nil && entry.CAFile != "" {
		src.CAFile = entry.CAFile
	}
	if entry != nil && (entry.CertFile != "" || entry.KeyFile != "") {
		src.CertFile, src.KeyFile = entry.CertFile, entry.KeyFile
	}

	shown := hideUserinfo(src.Repository)
	if err == nil {
		shown = displayURL(u)
	}
	src.credentials.toSet = fmt.Sprintf("a username and password for it in dependency_repositories, in an entry whose url is %s or a prefix of it "+
		"(repository_username and repository_password go to the chart's own repository, registry or URL only)", shown)
	// A failed handshake sends the user to the entry that covers the
	// dependency (or to one to add), not to the chart's repository_* files:
	// those are the dependency's only while no entry gives its own.
	switch {
	case entry != nil && entry.CAFile != "":
		src.credentials.caFile = fmt.Sprintf("check ca_file of the dependency_repositories entry %q: it must be the PEM file of the CA that signed it", entry.URL)
	case entry != nil:
		src.credentials.caFile = fmt.Sprintf("set ca_file in the dependency_repositories entry %q to the PEM file of the CA that signed it", entry.URL)
	default:
		src.credentials.caFile = fmt.Sprintf("add to dependency_repositories an entry whose url is %s or a prefix of it, "+
			"with ca_file set to the PEM file of the CA that signed it", shown)
	}
	switch {
	case entry != nil && (entry.CertFile != "" || entry.KeyFile != ""):
		src.credentials.clientCert = fmt.Sprintf("check cert_file and key_file of the dependency_repositories entry %q: "+
			"they must be a client certificate and key it trusts", entry.URL)
	case entry != nil:
		src.credentials.clientCert = fmt.Sprintf("set cert_file and key_file in the dependency_repositories entry %q "+
			"to a client certificate and key it trusts", entry.URL)
	default:
		src.credentials.clientCert = fmt.Sprintf("add to dependency_repositories an entry whose url is %s or a prefix of it, "+
			"with cert_file and key_file set to a client certificate and key it trusts", shown)
	}
	switch {
	case src.Username != "" || src.Password != "":
		src.credentials.sent = "the credentials written in its repository URL in Chart.yaml"
	case entry != nil && (entry.Username != "" || entry.Password != ""):
		src.Username, src.Password = entry.Username, entry.Password
		src.credentials.sent = fmt.Sprintf("the username and password of the dependency_repositories entry %q", entry.URL)
	case entry != nil:
		src.credentials.toSet = fmt.Sprintf("a username and password in the dependency_repositories entry %q", entry.URL)
	case b.origin != nil && u != nil && sameOrigin(u, b.origin) && (b.chart.Username != "" || b.chart.Password != ""):
		// Fetched as the chart is, from the same origin: the same
		// credentials under the same rules.
		src.Username, src.Password, src.PassCredentials = b.chart.Username, b.chart.Password, b.chart.PassCredentials
		src.credentials.sent = "repository_username and repository_password, sent to it as it is on the chart's own host " +
			"(or give it a username and password of its own in dependency_repositories)"
	}
	return src
}
