package helmchart

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/k8sconnect/k8sconnect/provider/internal/kubejson"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

// PostRenderFailed is the title of a failure of the post-renderer: it could
// not be found or run, it failed, or it returned nothing.
const PostRenderFailed = "Post-renderer failed"

// PostRenderer is a program the rendered objects are piped through before
// they are read, as `helm install --post-renderer` does in Helm 3 (which
// hashicorp/helm's postrender follows): the objects of the templates go to
// its standard input as one YAML stream, and what it writes to its standard
// output is what the release holds. Hooks and the CRDs of crds/ are not
// piped through it, as Helm 3 pipes neither.
type PostRenderer struct {
	// BinaryPath is the program: a path, or a name looked up in PATH.
	BinaryPath string
	Args       []string
}

// source is the source the documents the post-renderer returned
// are read from, which errors name.
func (p *PostRenderer) source() string { return "the output of post-renderer " + p.BinaryPath }

// run pipes the objects of r's templates through the post-renderer and
// puts its output in their place.
func (p *PostRenderer) run(ctx context.Context, r *Rendered) error {
	bin, err := exec.LookPath(p.BinaryPath)
	if err != nil {
		return fmt.Errorf("post-renderer %s: %w", p.BinaryPath, err)
	}
	var in bytes.Buffer
	var kept []File
	var piped []map[string]any // the objects it is given, whose Secrets' values its errors must not show
	for _, f := range r.Files {
		var rest []string
		for _, d := range yamldocs.SplitDocuments(f.Path, []byte(f.Text)) {
			if !yamldocs.HasContent(d.Text) {
				continue
			}
			if role, err := RoleOf(d.Text); err == nil && role == Object {
				fmt.Fprintf(&in, "---\n# Source: %s\n%s", f.Path, d.Text)
				var obj map[string]any
				if kubejson.Unmarshal([]byte(d.Text), &obj) == nil {
					piped = append(piped, obj)
				}
				continue
			}
			rest = append(rest, d.Text) // hooks, and what Sort will refuse
		}
		if len(rest) > 0 {
			kept = append(kept, File{Path: f.Path, Text: strings.Join(rest, "---\n")})
		}
	}
	cmd := exec.CommandContext(ctx, bin, p.Args...)
	var out, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &in, &out, &stderr
	if err := cmd.Run(); err != nil {
		msg := fmt.Sprintf("post-renderer %s failed: %v", p.BinaryPath, err)
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			msg = fmt.Sprintf("post-renderer %s exited with code %d", p.BinaryPath, exit.ExitCode())
		}
		// A program that fails often prints what it was given (kustomize
		// prints the resource it could not patch): the chart's Secrets
		// among it, generated or not, are hidden as in any other message.
		if s := strings.TrimSpace(sensitive.New("", nil).Scrub(stderr.String(), piped...)); s != "" {
			msg += "; it said:\n" + s
		}
		return errors.New(msg)
	}
	if len(bytes.TrimSpace(out.Bytes())) == 0 {
		return fmt.Errorf("post-renderer %s returned nothing on its standard output, so the release would hold no "+
			"object; it must write the objects it was given, changed as it means to", p.BinaryPath)
	}
	r.Files = append(kept, File{Path: p.source(), Text: out.String()})
	return nil
}
