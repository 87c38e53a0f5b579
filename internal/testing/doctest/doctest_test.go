package doctest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

func TestMain(m *testing.M) { acctest.Main(m) }

// exampleRoots are the directories whose examples tfplugindocs puts on the
// registry pages; each directory with a .tf file in them is one configuration.
var exampleRoots = []string{"examples/resources", "examples/data-sources", "examples/provider"}

// config is one configuration the test runs: an example directory or a guide's block.
type config struct {
	name   string            // the subtest's name: the directory, or the block's page and line
	files  map[string][]byte // file name (slash-separated, relative) -> content
	setups []string
}

// TestAccDocs applies every example and every runnable guide block against the
// embedded cluster with the engine K8SCONNECT_ENGINE selects, then plans again
// (which must show no change) and destroys (which must leave nothing in state),
// as a user who copies it would. Each configuration gets a home directory
// whose ~/.kube/config is the cluster's kubeconfig, since the examples connect
// through it, and the provider block the guides assume when it declares none.
func TestAccDocs(t *testing.T) {
	kubeconfig := localcluster.Shared(t).KubeconfigPath
	root := repoRoot(t)
	configs := append(exampleConfigs(t, root), guideConfigs(t, root)...)
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			performSetups(t, c.setups)
			run(t, c, kubeconfig)
		})
	}
}

func run(t *testing.T, c config, kubeconfig string) {
	w := acctest.NewWorkdir(t)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(kubeconfig, filepath.Join(home, ".kube", "config")); err != nil {
		t.Fatal(err)
	}
	w.SetEnv("HOME", home)
	all := ""
	for name, content := range c.files {
		p := filepath.Join(w.Dir(), filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, content, 0o600); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".tf") {
			all += string(content) + "\n"
		}
	}
	if err := os.WriteFile(filepath.Join(w.Dir(), "zz_doctest.tf"), []byte(assumed(all)), 0o600); err != nil {
		t.Fatal(err)
	}
	// On a failure, leave the cluster as it was for the other blocks.
	t.Cleanup(func() {
		if t.Failed() {
			w.Destroy()
		}
	})

	w.MustApply()
	resources := w.StateList()
	if declares := declaredResources(all); len(declares) > 0 {
		for _, want := range declares {
			if !inState(resources, want) {
				t.Fatalf("%s: after apply, %s is not in state (state: %v)", acctest.Engine(), want, resources)
			}
		}
	}
	w.MustPlanNoChanges()
	if r := w.Destroy(); r.Err != nil {
		t.Fatalf("%s destroy failed: %v\n%s", acctest.Engine(), r.Err, r.Output)
	}
	if left := w.StateList(); len(left) > 0 {
		t.Fatalf("%s: after destroy, state still holds %v", acctest.Engine(), left)
	}
}

// assumed is what a configuration gets that the docs say once for all: the
// provider's source address, and a provider block connecting through
// ~/.kube/config, each only when the configuration has none of its own.
func assumed(config string) string {
	var b strings.Builder
	if !strings.Contains(config, "required_providers") {
		b.WriteString("terraform {\n  required_providers {\n    k8sconnect = { source = \"k8sconnect/k8sconnect\" }\n  }\n}\n")
	}
	if !providerBlock.MatchString(config) {
		b.WriteString("provider \"k8sconnect\" {\n  cluster_connection = { kubeconfig_file = \"~/.kube/config\" }\n}\n")
	}
	return b.String()
}

var (
	providerBlock    = regexp.MustCompile(`(?m)^provider\s+"k8sconnect"`)
	resourceDeclared = regexp.MustCompile(`(?m)^resource\s+"(k8sconnect_[a-z_]+)"\s+"([A-Za-z0-9_-]+)"`)
)

// declaredResources are the addresses of the k8sconnect resources a
// configuration declares (state list shows only those; one with count or
// for_each is there as instances).
func declaredResources(config string) []string {
	var out []string
	for _, m := range resourceDeclared.FindAllStringSubmatch(config, -1) {
		out = append(out, m[1]+"."+m[2])
	}
	return out
}

// inState: address is in state, itself or as instances of count or for_each.
func inState(state []string, address string) bool {
	for _, s := range state {
		if s == address || strings.HasPrefix(s, address+"[") {
			return true
		}
	}
	return false
}

