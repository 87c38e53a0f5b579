package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// docs writes the Terraform and OpenTofu registry docs (docs/index.md,
// docs/resources, docs/data-sources, docs/guides) with tfplugindocs, pinned in
// tools/tfplugindocs, from the provider's schema (its descriptions), examples/
// and templates/. With -check it writes them to a temporary directory and
// fails, naming the files, when docs/ differs: a test runs that.
func docs(ctx context.Context, args []string) error {
	check := len(args) == 1 && args[0] == "-check"
	if len(args) > 0 && !check {
		return fmt.Errorf("docs takes no arguments but -check")
	}
	repo, err := repoRoot()
	if err != nil {
		return err
	}
	out := filepath.Join(repo, "docs")
	if check {
		tmp, err := os.MkdirTemp("", "k8sconnect-docs-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		out = filepath.Join(tmp, "docs")
		// Hand-written pages (docs/adr, docs/architecture.md, ...) are not
		// generated; copy them so only generated pages can differ.
		if err := copyTree(filepath.Join(repo, "docs"), out); err != nil {
			return err
		}
	}
	if err := GenerateDocs(ctx, repo, out); err != nil {
		return err
	}
	if !check {
		return nil
	}
	stale, err := diffTrees(filepath.Join(repo, "docs"), out)
	if err != nil {
		return err
	}
	if len(stale) > 0 {
		return fmt.Errorf("docs/ is stale; run `make docs` and commit the result. Differs: %s", strings.Join(stale, ", "))
	}
	return nil
}

// GenerateDocs renders the registry docs of the provider in repo into out.
func GenerateDocs(ctx context.Context, repo, out string) error {
	work, err := os.MkdirTemp("", "k8sconnect-schema-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "bin")
	if err := run(ctx, repo, nil, "go", "build", "-o", bin+"/", "./provider/cmd/terraform-provider-k8sconnect"); err != nil {
		return fmt.Errorf("building the provider: %w", err)
	}
	rc := filepath.Join(work, "terraformrc")
	if err := os.WriteFile(rc, []byte(fmt.Sprintf(
		"provider_installation {\n  dev_overrides {\n    \"registry.terraform.io/k8sconnect/k8sconnect\" = %q\n  }\n  direct {}\n}\n", bin)), 0o600); err != nil {
		return err
	}
	cfg := filepath.Join(work, "config")
	if err := os.MkdirAll(cfg, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cfg, "main.tf"), []byte(
		"terraform {\n  required_providers {\n    k8sconnect = { source = \"k8sconnect/k8sconnect\" }\n  }\n}\n"), 0o600); err != nil {
		return err
	}
	terraform, err := toolchain.Path("terraform")
	if err != nil {
		return err
	}
	var schema bytes.Buffer
	cmd := exec.CommandContext(ctx, terraform, "providers", "schema", "-json")
	cmd.Dir, cmd.Stdout, cmd.Stderr = cfg, &schema, os.Stderr
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("terraform providers schema -json: %w", err)
	}
	// tfplugindocs looks the provider up by its short name (or under
	// hashicorp/); the schema names it by its full source address.
	var doc struct {
		FormatVersion string                     `json:"format_version"`
		Schemas       map[string]json.RawMessage `json:"provider_schemas"`
	}
	if err := json.Unmarshal(schema.Bytes(), &doc); err != nil {
		return fmt.Errorf("reading terraform's provider schema: %w", err)
	}
	ours, ok := doc.Schemas["registry.terraform.io/k8sconnect/k8sconnect"]
	if !ok {
		return fmt.Errorf("terraform's provider schema has no k8sconnect/k8sconnect")
	}
	doc.Schemas = map[string]json.RawMessage{"k8sconnect": ours}
	renamed, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	schemaFile := filepath.Join(work, "schema.json")
	if err := os.WriteFile(schemaFile, renamed, 0o600); err != nil {
		return err
	}
	// tfplugindocs takes the output directory relative to the provider's.
	rel, err := filepath.Rel(repo, out)
	if err != nil {
		return err
	}
	return run(ctx, repo, nil, "go", "tool", "-modfile=tools/tfplugindocs/go.mod", "tfplugindocs", "generate",
		"--provider-dir", repo, "--provider-name", "k8sconnect", "--rendered-provider-name", "k8sconnect",
		"--providers-schema", schemaFile, "--rendered-website-dir", rel, "--website-temp-dir", filepath.Join(work, "website"))
}

func run(ctx context.Context, dir string, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	cmd.Env = append(os.Environ(), env...)
	return cmd.Run()
}

// repoRoot is the directory of the go.mod that declares this repository.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.Contains(string(b), "module "+toolchain.RepoModule+"\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the k8sconnect repository")
		}
		dir = parent
	}
}

func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
}

// diffTrees lists the files that differ between two trees, or exist in one only.
func diffTrees(a, b string) ([]string, error) {
	files := func(root string) (map[string][]byte, error) {
		m := map[string][]byte{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			m[rel], err = os.ReadFile(p)
			return err
		})
		return m, err
	}
	fa, err := files(a)
	if err != nil {
		return nil, err
	}
	fb, err := files(b)
	if err != nil {
		return nil, err
	}
	var out []string
	for p, ba := range fa {
		if bb, ok := fb[p]; !ok || !bytes.Equal(ba, bb) {
			out = append(out, "docs/"+p)
		}
	}
	for p := range fb {
		if _, ok := fa[p]; !ok {
			out = append(out, "docs/"+p+" (missing)")
		}
	}
	sort.Strings(out)
	return out, nil
}
