package main

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// stateServer is the remote end of Terraform's and OpenTofu's `http` backend,
// on loopback in the bench's own process: GET and POST of a state, LOCK and
// UNLOCK of it, one state per path. A team that keeps its state remote keeps
// it in some such service (an S3 bucket, GitLab's, Terraform's own); the
// bench needs one that holds a bundle's state, which the kubernetes
// backend's single Secret (1 MB at most) cannot, and that costs next to
// nothing, so that the figures are the engine's and the provider's. Its
// size is the state's size.
type stateServer struct {
	ln  net.Listener
	srv *http.Server

	mu     sync.Mutex
	states map[string][]byte
	locks  map[string]lockInfo
}

// lockInfo is the lock as the engine sent it: its ID, and the whole JSON,
// which is returned to whoever finds the state locked so that the engine
// can say who holds it.
type lockInfo struct {
	id   string
	body []byte
}

// startStateServer serves on a free loopback port until Close.
func startStateServer() (*stateServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &stateServer{ln: ln, states: map[string][]byte{}, locks: map[string]lockInfo{}}
	s.srv = &http.Server{Handler: s}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is the address of the state named name, for the backend's address,
// lock_address and unlock_address.
func (s *stateServer) URL(name string) string { return "http://" + s.ln.Addr().String() + "/" + name }

// Size is the bytes of the state named name as last stored, 0 if none.
func (s *stateServer) Size(name string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(len(s.states[name]))
}

func (s *stateServer) Close() error { return s.srv.Close() }

// ServeHTTP answers as the http backend expects (Terraform's
// internal/backend/remote-state/http): GET 200 with the state or 204 when
// there is none; POST (or PUT) stores it, with the lock's ID in ?ID= when the
// engine holds the lock; LOCK 200, or 423 with the holder's lock when
// another holds it; UNLOCK 200. DELETE removes the state.
func (s *stateServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.Trim(r.URL.Path, "/")
	if name == "" {
		http.Error(w, "no state named", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r.Method {
	case http.MethodGet:
		st, ok := s.states[name]
		if !ok {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		sum := md5.Sum(st)
		w.Header().Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(st)
	case http.MethodPost, http.MethodPut, http.MethodDelete:
		if !s.mayWrite(w, name, r.URL.Query().Get("ID")) {
			return
		}
		if r.Method == http.MethodDelete {
			delete(s.states, name)
			return
		}
		// A state cut short on the way would be stored as the state: the
		// engine sends the body's MD5 for that.
		if want := r.Header.Get("Content-MD5"); want != "" {
			sum := md5.Sum(body)
			if base64.StdEncoding.EncodeToString(sum[:]) != want {
				http.Error(w, "Content-MD5 does not match the body", http.StatusBadRequest)
				return
			}
		}
		s.states[name] = body
	case "LOCK":
		id, err := lockID(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		// The same ID again is a retried request whose answer was lost: the
		// lock is already the caller's.
		if held, ok := s.locks[name]; ok && held.id != id {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusLocked)
			_, _ = w.Write(held.body)
			return
		}
		s.locks[name] = lockInfo{id: id, body: body}
	case "UNLOCK":
		id, err := lockID(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		held, ok := s.locks[name]
		if !ok {
			return // a retried unlock: nothing is held
		}
		if held.id != id {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write(held.body)
			return
		}
		delete(s.locks, name)
	default:
		http.Error(w, r.Method+" is not a state operation", http.StatusMethodNotAllowed)
	}
}

// mayWrite: a write to a locked state must carry the lock's ID, and a write
// that names a lock must hold it; else it is refused with 409 and the
// holder's lock, the answer a writer without the lock gets.
func (s *stateServer) mayWrite(w http.ResponseWriter, name, id string) bool {
	held, locked := s.locks[name]
	switch {
	case locked && held.id == id:
		return true
	case !locked && id == "":
		return true
	case locked:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write(held.body)
	default:
		http.Error(w, "the lock "+id+" is not held", http.StatusConflict)
	}
	return false
}

// lockID is the ID of the lock info that LOCK and UNLOCK carry.
func lockID(body []byte) (string, error) {
	var info struct{ ID string }
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&info); err != nil {
		return "", errors.New("the body is not a lock: " + err.Error())
	}
	if info.ID == "" {
		return "", errors.New("the lock has no ID")
	}
	return info.ID, nil
}
