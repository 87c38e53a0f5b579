package helmchart

import (
	"net/url"
	"strings"
	"testing"
)

// Which entry covers a dependency's repository: the same scheme, host (in
// any case) and port (the default one written or not), and a path under the
// entry's segment by segment, after the path is cleaned as a request's is;
// the most specific entry wins.
func TestDependencyRepositoryFor(t *testing.T) {
	entries := []DependencyRepository{
		{URL: "https://charts.example.com"},
		{URL: "https://charts.example.com/private/"},
		{URL: "https://charts.example.com/private/team"},
		{URL: "oci://registry.example.com:5000/charts"},
		{URL: "http://plain.example.com:80"},
	}
	for repository, want := range map[string]string{
		"https://charts.example.com":                      "https://charts.example.com",
		"https://CHARTS.example.com:443/":                 "https://charts.example.com",
		"https://charts.example.com/public":               "https://charts.example.com",
		"https://charts.example.com/private":              "https://charts.example.com/private/",
		"https://charts.example.com/private-team":         "https://charts.example.com",
		"https://charts.example.com/private/team/x":       "https://charts.example.com/private/team",
		"https://charts.example.com/private/teams":        "https://charts.example.com/private/",
		"https://charts.example.com/private/../public":    "https://charts.example.com",
		"https://charts.example.com/public/../private/":   "https://charts.example.com/private/",
		"https://charts.example.com.attacker.net/":        "",
		"https://charts.example.com:8443/":                "",
		"http://charts.example.com/":                      "",
		"oci://charts.example.com/private":                "",
		"oci://registry.example.com:5000/charts/app":      "oci://registry.example.com:5000/charts",
		"https://registry.example.com:5000/charts/app":    "",
		"http://charts.example.com:443/":                  "",
		"oci://registry.example.com/charts/app":           "",
		"oci://registry.example.com:5000/chartsandmore":   "",
		"http://plain.example.com/charts":                 "http://plain.example.com:80",
		"https://attacker.net/https://charts.example.com": "",
	} {
		u, err := url.Parse(repository)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if e := dependencyRepositoryFor(entries, u, false); e != nil {
			got = e.URL
		}
		if got != want {
			t.Errorf("%s is covered by %q, want %q", repository, got, want)
		}
	}
}

// A port left out is the default port of the way the request is made:
// https's and oci's 443, http's 80, and 80 for oci:// under plain_http, which
// the registry client then speaks to with http://host/v2/... . So an entry
// and a dependency that name one server with the port written and without
// match, in either direction; another port, another host, a host that only
// begins like the entry's, or the port the other mode would use get
// nothing.
func TestDependencyRepositoryForDefaultPorts(t *testing.T) {
	for _, tc := range []struct {
		entry, repository string
		plainHTTP         bool
		covers            bool
	}{
		{"oci://registry.example.com", "oci://registry.example.com:443/charts", false, true},
		{"oci://registry.example.com:443", "oci://registry.example.com/charts", false, true},
		{"oci://registry.example.com:443/charts", "oci://REGISTRY.example.com/charts/app", false, true},
		{"https://charts.example.com", "https://charts.example.com:443/private", false, true},
		{"https://charts.example.com:443/private", "https://charts.example.com/private/team", false, true},
		{"http://charts.example.com", "http://charts.example.com:80/", false, true},
		{"http://charts.example.com:80", "http://charts.example.com/private", false, true},
		{"oci://registry.example.com", "oci://registry.example.com:80/charts", true, true},
		{"oci://registry.example.com:80", "oci://registry.example.com/charts", true, true},
		// plain_http applies to oci:// only: https and http keep theirs.
		{"https://charts.example.com", "https://charts.example.com:443/", true, true},
		{"http://charts.example.com", "http://charts.example.com:80/", true, true},

		// Decoys.
		{"oci://registry.example.com", "oci://registry.example.com:5000/charts", false, false},
		{"oci://registry.example.com:5000", "oci://registry.example.com/charts", false, false},
		{"oci://registry.example.com", "oci://registry.example.com:80/charts", false, false},
		{"oci://registry.example.com:80", "oci://registry.example.com/charts", false, false},
		{"oci://registry.example.com", "oci://registry.example.com:443/charts", true, false},
		{"oci://registry.example.com:443", "oci://registry.example.com/charts", true, false},
		{"oci://registry.example.com", "oci://registry.example.org/charts", false, false},
		{"oci://registry.example.com", "oci://registry.example.com.attacker.net/charts", false, false},
		{"oci://registry.example.com:443", "oci://registry.example.com.attacker.net:443/charts", false, false},
		{"oci://registry.example.com", "oci://registry.example.co/charts", false, false},
		{"oci://registry.example.com", "https://registry.example.com/charts", false, false},
		{"oci://registry.example.com", "http://registry.example.com/charts", true, false},
		{"https://charts.example.com", "https://charts.example.com:8443/", false, false},
		{"https://charts.example.com:443", "https://charts.example.com:4430/", false, false},
		{"https://charts.example.com:443", "http://charts.example.com/", false, false},
		{"https://charts.example.com", "http://charts.example.com:443/", false, false},
		{"http://charts.example.com", "https://charts.example.com:80/", false, false},
		{"http://charts.example.com:80", "http://charts.example.com:8080/", false, false},
		{"https://charts.example.com", "https://charts.example.com.attacker.net:443/", false, false},
	} {
		u, err := url.Parse(tc.repository)
		if err != nil {
			t.Fatal(err)
		}
		e := dependencyRepositoryFor([]DependencyRepository{{URL: tc.entry}}, u, tc.plainHTTP)
		if got := e != nil; got != tc.covers {
			t.Errorf("plain_http %v: %s covers %s: %v, want %v", tc.plainHTTP, tc.entry, tc.repository, got, tc.covers)
		}
	}
}

