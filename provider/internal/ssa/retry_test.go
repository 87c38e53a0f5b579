package ssa

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
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
		// A 500 that is the server's verdict on the body: sent again, it fails again.
		{"a value of the wrong type", apierrors.NewInternalError(errors.New("failed to create typed patch object " +
			"(ns/cm; /v1, Kind=ConfigMap): .data.x: expected string, got &value.valueUnstructured{Value:true}")), false},
		{"504", apierrors.NewTimeoutError("no answer in time", 0), true},
		{"server timeout", apierrors.NewServerTimeout(gr, "patch", 0), true},
		{"a broken connection", &url.Error{Op: "Patch", URL: "https://cluster", Err: errors.New("connection reset by peer")}, true},
		{"422", apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "cm", nil), false},
		{"a write whose answer was lost", &url.Error{Op: "Patch", URL: "https://cluster",
			Err: &connection.NetworkError{Method: "PATCH", Write: true, Attempts: 1, Err: syscall.ECONNRESET}}, true},
		// The connection had answered nothing for a budget: not sent.
		{"a write not sent", &url.Error{Op: "Patch", URL: "https://cluster",
			Err: &connection.NetworkError{Method: "PATCH", Write: true, Err: syscall.ECONNRESET}}, false},
		// The transport sent it again for its whole budget already.
		{"a read that got no answer", &url.Error{Op: "Get", URL: "https://cluster",
			Err: &connection.NetworkError{Method: "GET", Attempts: 9, Err: syscall.ECONNRESET}}, false},
		// The connection's configuration is at fault: no retry mends it.
		{"a certificate of an unknown CA", &url.Error{Op: "Patch", URL: "https://cluster",
			Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}, false},
		{"a client certificate the server refuses", &url.Error{Op: "Patch", URL: "https://cluster",
			Err: &net.OpError{Op: "remote error", Err: errors.New("tls: bad certificate")}}, false},
		{"an exec plugin that fails", &url.Error{Op: "Patch", URL: "https://cluster",
			Err: errors.New("getting credentials: exec: executable get-token not found")}, false},
		{"cancelled", context.Canceled, false},
		// The server asked for a wait longer than the budget had left: the
		// same request sent again now is told the same.
		{"a server timeout whose Retry-After is past the budget", &url.Error{Op: "Patch", URL: "https://cluster",
			Err: &connection.ThrottledError{Method: "PATCH", Code: 500, RetryAfter: time.Minute,
				Server: &metav1.Status{Reason: metav1.StatusReasonServerTimeout}}}, false},
	} {
		if got := Transient(tc.err); got != tc.want {
			t.Errorf("%s: Transient = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A write whose answer the network keeps losing is sent again within the
// budget its error states, not for the whole RetryWindow.
func TestRetry_networkFailureEndsAtTheBudget(t *testing.T) {
	const budget = 600 * time.Millisecond
	begin := time.Now()
	calls := 0
	err := Retry(context.Background(), Transient, func(context.Context) error {
		calls++
		return &url.Error{Op: "Patch", URL: "https://cluster",
			Err: &connection.NetworkError{Method: "PATCH", Write: true, Attempts: 1, Budget: budget, Elapsed: 50 * time.Millisecond,
				Err: syscall.ECONNRESET}}
	})
	took := time.Since(begin)
	if err == nil || calls < 2 {
		t.Fatalf("want the write sent again and then failed, got %d call(s) and %v", calls, err)
	}
	if took > budget+100*time.Millisecond {
		t.Fatalf("Retry gave up after %s, with a budget of %s", took, budget)
	}
}
