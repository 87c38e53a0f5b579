package ssa

import (
	"context"
	"errors"
	"net/url"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Which failed applies and deletes are sent again by their caller: not a 429
// or 503, which the transport (or client-go, with Retry-After) has already
// sent again, so that a server that stays busy fails in one budget, not two.
func TestTransientLeavesBusyAnswersToTheTransport(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"429", apierrors.NewTooManyRequests("slow down", 0), false},
		{"503", apierrors.NewServiceUnavailable("no backend"), false},
		{"500", apierrors.NewInternalError(errors.New("etcd")), true},
		{"504", apierrors.NewTimeoutError("no answer in time", 0), true},
		{"server timeout", apierrors.NewServerTimeout(gr, "patch", 0), true},
		{"a broken connection", &url.Error{Op: "Patch", URL: "https://cluster", Err: errors.New("connection reset by peer")}, true},
		{"422", apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "cm", nil), false},
		{"cancelled", context.Canceled, false},
	} {
		if got := Transient(tc.err); got != tc.want {
			t.Errorf("%s: Transient = %v, want %v", tc.name, got, tc.want)
		}
	}
}
