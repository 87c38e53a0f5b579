package main

import (
	"bufio"
	"bytes"
	"net/url"
	"strings"
)

// kubectlRequests turns kubectl's -v=6 log into request lines in the format of
// the provider's request log ("METHOD /path?query"), so that both are counted
// and classified alike. kubectl v1.32 logs one line per response:
//
//	I1124 04:46:23.788185   12904 round_trippers.go:560] GET https://127.0.0.1:43003/api?timeout=32s 200 OK in 2 milliseconds
func kubectlRequests(stderr []byte) []string {
	var reqs []string
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "round_trippers.go:") {
			continue
		}
		_, msg, ok := strings.Cut(line, "] ")
		if !ok {
			continue
		}
		fields := strings.Fields(msg)
		if len(fields) < 2 || !isHTTPMethod(fields[0]) {
			continue
		}
		u, err := url.Parse(fields[1])
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
			continue
		}
		reqs = append(reqs, fields[0]+" "+u.RequestURI())
	}
	return reqs
}

func isHTTPMethod(s string) bool {
	switch s {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE":
		return true
	}
	return false
}

// requestStats classifies a run's requests.
type requestStats struct {
	total     int
	discovery int // /api, /apis and the group-version documents under them
	openAPIv2 int
	openAPIv3 int
}

func (a requestStats) add(b requestStats) requestStats {
	return requestStats{a.total + b.total, a.discovery + b.discovery, a.openAPIv2 + b.openAPIv2, a.openAPIv3 + b.openAPIv3}
}

// classify counts request lines ("METHOD /path?query").
func classify(lines []string) requestStats {
	var s requestStats
	for _, line := range lines {
		method, uri, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		s.total++
		path, _, _ := strings.Cut(uri, "?")
		switch {
		case path == "/openapi/v2" || strings.HasPrefix(path, "/openapi/v2/"):
			s.openAPIv2++
		case path == "/openapi/v3" || strings.HasPrefix(path, "/openapi/v3/"):
			s.openAPIv3++
		case method == "GET" && isDiscoveryPath(path):
			s.discovery++
		}
	}
	return s
}

// isDiscoveryPath: /api, /apis, /api/<version> and /apis/<group>/<version>
// (and /apis/<group>, the group's own document). Anything deeper names a
// resource.
func isDiscoveryPath(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch parts[0] {
	case "api":
		return len(parts) <= 2
	case "apis":
		return len(parts) <= 3
	}
	return false
}

// logLines splits the provider's request log into its lines.
func logLines(b []byte) []string {
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
