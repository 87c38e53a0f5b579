package connection

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
