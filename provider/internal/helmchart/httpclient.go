package helmchart

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Timeouts. A server that accepts and then says nothing is given up on
// within a minute; a whole request (the largest index or chart the limits
// allow, on a slow link) within requestTimeout, so that a transfer that
// stalls does not hold a plan forever when the caller's context has no
// deadline.
const (
	dialTimeout           = 30 * time.Second
	tlsHandshakeTimeout   = 15 * time.Second
	responseHeaderTimeout = 60 * time.Second
	requestTimeout        = 10 * time.Minute
	maxRedirects          = 10
)

// newHTTPClient is a client with the Source's TLS settings that keeps the
// Authorization header across a redirect only to credentialOrigin, or to
// anywhere when passEverywhere. Go already drops it on a redirect to another
// domain, but keeps it for the same host on another port, or from https to
// http; a repository's credentials belong to its scheme, host and port only
// (as Helm's pass_credentials=false).
//
// Helm's getter is not used: it ignores the context, has no limit on what it
// reads, and applies that rule to the first request but not to redirects.
func newHTTPClient(src Source, credentialOrigin *url.URL, passEverywhere bool) (*http.Client, error) {
	tlsConfig, err := tlsConfigFor(src)
	if err != nil {
		return nil, err
	}
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsConfig,
		TLSHandshakeTimeout:   tlsHandshakeTimeout,
		ResponseHeaderTimeout: responseHeaderTimeout,
		ForceAttemptHTTP2:     true,
		IdleConnTimeout:       30 * time.Second,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   requestTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			switch {
			case passEverywhere:
				// Go would drop them on a redirect to another domain.
				if auth := via[0].Header.Get("Authorization"); auth != "" {
					req.Header.Set("Authorization", auth)
				}
			case !sameOrigin(req.URL, credentialOrigin):
				req.Header.Del("Authorization")
			}
			return nil
		},
	}, nil
}

// sameOrigin compares scheme, host and port (the default port written or
// not) of two http(s) URLs. Host names compare in any case, as DNS does
// and as a dependency_repositories entry is matched (repositoryPrefix).
func sameOrigin(a, b *url.URL) bool {
	return a.Scheme == b.Scheme && strings.EqualFold(a.Hostname(), b.Hostname()) && portOf(a, false) == portOf(b, false)
}

// portOf is the port a request to u goes to: the one written, else the
// scheme's default, https's 443 and http's 80.
//
// An oci:// URL's default is the port the registry client (oras, told
// PlainHTTP as openOCI tells it) then connects to: 443 over HTTPS, and 80
// when plainHTTP says the registry is spoken to without TLS, since oras
// then asks http://host/v2/... . So oci://host matches oci://host:443 only
// where both mean the same server, and never matches oci://host:80 (or
// oci://host:443 over plain HTTP) where it is another port: credentials go
// to no port they did not go to before. Only comparisons use this; a URL is
// requested as written.
func portOf(u *url.URL, plainHTTP bool) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch {
	case u.Scheme == "https", u.Scheme == "oci" && !plainHTTP:
		return "443"
	case u.Scheme == "http", u.Scheme == "oci" && plainHTTP:
		return "80"
	}
	return ""
}

// tlsConfigFor trusts the system's roots and the Source's CA file, and
// presents the client certificate if there is one.
func tlsConfigFor(src Source) (*tls.Config, error) {
	config := &tls.Config{MinVersion: tls.VersionTLS12}
	if src.CAFile != "" {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		pem, err := os.ReadFile(src.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading the CA file: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the CA file %s holds no PEM certificate", src.CAFile)
		}
		config.RootCAs = pool
	}
	switch {
	case src.CertFile != "" && src.KeyFile != "":
		pair, err := tls.LoadX509KeyPair(src.CertFile, src.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("loading the client certificate %s and key %s: %w", src.CertFile, src.KeyFile, err)
		}
		config.Certificates = []tls.Certificate{pair}
	case src.CertFile != "" || src.KeyFile != "":
		return nil, errors.New("a client certificate needs both repository_cert_file and repository_key_file")
	}
	return config, nil
}
