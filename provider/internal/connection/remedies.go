package connection

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Unreachable reports an error that says nothing about whether an object
// exists: the credentials were refused, the server failed or did not answer.
// Such an error must never be read as "the object is gone".
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true // no answer from the server at all
	}
	if ContentRefused(err) {
		return false // the server's verdict on what was sent
	}
	code := status.Status().Code
	return code == http.StatusUnauthorized || code == http.StatusForbidden || code >= 500 ||
		apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) ||
		foreignNotFound(status)
}

// foreignNotFound reports a 404 whose body was no Status of the API server's
// (an ingress's or a load balancer's page): client-go marks it as an
// unexpected answer. Something in front of the server answered, so it is no
// verdict on anything.
func foreignNotFound(status apierrors.APIStatus) bool {
	s := status.Status()
	if s.Code != http.StatusNotFound || s.Details == nil {
		return false
	}
	for _, c := range s.Details.Causes {
		if c.Type == metav1.CauseTypeUnexpectedServerResponse {
			return true
		}
	}
	return false
}

// Explain is err's text, followed by its RequestRemedy when it has one.
func Explain(err error) string {
	if remedy := RequestRemedy(err); remedy != "" {
		return err.Error() + "\n\n" + remedy
	}
	return err.Error()
}

// RequestRemedy is err's Remedy when err came from a request to the cluster
// (an API status, or a request that got no answer), else "". It is for a step
// whose errors may be of another kind too (a chart's template, a hook's Job,
// a release record that names another owner), which Remedy's last case would
// call an unreachable cluster.
func RequestRemedy(err error) string {
	var status apierrors.APIStatus
	var request *url.Error
	var network net.Error
	if err != nil && (errors.As(err, &status) || errors.As(err, &request) || errors.As(err, &network) ||
		IsNetworkFailure(err) || noServer(err) || Misconfigured(err)) {
		return Remedy(err)
	}
	return ""
}

// Remedy says what a user can do about an error from the cluster, or "" when
// the error speaks for itself.
func Remedy(err error) string {
	switch {
	case Throttled(err):
		return throttledRemedy(err)
	case NoVerdict(err):
		return "Something in front of the API server (an ingress, a load balancer or a proxy) answered in its place, " +
			"or the server does not route this path: a 404 counts as \"gone\" only when the API server's answer names " +
			"the object. Nothing was decided about the object: it is neither taken out of state nor counted as deleted. " +
			"Check that cluster_connection.host " +
			"is the API server's address (`kubectl get --raw /api` through the same connection answers JSON), and " +
			"run again."
	case apierrors.IsTooManyRequests(err):
		return "The API server, or a gateway or rate limiter in front of it, is throttling requests (429 Too Many " +
			"Requests) and kept turning this one away for " + budgetOf(err) + ". Nothing was decided about the " +
			"object. Run again when the cluster is less busy (fewer runs at once, or a lower -parallelism), or give " +
			"cluster_connection.request_timeout more time."
	case apierrors.IsServiceUnavailable(err):
		return "The API server is unavailable (503 Service Unavailable: it is starting or shutting down, or the load " +
			"balancer in front of it has no healthy server) and kept answering so for " + budgetOf(err) + ". " +
			"Nothing was decided about the object; run again when the control plane is back."
	case apierrors.IsUnauthorized(err):
		return "The cluster refused the credentials (401 Unauthorized): a token or client certificate has " +
			"probably expired. Renew it (for example log in again, or refresh the kubeconfig) and run again."
	case apierrors.IsForbidden(err):
		return "The credentials are valid but not allowed to do this (403 Forbidden). Check the RBAC rules " +
			"for this user, or use a context with more rights."
	case execPluginFailed(err):
		return "The exec credential plugin (cluster_connection.exec, or users[].user.exec in the kubeconfig) " +
			"failed, so nothing was sent to the cluster. Check that its command is installed and on PATH and " +
			"that it prints a token when run by hand (for example, that you are logged in to the cloud provider)."
	case untrustedServer(err):
		return "The API server's certificate is not trusted by this connection's CA (or does not name the host), " +
			"so nothing was sent. Check that cluster_connection.cluster_ca_certificate (or the kubeconfig's " +
			"certificate-authority-data) is the CA of the cluster that host points at, and that host is the " +
			"cluster's address."
	case handshakeRefused(err):
		return "The TLS handshake with the API server failed, so nothing was sent: the server did not accept this " +
			"connection's client certificate, or does not speak TLS at that address. Check " +
			"cluster_connection.client_certificate and client_key (or the kubeconfig's user) and that host is the " +
			"API server's https:// address."
	case ContentRefused(err):
		return "The API server refused the object's content: a field holds a value of another type than the " +
			"kind's schema says (a number or a boolean where a string belongs: quote it in YAML, as in " +
			"\"true\" or \"8080\"). Fix the manifest; running again as it is would fail the same way."
	case noServer(err):
		return "Nothing answered at the API server's address (connection refused, or the host name is unknown). " +
			"Check cluster_connection.host (or the server of the kubeconfig's cluster) and that the cluster is " +
			"running. Nothing was decided from this answer; run again when the cluster is reachable."
	case IsNetworkFailure(err):
		return "The network failed: the connection to the API server broke or timed out before an answer came. " +
			"Reads and dry runs were tried for up to " + budgetOf(err) + " before giving up, and writes until " +
			"the connection had answered nothing for as long; a write whose outcome is unknown is settled by " +
			"reading the object on the next attempt. Check what lies " +
			"between here and the cluster (a proxy, VPN, load balancer or firewall that cuts connections). " +
			"Nothing was decided from this failure; run again when the cluster is reachable: a rerun picks up " +
			"where this one stopped."
	case err != nil && Unreachable(err):
		return "The cluster did not answer as expected (a server error, a timeout or a broken connection). " +
			"Nothing was decided from this answer; run again when the cluster is reachable."
	}
	return ""
}