// exampleConfigs are the example directories; each must hold a .tf file.
func exampleConfigs(t *testing.T, root string) []config {
	t.Helper()
	var out []config
	for _, base := range exampleRoots {
		dirs := map[string]bool{}
		err := filepath.WalkDir(filepath.Join(root, base), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".tf") {
				dirs[filepath.Dir(p)] = true
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(dirs) == 0 {
			t.Fatalf("no example configuration under %s", base)
		}
		for dir := range dirs {
			rel, _ := filepath.Rel(root, dir)
			rel = filepath.ToSlash(rel)
			c := config{name: rel, files: map[string][]byte{}, setups: exampleSetups[rel]}
			err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || strings.HasSuffix(p, ".sh") {
					return err // import.sh is the Import section's command line
				}
				b, err := os.ReadFile(p)
				name, _ := filepath.Rel(dir, p)
				c.files[filepath.ToSlash(name)] = b
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range c.setups {
				if f, ok := setupFiles[name]; ok {
					copyTree(t, filepath.Join(root, f.from), f.to, c.files)
				}
			}
			out = append(out, c)
		}
	}
	for dir := range exampleSetups {
		if !containsConfig(out, dir) {
			t.Errorf("exampleSetups names %s, which holds no example", dir)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func containsConfig(cs []config, name string) bool {
	for _, c := range cs {
		if c.name == name {
			return true
		}
	}
	return false
}

// guideConfigs are the runnable blocks of docs/guides. Every guide must have
// at least one, and every HCL block a marker.
func guideConfigs(t *testing.T, root string) []config {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "guides", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no guide in docs/guides")
	}
	var out []config
	for _, page := range pages {
		rel, _ := filepath.Rel(root, page)
		blocks := pageBlocks(t, root, rel)
		runnable := 0
		for _, b := range blocks {
			if b.IsHCL() && b.Marker.Run {
				runnable++
				files := map[string][]byte{"main.tf": []byte(b.Code)}
				for _, name := range b.Marker.Setups {
					if f, ok := setupFiles[name]; ok {
						copyTree(t, filepath.Join(root, f.from), f.to, files)
					}
				}
				out = append(out, config{name: b.Where(), files: files, setups: b.Marker.Setups})
			}
		}
		if runnable == 0 {
			t.Errorf("%s has no runnable block: a guide's code must be tried by the doc-test", rel)
		}
	}
	return out
}

// pageBlocks reads a page's code blocks and checks their markers.
func pageBlocks(t *testing.T, root, rel string) []Block {
	t.Helper()
	md, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := Blocks(filepath.ToSlash(rel), md)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for n := range setups {
		names[n] = true
	}
	if err := Check(blocks, names); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// Without a cluster: every guide block is marked, with known setups; every
// guide has a runnable block; and the Terraform code on the generated
// resource, data source and provider pages is an example file that
// TestAccDocs runs, so no page shows code the test does not try.
func TestDocsCodeIsCovered(t *testing.T) {
	root := repoRoot(t)
	guideConfigs(t, root)
	examples := map[string]bool{}
	for _, c := range exampleConfigs(t, root) {
		for name, content := range c.files {
			if strings.HasSuffix(name, ".tf") {
				examples[strings.TrimSpace(string(content))] = true
			}
		}
	}
	pages := []string{"docs/index.md"}
	for _, dir := range []string{"docs/resources", "docs/data-sources"} {
		ms, err := filepath.Glob(filepath.Join(root, dir, "*.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			rel, _ := filepath.Rel(root, m)
			pages = append(pages, filepath.ToSlash(rel))
		}
	}
	checked := 0
	for _, page := range pages {
		md, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := Blocks(page, md)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			if !b.IsHCL() {
				continue
			}
			checked++
			if !examples[strings.TrimSpace(b.Code)] {
				t.Errorf("%s: Terraform code that is no file under %s; the doc-test runs only those (make docs?)",
					b.Where(), strings.Join(exampleRoots, ", "))
			}
		}
	}
	if checked == 0 {
		t.Fatal("no Terraform code found on the generated pages: the page layout changed, or the test reads the wrong files")
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// copyTree adds every file under dir to files, named under to.
func copyTree(t *testing.T, dir, to string, files map[string][]byte) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[to+"/"+filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