// The chart's own credentials go to a dependency on its origin only:
// the same scheme, host (in any case) and port, the default one written or
// not.
func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://charts.example.com/a", "https://charts.example.com:443/b", true},
		{"https://charts.example.com:443", "https://charts.example.com", true},
		{"http://charts.example.com", "http://charts.example.com:80/x", true},
		{"https://charts.example.com", "https://charts.example.com:8443", false},
		{"https://charts.example.com", "http://charts.example.com:443", false},
		{"http://charts.example.com", "https://charts.example.com:80", false},
		{"https://charts.example.com", "https://charts.example.com.attacker.net", false},
		{"https://charts.example.com:443", "https://charts.example.co:443", false},
		{"https://charts.example.com", "oci://charts.example.com:443", false},
		// Host names are case-insensitive (RFC 3986, 3.2.2): one server.
		{"https://Charts.Example.COM/a", "https://charts.example.com/b", true},
		{"HTTPS://charts.example.com", "https://CHARTS.example.com:443", true},
		{"https://Charts.Example.com", "https://charts.example.com.attacker.net", false},
	} {
		a, errA := url.Parse(tc.a)
		b, errB := url.Parse(tc.b)
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if got := sameOrigin(a, b); got != tc.same {
			t.Errorf("sameOrigin(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
		if got := sameOrigin(b, a); got != tc.same {
			t.Errorf("sameOrigin(%s, %s) = %v, want %v", tc.b, tc.a, got, tc.same)
		}
	}
}

// Two entries for one server, one with its default port written, are one
// repository twice, which loading refuses as validation does; under
// plain_http oci://host and oci://host:443 are two.
func TestCheckDependencyRepositoriesDuplicates(t *testing.T) {
	for _, tc := range []struct {
		a, b      string
		plainHTTP bool
		duplicate bool
	}{
		{"oci://registry.example.com", "oci://registry.example.com:443/", false, true},
		{"oci://registry.example.com", "oci://registry.example.com:80", true, true},
		{"https://charts.example.com/a", "https://CHARTS.example.com:443/a/", false, true},
		{"oci://registry.example.com", "oci://registry.example.com:443", true, false},
		{"oci://registry.example.com", "oci://registry.example.com:80", false, false},
		{"oci://registry.example.com", "https://registry.example.com", false, false},
		{"https://charts.example.com/a", "https://charts.example.com:8443/a", false, false},
	} {
		err := checkDependencyRepositories([]DependencyRepository{{URL: tc.a}, {URL: tc.b}}, tc.plainHTTP)
		if got := err != nil; got != tc.duplicate {
			t.Errorf("plain_http %v: %s and %s refused: %v (%v), want %v", tc.plainHTTP, tc.a, tc.b, got, err, tc.duplicate)
		}
		if err != nil && !strings.Contains(err.Error(), "give each repository one entry") {
			t.Errorf("the error does not say what to do: %v", err)
		}
	}
}

func TestParseRepositoryURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://charts.example.com/private": "",
		"oci://registry.example.com":         "",
		"http://127.0.0.1:8080":              "",
		"charts.example.com":                 "is not an http://, https:// or oci:// URL",
		"ftp://charts.example.com":           "is not an http://, https:// or oci:// URL",
		"https://":                           "is not an http://, https:// or oci:// URL",
		"https://user:hunter22@example.com":  "has credentials in it",
		"https://user:hun ter@example.com/x": "has credentials in it",
		"https://example.com/x?token=1":      "has a query or a fragment",
		"https://example.com/x#y":            "has a query or a fragment",
	} {
		_, err := ParseRepositoryURL(raw)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", raw, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: error %v, want one saying %q", raw, err, want)
		case err != nil && (strings.Contains(err.Error(), "hunter22") || strings.Contains(err.Error(), "hun ter")):
			t.Errorf("%s: the error shows the password: %v", raw, err)
		}
	}
}

// A repository URL with credentials written in it that does not parse is
// refused without them, and the error says where they go: for the chart,
// repository_username and repository_password; for a dependency (whose URL
// comes from Chart.yaml), an entry of dependency_repositories.
func TestUnparsableURLWithCredentialsNamesWhereTheyGo(t *testing.T) {
	const secret = "s3cr%zzet" // %zz: not an escape, so the URL does not parse
	dep := (&dependencyBuilder{chart: Source{}, building: map[string]bool{}})
	for _, tc := range []struct {
		name, want string
		open       func() error
	}{
		{"the chart's repository", "give them as repository_username and repository_password", func() error {
			_, err := openHTTPRepository(Source{Repository: "https://user:" + secret + "@charts.example.com/stable"})
			return err
		}},
		{"a dependency's repository", "give them as a username and password for it in dependency_repositories", func() error {
			_, err := openHTTPRepository(dep.reach(Source{Repository: "https://user:" + secret + "@charts.example.com/stable"}))
			return err
		}},
		{"the chart's registry", "give them as repository_username and repository_password", func() error {
			_, err := openOCI(Source{Chart: "oci://user:" + secret + "@registry.example.com/charts/app"})
			return err
		}},
		{"a dependency's registry", "give them as a username and password for it in dependency_repositories", func() error {
			_, err := openOCI(dep.reach(Source{Repository: "oci://user:" + secret + "@registry.example.com/charts", Chart: "app"}))
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.open()
			if err == nil {
				t.Fatal("an unparsable URL was accepted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cr") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}
