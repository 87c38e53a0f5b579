package connection

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/k8sconnect/k8sconnect/internal/testing/pki"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
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

func TestIdentitySourcesAndMessages(t *testing.T) {
	for identity, want := range map[string]source{
		"": noIdentity, "6f1c1b0e-0000-4000-8000-000000000000": fromKubeSystem,
		tlsCAPrefix + "ab": fromTLSCA, rootCAPrefix + "cd": fromRootCA,
	} {
		if got := sourceOf(identity); got != want {
			t.Errorf("sourceOf(%q) = %v, want %v", identity, got, want)
		}
	}
	uid := (&OtherClusterError{Object: "ConfigMap a/b", Recorded: "uid-1", Reaching: "uid-2", Host: "https://h"}).Error()
	if !strings.Contains(uid, "kube-system namespace has UID uid-1") || strings.Contains(uid, "rotated") {
		t.Errorf("a UID refusal: %s", uid)
	}
	ca := (&OtherClusterError{Object: "ConfigMap a/b", Recorded: tlsCAPrefix + "old", Reaching: tlsCAPrefix + "new", Host: "https://h"}).Error()
	for _, want := range []string{"different cluster", "fingerprint old", "fingerprint new", "CA was rotated", "state rm", "import"} {
		if !strings.Contains(ca, want) {
			t.Errorf("a CA refusal lacks %q: %s", want, ca)
		}
	}
}

// A remedy is for what the cluster answered, or failed to: an error of
// another kind (a chart's template, a hook's Job) gets none, where Remedy
// alone would call it an unreachable cluster.
func TestRequestRemedyOnlyForTheClustersAnswers(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	cases := []struct {
		name string
		err  error
		want string // a part of the remedy; "" for none
	}{
		{"403", fmt.Errorf("applying: %w", apierrors.NewForbidden(gr, "settings", errors.New("rbac"))), "RBAC"},
		{"401", apierrors.NewUnauthorized("expired"), "expired"},
		{"500", apierrors.NewInternalError(errors.New("etcd")), "did not answer as expected"},
		{"no answer", &url.Error{Op: "Get", URL: "https://cluster/api", Err: context.DeadlineExceeded}, "did not answer as expected"},
		{"a template", errors.New(`template: app/templates/cm.yaml:4: function "nope" not defined`), ""},
		{"a hook's Job", errors.New("hook app-migrate: Job failed: BackoffLimitExceeded"), ""},
		{"no error", nil, ""},
	}
	for _, tc := range cases {
		got := RequestRemedy(tc.err)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: RequestRemedy = %q, want one containing %q", tc.name, got, tc.want)
		}
	}
	if got := Explain(errors.New("hook failed")); got != "hook failed" {
		t.Errorf("Explain of a hook's failure added a remedy: %q", got)
	}
}

// memoryPrivate is a private state held in a map.
type memoryPrivate map[string][]byte

func (m memoryPrivate) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) {
	return m[key], nil
}
func (m memoryPrivate) SetKey(_ context.Context, key string, value []byte) diag.Diagnostics {
	m[key] = value
	return nil
}

// What an apply or refresh keeps is what the next check compares after
// cluster_uid; an unconfirmed check keeps what was there, and cluster_uid is
// not repeated among the others.
func TestRecordedIdentitiesRoundTrip(t *testing.T) {
	ctx := context.Background()
	private := memoryPrivate{}
	if got := RecordedIn(ctx, "uid-1", private); len(got.Also) != 0 || got.Identity != "uid-1" {
		t.Fatalf("nothing kept yet: %+v", got)
	}
	seen := []string{"uid-1", tlsCAPrefix + "aa", rootCAPrefix + "bb"}
	if d := Record(ctx, private, ClusterCheck{Identity: "uid-1", Seen: seen}); d.HasError() {
		t.Fatal(d)
	}
	if got := RecordedIn(ctx, "uid-1", private); !slices.Equal(got.Also, seen[1:]) {
		t.Fatalf("kept %v, want %v", got.Also, seen[1:])
	}
	if raw := string(private[privatestate.ClusterIdentities]); strings.Contains(raw, "uid-1") {
		t.Errorf("private state repeats cluster_uid, which state holds: %s", raw)
	}
	Record(ctx, private, ClusterCheck{Identity: "uid-1", Seen: []string{"uid-1"}})
	if got := RecordedIn(ctx, "uid-1", private); !slices.Equal(got.Also, seen[1:]) {
		t.Fatalf("a check that saw only cluster_uid replaced what was kept: %v", got.Also)
	}
	Record(ctx, private, ClusterCheck{Identity: "uid-1", Seen: []string{tlsCAPrefix + "cc"}, Unconfirmed: "could not compare"})
	if got := RecordedIn(ctx, "uid-1", private); !slices.Equal(got.Also, seen[1:]) {
		t.Fatalf("an unconfirmed check replaced what was kept: %v", got.Also)
	}
	if got := RecordedIn(ctx, "", private); len(got.Also) != 0 {
		t.Fatalf("no cluster_uid, yet others to compare: %v", got.Also)
	}
	private[privatestate.ClusterIdentities] = []byte("not json")
	if got := RecordedIn(ctx, "uid-1", private); len(got.Also) != 0 || got.Identity != "uid-1" {
		t.Fatalf("an unreadable list: %+v", got)
	}
}
