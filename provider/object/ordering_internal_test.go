package object

import (
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Only the API server's NotFound of the namespace itself makes an apply or
// a plan wait for a namespace the run creates; any other 404 is no verdict.
func TestWaitsForOrdering_namespaceOnlyByTheServersWord(t *testing.T) {
	namespaces := schema.GroupResource{Resource: "namespaces"}
	configMaps := schema.GroupResource{Resource: "configmaps"}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"the server's NotFound of the namespace", apierrors.NewNotFound(namespaces, "apps"), true},
		{"wrapped", fmt.Errorf("dry run: %w", apierrors.NewNotFound(namespaces, "apps")), true},
		{"another namespace", apierrors.NewNotFound(namespaces, "other"), false},
		{"the object's own NotFound, named as the namespace", apierrors.NewNotFound(configMaps, "apps"), false},
		// client-go's dress for a 404 whose body is no Status: an
		// ingress's page in front of the server.
		{"an HTML 404", apierrors.NewGenericServerResponse(404, "PATCH", namespaces, "apps", "<html>404</html>", 0, true), false},
		{"a 403", apierrors.NewForbidden(namespaces, "apps", fmt.Errorf("no")), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := waitsForOrdering(tc.err, "apps"); got != tc.want {
				t.Fatalf("waitsForOrdering(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
	if waitsForOrdering(apierrors.NewNotFound(namespaces, ""), "") {
		t.Fatal("a cluster-scoped object waits for no namespace")
	}
}
