package main

import (
	"crypto/md5"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestStateServer plays the http backend's requests against the state
// server: a locked state refuses other lockers and writers, and says who
// holds it; the holder writes and unlocks; retried lock and unlock requests
// succeed.
func TestStateServer(t *testing.T) {
	s, err := startStateServer()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	url := s.URL("bench-terraform-3")
	do := func(method, target, body string, header ...string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, target, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	lockA := `{"ID":"a","Operation":"OperationTypeApply","Who":"alice@ci"}`
	lockB := `{"ID":"b","Operation":"OperationTypePlan","Who":"bob@laptop"}`
	state := `{"version":4,"serial":1}`
	sum := md5.Sum([]byte(state))
	md5Header := base64.StdEncoding.EncodeToString(sum[:])

	steps := []struct {
		what, method, target, body string
		header                     []string
		code                       int
		reply                      string // a part of the reply
	}{
		{"no state yet", "GET", url, "", nil, 204, ""},
		{"a locks", "LOCK", url, lockA, nil, 200, ""},
		{"a's lock again (a retry)", "LOCK", url, lockA, nil, 200, ""},
		{"b cannot lock, and learns who holds it", "LOCK", url, lockB, nil, 423, "alice@ci"},
		{"b cannot write", "POST", url + "?ID=b", state, nil, 409, "alice@ci"},
		{"nor can a writer without the lock", "POST", url, state, nil, 409, "alice@ci"},
		{"b cannot unlock a's lock", "UNLOCK", url, lockB, nil, 409, "alice@ci"},
		{"a body cut short", "POST", url + "?ID=a", state[:10], []string{"Content-MD5", md5Header}, 400, ""},
		{"a writes", "POST", url + "?ID=a", state, []string{"Content-MD5", md5Header}, 200, ""},
		{"the state is read back", "GET", url, "", nil, 200, state},
		{"a unlocks", "UNLOCK", url, lockA, nil, 200, ""},
		{"a's unlock again (a retry)", "UNLOCK", url, lockA, nil, 200, ""},
		{"unlocked, a write naming a lock is stale", "POST", url + "?ID=a", state, nil, 409, "not held"},
		{"unlocked, a write without a lock (-lock=false)", "POST", url, state, nil, 200, ""},
		{"now b locks", "LOCK", url, lockB, nil, 200, ""},
		{"a lock without an ID", "LOCK", s.URL("other"), `{"Who":"x"}`, nil, 400, ""},
		{"another state is not locked by b", "LOCK", s.URL("other"), lockA, nil, 200, ""},
		{"not a state operation", "PATCH", url, "", nil, 405, ""},
	}
	for _, st := range steps {
		code, reply := do(st.method, st.target, st.body, st.header...)
		if code != st.code || !strings.Contains(reply, st.reply) {
			t.Fatalf("%s: %s answered %d %q, want %d with %q", st.what, st.method, code, reply, st.code, st.reply)
		}
	}
	if got := s.Size("bench-terraform-3"); got != int64(len(state)) {
		t.Errorf("Size = %d, want %d", got, len(state))
	}
	if code, _ := do("DELETE", url+"?ID=b", "", nil...); code != 200 || s.Size("bench-terraform-3") != 0 {
		t.Errorf("DELETE by the holder: %d, size %d", code, s.Size("bench-terraform-3"))
	}
}
