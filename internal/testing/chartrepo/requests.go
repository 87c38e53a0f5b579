package chartrepo

import (
	"crypto/subtle"
	"net/http"
	"strings"
	"sync"
)

// Request is one request a server got.
type Request struct {
	Method string
	Path   string
	// Authorization is whether the request carried an Authorization header
	// at all, right or wrong.
	Authorization bool
	// Status is the status code of the answer.
	Status int
}

// Authorized counts the requests that carried an Authorization header.
func Authorized(requests []Request) int {
	n := 0
	for _, r := range requests {
		if r.Authorization {
			n++
		}
	}
	return n
}

// statusRecorder writes the status a handler answers with into the log
// before the answer leaves, so a client never sees an answer the log lacks.
type statusRecorder struct {
	http.ResponseWriter
	log     *requestLog
	entry   int
	written bool
}

func (s *statusRecorder) WriteHeader(status int) {
	if !s.written {
		s.written = true
		s.log.mu.Lock()
		s.log.requests[s.entry].Status = status
		s.log.mu.Unlock()
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if !s.written {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

// requestLog records requests and guards them with basic auth.
type requestLog struct {
	mu       sync.Mutex
	requests []Request
	username string
	password string
}

// wrap logs every request to next and, when a username or password is set,
// answers 401 to those without them.
func (l *requestLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.requests = append(l.requests, Request{Method: r.Method, Path: r.URL.Path, Authorization: r.Header.Get("Authorization") != ""})
		w := &statusRecorder{ResponseWriter: rw, log: l, entry: len(l.requests) - 1}
		username, password := l.username, l.password
		l.mu.Unlock()
		if username != "" || password != "" {
			user, pass, ok := r.BasicAuth()
			if !ok || subtle.ConstantTimeCompare([]byte(user), []byte(username)) != 1 ||
				subtle.ConstantTimeCompare([]byte(pass), []byte(password)) != 1 {
				w.Header().Set("WWW-Authenticate", `Basic realm="chartrepo"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// SetPassword changes the password the server requires from now on, as a
// rotated credential.
func (l *requestLog) SetPassword(password string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.password = password
}

// Requests is every request so far, oldest first.
func (l *requestLog) Requests() []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Request(nil), l.requests...)
}

// Count is how many requests so far had a path containing part.
func (l *requestLog) Count(part string) int {
	n := 0
	for _, r := range l.Requests() {
		if strings.Contains(r.Path, part) {
			n++
		}
	}
	return n
}
