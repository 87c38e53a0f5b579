package connection

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/k8sconnect/k8sconnect/internal/testing/pki"
)

// Which connections may name a cluster by the CA of their handshake: only
// those with a CA bundle of their own.
func TestHandshakeCAsOnlyForAConnectionsOwnCA(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  rest.Config
		want string // "" when the handshake names the cluster
	}{
		{"CA data", rest.Config{Host: "https://a:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("x")}}, ""},
		{"CA file", rest.Config{Host: "https://a:6443", TLSClientConfig: rest.TLSClientConfig{CAFile: "/ca.crt"}}, ""},
		{"insecure", rest.Config{Host: "https://a:6443", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, "insecure"},
		{"plain HTTP", rest.Config{Host: "http://a:8080", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("x")}}, "plain HTTP"},
		{"system CAs", rest.Config{Host: "https://a:6443"}, "system's CAs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, why := handshakeFor(&tc.cfg)
			if tc.want == "" && (h == nil || why != "") {
				t.Fatalf("want a handshake recorder, got %v (%q)", h, why)
			}
			if tc.want != "" && (h != nil || !strings.Contains(why, tc.want)) {
				t.Fatalf("want no recorder because %q, got %v (%q)", tc.want, h, why)
			}
		})
	}
}

// The recorder sees the CA that verified a real TLS handshake; a serving
// certificate renewed by the same CA gives the same fingerprint, another CA
// another one.
func TestHandshakeCAsRecordTheVerifyingCA(t *testing.T) {
	ca, err := pki.NewCA("identity test CA")
	if err != nil {
		t.Fatal(err)
	}
	var serving tls.Certificate
	renew := func(by *pki.KeyPair) {
		leaf, err := by.Loopback("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		serving = leaf.TLS()
	}
	renew(ca)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden) // an answer of any kind carries the handshake
	}))
	srv.TLS = &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &serving, nil }}
	srv.StartTLS()
	defer srv.Close()
	srv.TLS.Certificates = nil // StartTLS adds its own, which would win over GetCertificate

	seen := func(caPEM []byte) []string {
		t.Helper()
		cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}}
		h, _ := handshakeFor(cfg)
		cfg.Wrap(h.wrap)
		rt, err := rest.TransportFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/namespaces/kube-system", nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatalf("%d bytes of CA: %v", len(caPEM), err)
		}
		_ = resp.Body.Close()
		return h.get()
	}
	want := fingerprint(ca.Cert.Raw)
	if got := seen(ca.CertPEM); len(got) != 1 || got[0] != want {
		t.Fatalf("anchors = %v, want [%s]", got, want)
	}
	renew(ca)
	if got := seen(ca.CertPEM); len(got) != 1 || got[0] != want {
		t.Fatalf("after renewing the serving certificate anchors = %v, want [%s]", got, want)
	}
	other, err := pki.NewCA("identity test CA, rotated")
	if err != nil {
		t.Fatal(err)
	}
	renew(other)
	bundle := append(append([]byte{}, ca.CertPEM...), other.CertPEM...) // old and new trusted during a rotation
	if got := seen(bundle); len(got) != 1 || got[0] != fingerprint(other.Cert.Raw) {
		t.Fatalf("after rotating the CA anchors = %v, want the new CA only", got)
	}
	if got := pemFingerprints(bundle); len(got) != 2 || got[0] != want {
		t.Fatalf("pemFingerprints(bundle) = %v, want the old CA first, then the new", got)
	}
}