// throttledRemedy is Remedy's advice for a ThrottledError: the server asked
// for a wait longer than was left.
func throttledRemedy(err error) string {
	var te *ThrottledError
	errors.As(err, &te)
	what := "is throttling requests (429 Too Many Requests: the API server's priority and fairness, or a rate limiter " +
		"in front of it)"
	if te.Code != http.StatusTooManyRequests {
		what = fmt.Sprintf("cannot take requests for now (%d %s)", te.Code, http.StatusText(te.Code))
	}
	wait := "give cluster_connection.request_timeout more than the " + te.RetryAfter.String() +
		" the server asks for, so that a request waits as long as it says"
	if te.ByDeadline {
		wait = "give the operation's timeouts more time than the " + te.RetryAfter.String() + " the server asks for"
	}
	return "The API server " + what + " and asked to be sent the request again later than this request could wait, " +
		"so it was not sent again. Nothing was decided about the object. Run again when the cluster is less busy, " +
		"or " + wait + "."
}

// ContentRefused reports the answer Server-Side Apply gives a body it cannot
// type against the kind's schema (a boolean where a string belongs): a 500,
// yet the server's verdict on the object, not a server fault, so it is
// neither retried nor reported as an unreachable cluster.
func ContentRefused(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Code != http.StatusInternalServerError {
		return false
	}
	return strings.Contains(status.Status().Message, "failed to create typed patch object")
}

// budgetOf names the budget a request that got no answer was tried within.
// BudgetEnd is when the budget (cluster_connection.request_timeout) of the
// request that err, a network failure, ended ran out, counted from when that
// request was first sent; ok is false for any other error.
func BudgetEnd(err error) (end time.Time, ok bool) {
	var ne *NetworkError
	if !errors.As(err, &ne) || ne.Budget <= 0 {
		return time.Time{}, false
	}
	return time.Now().Add(ne.Budget - ne.Elapsed), true
}

func budgetOf(err error) string {
	var ne *NetworkError
	if errors.As(err, &ne) && ne.Budget > 0 {
		return ne.Budget.String() + " (cluster_connection.request_timeout)"
	}
	return "cluster_connection.request_timeout (" + DefaultRequestTimeout.String() + " unless set)"
}

// noServer reports that nothing listens at the address, or the name does not
// resolve: a wrong host as often as a cluster that is down.
func noServer(err error) bool {
	var dns *net.DNSError
	var ne *NetworkError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dns) || (errors.As(err, &ne) && ne.refused())
}

// Misconfigured reports a failure that no retry mends, because the
// connection's configuration is at fault: the TLS handshake failed (the
// server's certificate did not verify, the server refused the client's
// certificate, or it does not speak TLS), or the exec credential plugin
// failed. Nothing was sent; Remedy says what to check.
func Misconfigured(err error) bool {
	if err == nil {
		return false
	}
	return untrustedServer(err) || handshakeRefused(err) || execPluginFailed(err)
}

// handshakeRefused reports a TLS handshake that the server broke off with an
// alert (a client certificate it does not accept), or that found no TLS at
// the address at all.
func handshakeRefused(err error) bool {
	var record tls.RecordHeaderError
	var op *net.OpError
	return errors.As(err, &record) || (errors.As(err, &op) && op.Op == "remote error" && strings.Contains(op.Error(), "tls: "))
}

// Exhausted reports a request that got no answer for its whole budget: a
// read or dry run the transport sent again until the budget ran out, or a
// write it did not send at all because the connection had answered nothing
// for a budget. Sending either again at once would only stretch the budget
// the error states. A write that was sent and lost its answer is not
// exhausted: its outcome is unknown, and the caller settles it (sends an
// apply again, reads after a delete) while the connection still answers.
func Exhausted(err error) bool {
	var ne *NetworkError
	return errors.As(err, &ne) && (!ne.Write || ne.Attempts == 0)
}

// execPluginFailed reports a failure of the exec credential plugin, which
// client-go reports as "getting credentials: ...".
func execPluginFailed(err error) bool {
	return err != nil && strings.Contains(err.Error(), "getting credentials: ")
}

// untrustedServer reports a TLS handshake that failed because the server's
// certificate did not verify: a wrong CA or host, not a cluster that is down.
func untrustedServer(err error) bool {
	var verify *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.As(err, &verify) || errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &invalid)
}
