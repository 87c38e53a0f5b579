package helmchart

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Errors name the arguments that fix them as k8sconnect_helm_template and
// k8sconnect_helm_release call them (repository_ca_file,
// repository_username, dependency_repositories, ...): which ones depends on
// whose server it is, the chart's own or a dependency's (credentialArgs).

// rewordedError has a message of its own in place of its cause's (which had
// a secret replaced, or says less well what happened). It keeps the cause for
// errors.Is and errors.As, but never prints it.
type rewordedError struct {
	msg   string
	cause error
}

func (e *rewordedError) Error() string { return e.msg }
func (e *rewordedError) Unwrap() error { return e.cause }

// redact is the last line of defence against a secret in an error: the
// messages this package writes never include one, but a library's message
// might quote a request or a URL it was given.
func redact(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	changed := false
	for _, secret := range secrets {
		// A very short password would blank out unrelated words; it is
		// still never written by this package.
		if len(secret) < 3 || !strings.Contains(msg, secret) {
			continue
		}
		msg = strings.ReplaceAll(msg, secret, "<redacted>")
		changed = true
	}
	if !changed {
		return err
	}
	return &rewordedError{msg: msg, cause: err}
}

// splitUserinfo takes user:password@ out of a URL. ok is false when the
// string is not a URL or has no userinfo.
func splitUserinfo(raw string) (clean, user, pass string, ok bool) {
	if !strings.Contains(raw, "://") || !strings.Contains(raw, "@") {
		return raw, "", "", false
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw, "", "", false
	}
	user = u.User.Username()
	pass, _ = u.User.Password()
	u.User = nil
	return u.String(), user, pass, true
}

// hideUserinfo is raw, a string that may not parse as a URL, without what
// sits between its scheme and an "@" before its path: for quoting in an
// error a URL whose credentials could not be taken out by parsing it.
func hideUserinfo(raw string) string {
	scheme := strings.Index(raw, "://")
	if scheme < 0 {
		return raw
	}
	rest := raw[scheme+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		return raw[:scheme+3] + rest[at+1:]
	}
	return raw
}

// displayURL is u as errors show it: never with userinfo.
func displayURL(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// transportError explains why a request to what (a URL without userinfo)
// did not get an answer, with what to do about it when that is known; args
// name the arguments behind the TLS files used.
func transportError(ctx context.Context, what string, err error, args credentialArgs) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("fetching %s: %w", what, ctxErr)
	}
	// url.Error repeats the URL, possibly with userinfo that Go only masks;
	// the caller has already named it.
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err
	}
	var unknownAuthority x509.UnknownAuthorityError
	var verification *tls.CertificateVerificationError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.Is(err, http.ErrSchemeMismatch):
		return fmt.Errorf("%s answers in plain HTTP, not HTTPS (%w): for an oci:// registry without TLS set plain_http = true; "+
			"for an HTTP repository or chart URL write http://", what, err)
	case refusedClientCertificate(err):
		return fmt.Errorf("TLS: %s did not accept the client certificate (%w): %s", what, err, args.clientCert)
	case errors.As(err, &hostname):
		return fmt.Errorf("TLS: the certificate of %s is not valid for its host name (%w)", what, err)
	case errors.As(err, &unknownAuthority), errors.As(err, &verification), errors.As(err, &invalid):
		return fmt.Errorf("TLS: the certificate of %s is not trusted (%w): %s", what, err, args.caFile)
	}
	return fmt.Errorf("cannot reach %s: %w", what, err)
}

// refusedClientCertificate reports whether the server ended the handshake
// with the alert for a missing or unacceptable client certificate. Go reports
// an alert from the server as a net.OpError "remote error" around an
// unexported type, so only its text tells which alert it was.
func refusedClientCertificate(err error) bool {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" || op.Err == nil {
		return false
	}
	text := op.Err.Error()
	return strings.HasSuffix(text, "certificate required") || strings.HasSuffix(text, "bad certificate")
}

// credentialArgs names, for a 401 or 403 or a TLS handshake that failed, the
// arguments behind a server's credentials and TLS files: a dependency's come
// from elsewhere than the chart's own, and the error must send the user to
// the argument that fixes it.
type credentialArgs struct {
	// sent names where the credentials that were sent came from.
	sent string
	// toSet says what to set when none were sent.
	toSet string
	// caFile says what to set (or check) when the server's certificate is
	// not trusted.
	caFile string
	// clientCert says what to set (or check) when the server refused the
	// client certificate, or wanted one.
	clientCert string
}

// chartCredentials are the arguments of the chart's own repository,
// registry or URL.
var chartCredentials = credentialArgs{
	sent:       "repository_username and repository_password",
	toSet:      "repository_username and repository_password",
	caFile:     "set repository_ca_file to the PEM file of the CA that signed it",
	clientCert: "set repository_cert_file and repository_key_file to one it trusts",
}

// statusError explains an HTTP answer other than 200 from what. notFound is
// what a 404 means there; args name the arguments behind the credentials.
func statusError(what string, status int, sentCredentials bool, notFound string, args credentialArgs) error {
	text := fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	switch {
	case status == http.StatusUnauthorized && sentCredentials:
		return fmt.Errorf("%s refused the credentials (%s): check %s", what, text, args.sent)
	case status == http.StatusUnauthorized:
		return fmt.Errorf("%s requires credentials (%s): set %s", what, text, args.toSet)
	case status == http.StatusForbidden && sentCredentials:
		return fmt.Errorf("%s denied access to these credentials (%s), from %s", what, text, args.sent)
	case status == http.StatusForbidden:
		return fmt.Errorf("%s denied access (%s): it may require %s", what, text, args.toSet)
	case status == http.StatusNotFound && notFound != "":
		return fmt.Errorf("%s: %s (%s)", what, notFound, text)
	}
	return fmt.Errorf("%s answered %s", what, text)
}
