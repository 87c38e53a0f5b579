package yamldocs

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// maxErrors bounds how many problems one read reports: enough to fix a batch at
// once, few enough that a wrong file (say, a binary) does not flood the plan.
const maxErrors = 20

// Split parses documents into manifests keyed by Manifest.Key. Empty and
// comment-only documents are skipped. Every invalid document and every key
// defined twice is reported, each naming its source, document and line, joined
// into one error (see Errors).
func Split(docs []Document) (map[string]Manifest, error) {
	parsed := parseAll(docs)
	out := make(map[string]Manifest, len(docs))
	var errs []error
	for i, p := range parsed {
		if p.err != nil {
			errs = append(errs, p.err)
			continue
		}
		for _, m := range p.manifests {
			key := m.Key()
			if first, dup := out[key]; dup {
				errs = append(errs, definedTwice(key, first, m))
				continue
			}
			out[key] = m
		}
		if len(errs) >= maxErrors {
			if i+1 < len(parsed) {
				errs = append(errs, fmt.Errorf("stopped after %d problems; fix these and plan again", maxErrors))
			}
			break
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Errors unpacks an error from Split or Load into its problems, so each can be a
// diagnostic of its own.
func Errors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

type parseResult struct {
	manifests []Manifest
	err       error
}

// parseAll parses documents on every core: YAML decoding is nearly all the cost
// of a large input, and each document decodes independently. Results keep the
// input order, so the first of two duplicates is the one reported first.
func parseAll(docs []Document) []parseResult {
	out := make([]parseResult, len(docs))
	workers := min(runtime.GOMAXPROCS(0), (len(docs)+63)/64)
	if workers <= 1 {
		for i, d := range docs {
			out[i] = parseWithBodies(d)
		}
		return out
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(docs); i += workers {
				out[i] = parseWithBodies(docs[i])
			}
		}()
	}
	wg.Wait()
	return out
}

// parseWithBodies parses one document and converts each of its objects to
// the JSON body the data sources hand out, or takes what an earlier parse of
// the same document in this process gave (parsed).
func parseWithBodies(doc Document) parseResult {
	k := digestOf(doc)
	if r, ok := parsed.get(k); ok {
		return r // Split copies each manifest out: no caller changes a kept one
	}
	r := parseAndConvert(doc)
	parsed.put(k, r)
	return r
}

func parseAndConvert(doc Document) parseResult {
	manifests, err := Parse(doc)
	if err != nil {
		return parseResult{err: err}
	}
	for i := range manifests {
		body, err := jsonBody(manifests[i].Text)
		if err != nil {
			return parseResult{err: fmt.Errorf("%s cannot be read as kubectl reads it: %w", manifests[i].Where(), err)}
		}
		manifests[i].Body = body
	}
	return parseResult{manifests: manifests}
}
