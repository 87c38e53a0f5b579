package main

import (
	"context"
	"testing"
)

// The registry docs in docs/ are what `make docs` writes from the schema,
// examples/ and templates/: a change to a description or an example that was
// not followed by `make docs` fails here, naming the stale files.
func TestDocsAreCurrent(t *testing.T) {
	if err := docs(context.Background(), []string{"-check"}); err != nil {
		t.Fatal(err)
	}
}
