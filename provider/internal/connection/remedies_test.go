package connection

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

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
