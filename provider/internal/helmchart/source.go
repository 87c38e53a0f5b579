package helmchart

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// Source is where a chart is, in the words of the resource's arguments (the
// names hashicorp/helm's helm_release uses for the same things).
type Source struct {
	// Chart is a local directory or packaged .tgz when Repository is empty, a
	// chart name in the repository otherwise, a full oci:// reference
	// (oci://host/path/name, optionally with :tag or @sha256:digest), or the
	// http(s):// URL of a packaged chart (https://host/path/chart-1.2.3.tgz,
	// with Repository empty), as `helm install NAME URL` takes one.
	Chart string
	// Repository is an HTTP(S) chart repository URL or an oci:// registry
	// path; empty for a local chart or a full oci:// Chart.
	Repository string
	// Version is an exact version or a semver constraint; empty means the
	// latest stable version. Local charts are taken as they are; a chart URL
	// offers one version, which must match Version when it is set.
	Version string
	// Credentials for the repository, registry or chart URL (basic auth; a
	// registry may trade them for a token); never logged or returned in an
	// error. They are sent only to the repository's (or the chart URL's) own
	// scheme, host and port: not to a chart URL an index gives on another
	// host or a redirect elsewhere, and, of the repositories a downloaded
	// chart's dependencies name, only to one on that same scheme, host and
	// port (see dependencyaccess.go). Credentials written in the
	// Repository, oci:// or chart URL (https://user:pass@host) are moved
	// here first.
	Username string
	Password string
	// PassCredentials sends Username and Password to whatever host an HTTP
	// repository's index or redirects (or a chart URL's redirects) lead to,
	// as helm's --pass-credentials (pass_credentials in helm_release), for
	// repositories that keep their archives on another host behind the same
	// credentials. Registries are not affected.
	PassCredentials bool
	// CAFile, CertFile and KeyFile are PEM files for the repository's TLS:
	// CAFile is trusted in addition to the system's roots. A local chart's
	// dependencies are fetched with them too (they grant nothing the server
	// could reuse), unless a DependencyRepositories entry gives its own.
	CAFile   string
	CertFile string
	KeyFile  string
	// Devel lets an empty Version or a constraint pick pre-releases.
	Devel bool
	// DependencyUpdate resolves the dependencies missing from charts/ anew
	// from Chart.yaml's ranges (the newest each allows), Chart.lock
	// ignored, as helm install --dependency-update runs `helm dependency
	// update` for a chart whose dependencies are missing. Nothing is written
	// into the chart's directory (dependencyBuilder).
	DependencyUpdate bool
	// PlainHTTP speaks plain HTTP to an oci:// registry, as helm's
	// --plain-http, for a registry without TLS (one on the local machine, a
	// lab's). It is refused for anything else: an HTTP repository or chart
	// URL says http:// itself. A local chart's oci:// dependencies are
	// fetched the same way.
	PlainHTTP bool
	// Verify checks the chart's archive against its provenance file (.prov)
	// and the file's signature against Keyring before the chart is loaded,
	// as helm's --verify: from an HTTP repository or chart URL the .prov is
	// the archive's URL with .prov appended, fetched as the archive is; from
	// a registry, the manifest's provenance layer; for a local .tgz, the
	// .prov beside it. A chart directory cannot be verified. The chart's
	// dependencies are not verified (nor does helm verify them).
	Verify bool
	// Keyring is the public keyring Verify checks signatures with; empty,
	// helm's default: pubring.gpg in $GNUPGHOME or ~/.gnupg (pubring.kbx
	// where only that exists). A leading ~ is the user's home directory.
	// Unused without Verify.
	Keyring string
	// DependencyRepositories are the credentials and TLS files of the
	// repositories and registries that the chart's dependencies (those
	// missing from its charts/ directory) come from, each entry for the
	// URLs under its own (see dependencyaccess.go).
	DependencyRepositories []DependencyRepository

	// credentials name the arguments behind Username and Password, for a 401
	// or 403; the zero value is the chart's own (chartCredentials).
	credentials credentialArgs

	// keyring is Keyring, opened by load when Verify is set.
	keyring *keyring
}

// Chart is a loaded chart and the exact version it resolved to.
type Chart struct {
	*chart.Chart
	// Version is the chart's exact version (Chart.yaml's), recorded in state
	// so a constraint that later matches a newer release shows as a change.
	Version string
}

// Remote reports whether the chart comes from a repository, a registry or
// a URL rather than the local file system.
func (s Source) Remote() bool {
	return s.Repository != "" || isOCI(s.Chart) || isChartURL(s.Chart)
}

