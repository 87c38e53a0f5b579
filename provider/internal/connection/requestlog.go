package connection

import (
	"fmt"
	"net/http"
	"os"
	"sync"
)

// EnvRequestLog names a file to which the provider appends one line per API
// request: method and path with query, never headers or bodies (no credentials).
// The request-count test and `make bench` read it; users can too, to see what a
// plan costs.
const EnvRequestLog = "K8SCONNECT_REQUEST_LOG"

type requestLog struct {
	mu   sync.Mutex
	file *os.File
	next http.RoundTripper
}

func (l *requestLog) RoundTrip(req *http.Request) (*http.Response, error) {
	l.mu.Lock()
	fmt.Fprintf(l.file, "%s %s\n", req.Method, req.URL.RequestURI())
	l.mu.Unlock()
	return l.next.RoundTrip(req)
}

var (
	requestLogOnce sync.Once
	requestLogFile *os.File
)

// requestLogWrapper returns a transport wrapper when EnvRequestLog is set.
func requestLogWrapper() func(http.RoundTripper) http.RoundTripper {
	path := os.Getenv(EnvRequestLog)
	if path == "" {
		return nil
	}
	requestLogOnce.Do(func() {
		requestLogFile, _ = os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	})
	if requestLogFile == nil {
		return nil
	}
	return func(next http.RoundTripper) http.RoundTripper {
		return &requestLog{file: requestLogFile, next: next}
	}
}
