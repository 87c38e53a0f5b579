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
		if e := dependencyRepositoryFor(entries, u); e != nil {
			got = e.URL
		}
		if got != want {
			t.Errorf("%s is covered by %q, want %q", repository, got, want)
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
