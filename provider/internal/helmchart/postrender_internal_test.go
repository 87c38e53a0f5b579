package helmchart

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// The post-renderer gets the templates' objects, not their hooks (Helm 3's
// rule, which hashicorp/helm follows), and its output takes the objects'
// place; the hooks stay as rendered.
func TestPostRendererPipesObjectsNotHooks(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "upper")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nsed 's/hello/HELLO/'\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	r := &Rendered{Files: []File{{Path: "c/templates/all.yaml", Text: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: hello}\n" +
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: h, annotations: {helm.sh/hook: pre-install}}\ndata: {x: hello}\n"}}}
	if err := (&PostRenderer{BinaryPath: bin}).run(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if len(r.Files) != 2 {
		t.Fatalf("want the hook's file and the output, got %+v", r.Files)
	}
	hook, out := r.Files[0], r.Files[1]
	if hook.Path != "c/templates/all.yaml" || !strings.Contains(hook.Text, "name: h") || strings.Contains(hook.Text, "HELLO") ||
		strings.Contains(hook.Text, "name: a}") {
		t.Errorf("the hook should stay as rendered, alone: %+v", hook)
	}
	if out.Path != "the output of post-renderer "+bin || !strings.Contains(out.Text, "x: HELLO") || strings.Contains(out.Text, "name: h") ||
		!strings.Contains(out.Text, "# Source: c/templates/all.yaml") {
		t.Errorf("the output should hold the object, post-rendered, and no hook: %+v", out)
	}
}

// A program that cannot be found, or writes nothing, is a failure naming it.
func TestPostRendererFailuresNameIt(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, []byte("#!/bin/sh\ncat >/dev/null\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{empty, filepath.Join(t.TempDir(), "missing")} {
		r := &Rendered{Files: []File{{Path: "c/templates/a.yaml", Text: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"}}}
		err := (&PostRenderer{BinaryPath: bin}).run(context.Background(), r)
		if err == nil || !strings.Contains(err.Error(), "post-renderer "+bin) {
			t.Errorf("%s: want an error naming it, got %v", bin, err)
		}
	}
}

// A program that fails after printing what it was given (as kustomize
// prints a resource it could not patch) shows it in the error, but not the
// values of the chart's Secrets, which no set_sensitive names: generated
// ones, base64-encoded in data and decoded, and stringData's.
func TestPostRendererFailureHidesSecretValues(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "echoes")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\ncat >&2\nexit 1\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	const generated, token = "generated-Xk29fQ", "string-data-token"
	encoded := base64.StdEncoding.EncodeToString([]byte(generated))
	r := &Rendered{Files: []File{{Path: "c/templates/secret.yaml", Text: "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n" +
		"data: {password: " + encoded + "}\nstringData: {token: " + token + "}\n"}}}
	err := (&PostRenderer{BinaryPath: bin}).run(context.Background(), r)
	if err == nil {
		t.Fatal("the program failed, the run did not")
	}
	for _, leak := range []string{generated, encoded, token} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("the error shows %q:\n%v", leak, err)
		}
	}
	if !strings.Contains(err.Error(), "kind: Secret") || !strings.Contains(err.Error(), sensitive.Hidden) {
		t.Errorf("the error should show what the program printed, the values hidden:\n%v", err)
	}
}
