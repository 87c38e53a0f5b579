// Package sdkgen generates the Pulumi schema and the Node, Python, Go and Java
// SDKs in-process.
//
// pulumi-tfgen-k8sconnect can write the schema, but its SDK subcommands run
// `pulumi package gen-sdk`, which asks a language host plugin of the CLI's own
// version to do the work, and the toolchain's Node, Python and Go hosts are
// older (v3.66.0, the last release whose module holds them). The hosts only
// bind the schema and call pulumi's codegen packages, so this package does the
// same directly, with the codegen of the CLI's version: the bridge's schema
// generation (with its provider checks), schema.BindSpec, then
// codegen/{nodejs,python,go}.GeneratePackage, and for Java pulumi-java's
// codegen package, from the pulumi-java release that pulumi-terraform-bridge
// itself requires (so the versions agree by construction; the Java language
// host is built from the same release, in this module: internal/toolchain).
package sdkgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	javagen "github.com/pulumi/pulumi-java/pkg/codegen/java"
	pftfgen "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfgen"
	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfgen/schemafilter"
	"github.com/pulumi/pulumi-terraform-bridge/v3/unstable/metadata"
	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
	pschema "github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/common/diag"
	"github.com/pulumi/pulumi/sdk/v3/go/common/diag/colors"

	"github.com/k8sconnect/k8sconnect/bridge"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// tool is the generator named in the "do not edit" header of every file.
const tool = "k8sconnect-sdkgen"

// An output directory, relative to the repository root, that the generator
// owns: every file in it is generated, except paths matched by keep (build
// products, installed dependencies and hand-maintained files such as a
// lockfile). Files that a previous run wrote and this run does not are removed.
type outputDir struct {
	dir  string
	keep func(rel string) bool
}

var outputs = []outputDir{
	{dir: "sdk/nodejs", keep: keepFirst("node_modules", "bin", "package-lock.json")},
	{dir: "sdk/python", keep: func(rel string) bool {
		first := strings.Split(rel, "/")[0]
		return first == "build" || first == "dist" || strings.HasSuffix(first, ".egg-info") ||
			strings.Contains("/"+rel+"/", "/__pycache__/")
	}},
	{dir: "sdk/go/" + bridge.Name, keep: keepFirst()},
	{dir: "sdk/java", keep: keepFirst("target")},
	{dir: pagesDir, keep: keepFirst()},
}

// Generated schema files; schema/schema.go beside them is hand-written.
const (
	schemaFile   = "schema/schema.json"
	metadataFile = "schema/bridge-metadata.json"
)

func keepFirst(names ...string) func(string) bool {
	return func(rel string) bool {
		first := strings.Split(rel, "/")[0]
		for _, n := range names {
			if first == n {
				return true
			}
		}
		return false
	}
}

// Files generates the schema and every SDK and returns them keyed by
// slash-separated path relative to the repository root.
func Files(ctx context.Context) (map[string][]byte, error) {
	info := bridge.Provider()
	sink := diag.DefaultSink(os.Stderr, os.Stderr, diag.FormatOptions{Color: colors.Never})

	// The same generation `pulumi-tfgen-k8sconnect schema` runs, including the
	// bridge's checks of the framework provider. The bridge reads no docs
	// markdown (XInMemoryDocs): describe writes the descriptions (docs.go).
	res, err := pftfgen.GenerateSchema(ctx, pftfgen.GenerateSchemaOptions{
		ProviderInfo:    info,
		DiagnosticsSink: sink,
		XInMemoryDocs:   true,
	})
	if err != nil {
		return nil, fmt.Errorf("generate schema: %w", err)
	}
	var spec pschema.PackageSpec
	if err := json.Unmarshal(res.ProviderMetadata.PackageSchema, &spec); err != nil {
		return nil, err
	}
	// The docs are read from the repository the generator runs in, the same
	// tree that Write and Diff are given.
	root, err := toolchain.RepoRoot()
	if err != nil {
		return nil, err
	}
	if err := describe(ctx, &spec, root); err != nil {
		return nil, fmt.Errorf("describe: %w", err)
	}
	// Like tfgen: the committed schema carries no version, so it does not change
	// with every release; the SDKs get bridge.Version below.
	spec.Version = ""
	schemaJSON, err := json.MarshalIndent(spec, "", "    ")
	if err != nil {
		return nil, err
	}

	files := map[string][]byte{
		schemaFile:   schemaJSON,
		metadataFile: (*metadata.Data)(info.MetadataInfo.Data).MarshalIndent(),
	}
	pageFiles, err := renderPages(&spec, root)
	if err != nil {
		return nil, fmt.Errorf("docs/pulumi: %w", err)
	}
	for name, content := range pageFiles {
		files[name] = content
	}
	for _, lang := range []string{"nodejs", "python", "go", "java"} {
		sdk, err := generateSDK(schemaJSON, lang)
		if err != nil {
			return nil, fmt.Errorf("generate %s SDK: %w", lang, err)
		}
		dir := "sdk/" + lang
		if lang == "go" {
			// The Go codegen writes into <package name>/, the module root is sdk/go.
			dir = "sdk/go"
		}
		for name, content := range sdk {
			files[path.Join(dir, filepath.ToSlash(name))] = content
		}
	}
	// The Go language host reads a module's pulumi-plugin.json at the module
	// root, or under go/ of it (the layout of modules rooted at sdk/); the
	// codegen writes it into the package. A copy at the root of sdk/go lets
	// the host tell the engine which plugin and version a Go program needs
	// before the program runs, as the Node and Python packages do.
	goPlugin := "sdk/go/" + bridge.Name + "/pulumi-plugin.json"
	if files[goPlugin] == nil {
		return nil, fmt.Errorf("the Go codegen wrote no %s", goPlugin)
	}
	files["sdk/go/pulumi-plugin.json"] = files[goPlugin]
	return files, nil
}

