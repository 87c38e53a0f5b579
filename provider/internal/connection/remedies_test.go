package connection

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

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
		{"a value of the wrong type", apierrors.NewInternalError(errors.New("failed to create typed patch object " +
			"(ns/extra; /v1, Kind=ConfigMap): .data.x: expected string, got &value.valueUnstructured{Value:true}")),
			"quote it in YAML"},
		{"no answer", &url.Error{Op: "Get", URL: "https://cluster/api", Err: context.DeadlineExceeded}, "did not answer as expected"},
		{"a client certificate the server refuses", &url.Error{Op: "Get", URL: "https://cluster/api",
			Err: &net.OpError{Op: "remote error", Err: errors.New("tls: bad certificate")}}, "client_certificate"},
		{"a read given up after its budget", &url.Error{Op: "Get", URL: "https://cluster/api",
			Err: &NetworkError{Method: "GET", Path: "/api", Attempts: 7, Budget: 7 * time.Second, Err: syscall.ECONNRESET}},
			"tried for up to 7s (cluster_connection.request_timeout)"},
		{"a read not sent, the last attempt refused", &url.Error{Op: "Get", URL: "https://cluster/api",
			Err: &NetworkError{Method: "GET", Path: "/api", Silent: time.Minute, Err: syscall.ECONNREFUSED}}, "Check cluster_connection.host"},
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
