package sdkgen

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blang/semver"
	"github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
	modsemver "golang.org/x/mod/semver"

	"github.com/k8sconnect/k8sconnect/bridge"
)

// TestGeneratedFilesAreCurrent regenerates the schema and the SDKs into a
// temporary tree and compares them with the committed ones: a change to the
// framework provider's schema or to the bridge configuration has to come with
// regenerated files.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	files, err := Files(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	tmp := t.TempDir()
	if err := Write(tmp, files); err != nil {
		t.Fatal(err)
	}
	if diffs, err := Diff(tmp, files); err != nil || len(diffs) > 0 {
		t.Fatalf("a fresh tree does not match what was generated (err %v): %v", err, diffs)
	}

	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	diffs, err := Diff(root, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) > 0 {
		t.Fatalf("generated files are stale; run `cd bridge && go run ./cmd/k8sconnect-sdkgen` (make generate) "+
			"and commit the result:\n  %s", strings.Join(diffs, "\n  "))
	}
}

// TestGoSDKBuilds compiles the committed Go SDK, its own module in sdk/go.
func TestGoSDKBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the Go SDK: not in -short")
	}
	cmd := exec.Command("go", "build", "./...")
	cmd.Dir = filepath.Join("..", "..", "sdk", "go")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./... in sdk/go: %v\n%s", err, out)
	}
}

// pom is what TestJavaExampleTakesThisSDK reads of a pom.xml.
type pom struct {
	GroupID    string `xml:"groupId"`
	ArtifactID string `xml:"artifactId"`
	Version    string `xml:"version"`
	Properties struct {
		SDKVersion string `xml:"k8sconnect.version"`
	} `xml:"properties"`
	Dependencies []struct {
		GroupID    string `xml:"groupId"`
		ArtifactID string `xml:"artifactId"`
		Version    string `xml:"version"`
	} `xml:"dependencies>dependency"`
}

func readPOM(t *testing.T, path string) pom {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p pom
	if err := xml.Unmarshal(data, &p); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

// dependency is the version at which p requires group:artifact, or "".
func (p pom) dependency(group, artifact string) string {
	for _, d := range p.Dependencies {
		if d.GroupID == group && d.ArtifactID == artifact {
			return d.Version
		}
	}
	return ""
}

// TestJavaExampleTakesThisSDK: examples/pulumi-java takes the Java SDK by
// version from the local Maven repository, where an SDK of an older version
// may still be installed. The example must ask for the version sdk/java
// builds (the provider's), and for the Java runtime the SDK is built against.
func TestJavaExampleTakesThisSDK(t *testing.T) {
	sdk := readPOM(t, filepath.Join("..", "..", "sdk", "java", "pom.xml"))
	example := readPOM(t, filepath.Join("..", "..", "examples", "pulumi-java", "pom.xml"))
	if sdk.GroupID != bridge.JavaGroupID || sdk.ArtifactID != bridge.JavaArtifactID || sdk.Version != bridge.Version {
		t.Fatalf("sdk/java/pom.xml builds %s:%s:%s, want %s:%s:%s (run make generate)",
			sdk.GroupID, sdk.ArtifactID, sdk.Version, bridge.JavaGroupID, bridge.JavaArtifactID, bridge.Version)
	}
	if got := example.dependency(bridge.JavaGroupID, bridge.JavaArtifactID); got != "${k8sconnect.version}" || example.Properties.SDKVersion != bridge.Version {
		t.Errorf("examples/pulumi-java/pom.xml takes the SDK at %s (k8sconnect.version %q), want ${k8sconnect.version} = %s",
			got, example.Properties.SDKVersion, bridge.Version)
	}
	runtime := sdk.dependency("com.pulumi", "pulumi")
	if runtime == "" || example.dependency("com.pulumi", "pulumi") != runtime {
		t.Errorf("examples/pulumi-java/pom.xml takes com.pulumi:pulumi %s, the SDK is built against %q",
			example.dependency("com.pulumi", "pulumi"), runtime)
	}
}

// TestVersionsForEveryRegistry checks the version and the Pulumi dependency
// ranges the generated packages declare, as the registries would: npm, Go and
// Terraform take semver; PyPI refuses a PEP 440 local version ("+..."), which
// is what the Python codegen makes of a prerelease it cannot translate.
func TestVersionsForEveryRegistry(t *testing.T) {
	files, err := Files(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !modsemver.IsValid("v" + bridge.Version) {
		t.Fatalf("version %q is not semver: npm, Go and Terraform refuse it", bridge.Version)
	}
	v, err := semver.Parse(bridge.Version)
	if err != nil {
		t.Fatal(err)
	}
	pypi := python.PypiVersion(v)
	if strings.Contains(pypi, "+") {
		t.Errorf("version %q is %q for PyPI, a local version that PyPI refuses", bridge.Version, pypi)
	}
	pyproject := string(files["sdk/python/pyproject.toml"])
	if !strings.Contains(pyproject, "version = \""+pypi+"\"") {
		t.Errorf("pyproject.toml does not carry version %q:\n%s", pypi, pyproject)
	}

	var pkg struct {
		Version      string            `json:"version"`
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(files["sdk/nodejs/package.json"], &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Version != bridge.Version {
		t.Errorf("package.json version %q, want %q", pkg.Version, bridge.Version)
	}
	// The floors are the codegen's own: the oldest Pulumi SDK the code it
	// writes runs on. A newer codegen that raises them fails here.
	if got, want := pkg.Dependencies["@pulumi/pulumi"], nodejs.MinimumValidSDKVersion; got != want {
		t.Errorf("package.json depends on @pulumi/pulumi %q, the codegen's floor is %q", got, want)
	}
	if want := `"pulumi` + python.MinimumValidSDKVersion + `"`; !strings.Contains(pyproject, want) {
		t.Errorf("pyproject.toml lacks the dependency %s, the codegen's floor:\n%s", want, pyproject)
	}
}