// generateSDK does what `pulumi package gen-sdk --language lang` asks the
// language host to do, with the schema filtered for that language as tfgen does.
func generateSDK(schemaJSON []byte, lang string) (map[string][]byte, error) {
	var spec pschema.PackageSpec
	if err := json.Unmarshal(schemafilter.FilterSchemaByLanguage(schemaJSON, lang), &spec); err != nil {
		return nil, err
	}
	spec.Version = bridge.Version
	if lang == "java" {
		// As the Java language host does before binding: Java folds types
		// whose names differ only in case into one class.
		deduped, diags, err := javagen.DeduplicateTypes(&spec)
		if err != nil {
			return nil, err
		}
		if diags.HasErrors() {
			return nil, diags
		}
		spec = *deduped
	}

	// The package references no other package, so the loader is never asked to
	// load a plugin; it only has to exist.
	loader := pschema.NewPluginLoader(nil)
	pkg, diags, err := pschema.BindSpec(spec, loader, pschema.ValidationOptions{AllowDanglingReferences: true})
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return nil, diags
	}

	switch lang {
	case "nodejs":
		return nodejs.GeneratePackage(tool, pkg, nil, nil, false, loader)
	case "python":
		files, err := python.GeneratePackage(tool, pkg, nil, loader)
		if err != nil {
			return nil, err
		}
		// pyproject.toml names README.md beside it; the codegen only writes the
		// copy inside the package (provider repositories usually copy it by hand).
		files["README.md"] = files["pulumi_"+bridge.Name+"/README.md"]
		return files, nil
	case "go":
		return gogen.GeneratePackage(tool, pkg, nil)
	case "java":
		// The schema says buildFiles "none": the codegen writes the sources and
		// version.txt, and the Maven build is ours (bridge.JavaPOM).
		files, err := javagen.GeneratePackage(tool, pkg, nil, nil, false, false)
		if err != nil {
			return nil, err
		}
		files["pom.xml"] = []byte(bridge.JavaPOM())
		files[bridge.JavaResourceDir()+"/plugin.json"] = bridge.JavaPluginJSON()
		return files, nil
	}
	return nil, fmt.Errorf("unknown language %q", lang)
}

// Write makes the tree under root match files: it removes the generated files
// that files no longer contains, then writes every file whose content changed.
func Write(root string, files map[string][]byte) error {
	for _, out := range outputs {
		existing, err := ownedFiles(root, out)
		if err != nil {
			return err
		}
		for _, rel := range existing {
			if _, ok := files[rel]; !ok {
				if err := os.Remove(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
					return err
				}
			}
		}
	}
	for _, rel := range sortedKeys(files) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, files[rel]) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, files[rel], 0o644); err != nil {
			return err
		}
	}
	return removeEmptyDirs(root)
}

// Diff lists how the tree under root differs from files: missing, changed and
// extra generated files. Empty means the committed output is current.
func Diff(root string, files map[string][]byte) ([]string, error) {
	var diffs []string
	for _, rel := range sortedKeys(files) {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		switch {
		case os.IsNotExist(err):
			diffs = append(diffs, "missing: "+rel)
		case err != nil:
			return nil, err
		case !bytes.Equal(got, files[rel]):
			diffs = append(diffs, "changed: "+rel)
		}
	}
	for _, out := range outputs {
		existing, err := ownedFiles(root, out)
		if err != nil {
			return nil, err
		}
		for _, rel := range existing {
			if _, ok := files[rel]; !ok {
				diffs = append(diffs, "not generated any more: "+rel)
			}
		}
	}
	return diffs, nil
}

// ownedFiles lists the files under an output directory that the generator owns.
func ownedFiles(root string, out outputDir) ([]string, error) {
	base := filepath.Join(root, filepath.FromSlash(out.dir))
	var rels []string
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if os.IsNotExist(err) && p == base {
			return filepath.SkipDir
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(base, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if out.keep(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			rels = append(rels, out.dir+"/"+rel)
		}
		return nil
	})
	return rels, err
}

func removeEmptyDirs(root string) error {
	for _, out := range outputs {
		base := filepath.Join(root, filepath.FromSlash(out.dir))
		var dirs []string
		_ = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() && p != base {
				dirs = append(dirs, p)
			}
			return nil
		})
		// Deepest first, so a parent empties after its children go.
		sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
		for _, d := range dirs {
			if entries, err := os.ReadDir(d); err == nil && len(entries) == 0 {
				if err := os.Remove(d); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
