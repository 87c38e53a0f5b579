package connection

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Only the API server's own NotFound, naming the object, means the object is
// gone; an HTML 404 from whatever stands in front of the server does not.
func TestGoneOnlyOnTheServersNotFoundOfTheObject(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"the server's NotFound", apierrors.NewNotFound(gr, "web"), true},
		{"the server's NotFound, wrapped", fmt.Errorf("reading it: %w", apierrors.NewNotFound(gr, "web")), true},
		{"a NotFound of another object", apierrors.NewNotFound(gr, "api"), false},
		{"an ingress's HTML 404", apierrors.NewGenericServerResponse(404, "GET", gr, "web",
			"<html><body>404 Not Found</body></html>", 0, true), false},
		{"a 403", apierrors.NewForbidden(gr, "web", errors.New("no")), false},
		{"no error", nil, false},
	} {
		if got := Gone(tc.err, "web"); got != tc.want {
			t.Errorf("%s: Gone = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A 404 turned into no verdict is no NotFound for any caller, says what
// answered, and carries a remedy that names the host to check.
func TestNoVerdictNotFoundIsNoNotFound(t *testing.T) {
	html := apierrors.NewGenericServerResponse(404, "DELETE", schema.GroupResource{Resource: "configmaps"}, "web",
		"<html><body>404 Not Found</body></html>", 0, true)
	err := fmt.Errorf("deleting it: %w", &NoVerdictNotFound{Object: "v1/ConfigMap ns/web", Err: html})
	if !Unreachable(html) {
		t.Error("an HTML 404 reads as the server's verdict (Unreachable is false)")
	}
	if Unreachable(apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "web")) {
		t.Error("the server's own NotFound reads as no verdict")
	}
	if apierrors.IsNotFound(err) || Gone(err, "web") || !NoVerdict(err) || !Unreachable(err) {
		t.Errorf("IsNotFound %v, Gone %v, NoVerdict %v, Unreachable %v: want a failure that is no verdict",
			apierrors.IsNotFound(err), Gone(err, "web"), NoVerdict(err), Unreachable(err))
	}
	if !strings.Contains(err.Error(), "v1/ConfigMap ns/web") || !strings.Contains(Remedy(err), "cluster_connection.host") {
		t.Errorf("the error or its remedy does not say what to check: %v\n%s", err, Remedy(err))
	}
}

// "Unknown kind" only for a kind discovery answered without; a discovery
// that fails is named so.
func TestKindSummary(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"no match", &meta.NoKindMatchError{GroupKind: schema.GroupKind{Kind: "Foo"}}, "Unknown kind"},
		{"a core kind misspelled", unknownKind{errors.New("the cluster does not serve kind \"Confgmap\"")}, "Unknown kind"},
		{"discovery lists no core kind", discoveryFailing{errors.New("GET /api answered 404")}, DiscoveryFailed},
		{"discovery failed", fmt.Errorf("discovering v1: %w", errors.New("connection reset")), DiscoveryFailed},
	} {
		if got := KindSummary(tc.err); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