// Load finds and loads the chart: from disk, from an HTTP chart repository,
// from an OCI registry or from the URL of a packaged chart. Remote archives
// are verified where the repository or registry gives a digest and kept in
// the cache (see cache.go), so a plan and the apply after it download a
// chart once. The dependencies of a local or downloaded chart that are not
// in its charts/ directory are built in memory, as `helm dependency build`
// would, without writing to the chart. With Verify, the chart's archive is
// checked against its provenance file and Keyring first (provenance.go), and
// a chart that fails is an error: nothing of it is returned.
//
// No error it returns contains the password or a URL with credentials in it.
func Load(ctx context.Context, src Source) (*Chart, error) {
	src, secrets, err := normalise(src)
	if err != nil {
		return nil, redact(err, secrets)
	}
	c, err := load(ctx, src)
	if err != nil {
		return nil, redact(err, secrets)
	}
	return c, nil
}

func load(ctx context.Context, src Source) (*Chart, error) {
	if err := checkDependencyRepositories(src.DependencyRepositories, src.PlainHTTP); err != nil {
		return nil, err
	}
	if src.Verify {
		if !src.Remote() {
			if info, err := os.Stat(src.Chart); err == nil && info.IsDir() {
				return nil, fmt.Errorf("verify = true, and chart %q is a directory, which cannot be verified: a provenance file signs a packaged chart; "+
					"package and sign it (helm package --sign) and give the .tgz, with its .prov beside it, or set verify = false", src.Chart)
			}
		}
		var err error
		if src.keyring, err = openKeyring(src.Keyring); err != nil {
			return nil, err
		}
	}
	switch {
	case src.PlainHTTP && !isOCI(src.Repository) && !isOCI(src.Chart) && src.Remote():
		return nil, errors.New("plain_http applies to oci:// registries only: write http:// in the repository or chart URL to fetch it over plain HTTP")
	case isOCI(src.Repository) || isOCI(src.Chart):
		return loadOCI(ctx, src)
	case src.Repository != "" && isChartURL(src.Chart):
		return nil, errors.New("the chart is the URL of a packaged chart and a repository is set too: give the URL with no repository, or the chart's name in the repository")
	case src.Repository != "":
		return loadFromRepository(ctx, src)
	case isChartURL(src.Chart):
		return loadFromURL(ctx, src)
	default:
		return loadLocal(ctx, src)
	}
}

// normalise moves credentials written into the repository or chart URL
// (https://user:pass@host/) into Username and Password, so that no URL this
// package prints or sends carries them. It returns every secret it saw, for
// redact to hide.
func normalise(src Source) (Source, []string, error) {
	secrets := []string{src.Password}
	for _, d := range src.DependencyRepositories {
		secrets = append(secrets, d.Password)
	}
	if src.Chart == "" {
		return src, secrets, errors.New("chart is empty: give a chart directory, a packaged .tgz or its http(s) URL, a chart name with repository, or an oci:// reference")
	}
	for _, field := range []*string{&src.Repository, &src.Chart} {
		clean, user, pass, ok := splitUserinfo(*field)
		if !ok {
			continue
		}
		*field = clean
		secrets = append(secrets, pass)
		if src.Username != "" || src.Password != "" {
			return src, secrets, errors.New("credentials are both in the repository or chart URL and in repository_username/repository_password: give them once, preferably as repository_username and repository_password")
		}
		src.Username, src.Password = user, pass
	}
	return src, secrets, nil
}

// credentialArgs names the arguments behind the Source's credentials.
func (s Source) credentialArgs() credentialArgs {
	if s.credentials == (credentialArgs{}) {
		return chartCredentials
	}
	return s.credentials
}

func isOCI(s string) bool {
	return strings.HasPrefix(s, "oci://")
}

// UsesLookup reports whether any template of the chart or its subcharts
// calls lookup: a cheap text search that may say yes for a comment, which
// costs a warning, never a wrong render.
func (c *Chart) UsesLookup() bool {
	for _, t := range c.Templates {
		if strings.Contains(string(t.Data), "lookup") {
			return true
		}
	}
	for _, dep := range c.Dependencies() {
		if (&Chart{Chart: dep}).UsesLookup() {
			return true
		}
	}
	return false
}

// varying matches the template functions whose output changes from one
// render to the next: random values, the time, generated keys and
// certificates, salted hashes.
var varying = regexp.MustCompile(`\b(rand[A-Za-z]*|uuidv4|now|genCA[A-Za-z]*|genPrivateKey|genSelfSignedCert[A-Za-z]*|genSignedCert[A-Za-z]*|htpasswd|bcrypt|shuffle)\b`)

// MayVary reports whether any template of the chart or its subcharts calls a
// function whose output changes between renders (randAlphaNum, now,
// genCA...): such a chart renders other objects at the apply than at the
// plan, unless a lookup reads a value back. A cheap text search, which may
// say yes for a comment; that costs a second render.
func (c *Chart) MayVary() bool {
	for _, t := range c.Templates {
		if varying.Match(t.Data) {
			return true
		}
	}
	for _, dep := range c.Dependencies() {
		if (&Chart{Chart: dep}).MayVary() {
			return true
		}
	}
	return false
}
