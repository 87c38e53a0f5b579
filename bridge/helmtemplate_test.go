package bridge_test

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// shopGroup is the API group of the CRD of the test chart shop.
const shopGroup = "helmtemplate.k8sconnect.test"

var (
	helmCRDs         = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	helmClusterRoles = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	helmNamespaces   = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// getHelmTemplate under the real Pulumi engine, in every language that has
// the scenario (the code the Pulumi docs of getHelmTemplate show): the chart
// of the Terraform tests renders against the cluster, every object is created
// as a KubernetesObject of its own, and the next preview changes nothing
// (lookup reads the chart's generated password back). The setSensitive value
// and the generated password reach the cluster and nothing a user reads: the
// preview and up output, the stack export, its outputs. Each language has its
// namespace, and all but YAML a CRD group of their own, so the runs never
// share an object.
func TestPulumiHelmTemplate(t *testing.T) {
	skipShort(t)
	t.Parallel()
	for _, lang := range []pulumitest.Language{pulumitest.TypeScript, pulumitest.Python, pulumitest.Go, pulumitest.YAML} {
		t.Run(string(lang), func(t *testing.T) {
			t.Parallel()
			testHelmTemplate(t, lang)
		})
	}
}

// helmTemplateStack is one language's stack of the scenario and what the
// checks need to know of it.
type helmTemplateStack struct {
	stack     *pulumitest.Stack
	namespace string // the release namespace
	group     string // the API group of the chart's CRD
	config    pulumitest.Config
	// flags of up and preview: --diff, where the stack runs through the CLI.
	flags []pulumitest.Flag
	// cli runs a pulumi command on the stack (stack export, stack output)
	// and returns what it printed.
	cli func(args ...string) string
}

func testHelmTemplate(t *testing.T, lang pulumitest.Language) {
	cluster := localcluster.Shared(t)
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	s := helmTemplateStack{
		namespace: acctest.Name("pulumihelm-" + string(lang)),
		group:     string(lang) + "." + shopGroup,
		config: pulumitest.Config{
			"kubeconfigPath": pulumitest.Plain(cluster.KubeconfigPath),
			"context":        pulumitest.Plain(localcluster.TokenContext),
		},
		flags: []pulumitest.Flag{pulumitest.Flag("--diff")},
	}
	switch lang {
	case pulumitest.TypeScript, pulumitest.Python:
		// Under the CLI, which shows every object's diff with --diff.
		s.stack = pulumitest.NewScenario(t, lang, map[pulumitest.Language]string{
			pulumitest.TypeScript: "helm-template", pulumitest.Python: "helm_template"}[lang])
		s.cli = s.stack.CLI
	case pulumitest.Go:
		// Go's scenarios run through the Automation API driver, which takes
		// no --diff and has no project directory of its own for `pulumi
		// stack ...`: the stack keeps its state in a backend the test names,
		// which the CLI then reads.
		s.stack = pulumitest.NewAutomation(t, lang, "helm-template")
		s.flags = nil
		s.cli = stateReader(t, s.stack, "k8sconnect-go")
	case pulumitest.YAML:
		// YAML programs pick objects by key, and the keys name the release
		// namespace and the CRD group: the program fixes both.
		program, err := os.ReadFile(filepath.Join(repo, "examples", "pulumi-yaml", "scenarios", "helm-template.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		s.namespace, s.group = "k8sconnect-helm-template", shopGroup
		s.stack = pulumitest.NewYAMLProgram(t, string(program))
		s.cli = s.stack.CLI
	default:
		t.Fatalf("no helm-template scenario in %s", lang)
	}
	if lang != pulumitest.YAML {
		s.config["namespace"] = pulumitest.Plain(s.namespace)
	}
	s.config["chart"] = pulumitest.Plain(shopChart(t, filepath.Join(repo, "provider", "helmtemplate", "testdata", "charts", "shop"), s.group))
	s.check(t)
}

// check runs the stack through up, an empty preview, the leak searches and
// destroy, and looks at the cluster after each.
func (s helmTemplateStack) check(t *testing.T) {
	greeting := acctest.NewSecretValue("greet")
	s.config["greeting"] = pulumitest.Plain(greeting.Plain)
	ns := s.namespace

	res := s.stack.Run(pulumitest.Up, s.config, s.flags...)
	// Namespace, CRD, ClusterRole, Deployment, Shelf, ConfigMap, Secret, the stack.
	expectChanges(t, res, map[string]int{"create": 8})
	if res.Outputs["chartVersion"] != "1.2.3" {
		t.Errorf("output chartVersion = %v, want 1.2.3", res.Outputs["chartVersion"])
	}
	if hooks := outputKeys(res.Outputs["hooks"]); !slices.Equal(hooks, []string{"batch/Job/" + ns + "/web-shop-migrate"}) {
		t.Errorf("output hooks = %v, want the migrate Job alone", res.Outputs["hooks"])
	}
	if err := acctest.ConfigMapHas(t, ns, "web-shop", "greeting", greeting.Plain); err != nil {
		t.Fatalf("the setSensitive value did not reach the cluster: %v", err)
	}
	crd := "shelves." + s.group
	clusterRole := "web-shop-" + ns + "-reader"
	acctest.MustGet(t, helmCRDs, "", crd)
	acctest.MustGet(t, helmClusterRoles, "", clusterRole)
	acctest.MustGet(t, schema.GroupVersionResource{Group: s.group, Version: "v1", Resource: "shelves"}, ns, "web-shop")
	generated := acctest.MustGet(t, secSecrets, ns, "web-shop-auth")
	password := acctest.SecretValue{Plain: decodeSecretKey(t, generated, "password")}
	uid := generated.GetUID()
	acctest.ExpectAbsent(t, "pulumi up", res.Log, greeting, password)

	preview := s.stack.Run(pulumitest.Preview, nil, s.flags...)
	expectChanges(t, preview, map[string]int{"same": 8})
	acctest.ExpectAbsent(t, "pulumi preview", preview.Log, greeting, password)

	exported := s.cli("stack", "export")
	acctest.ExpectPresent(t, "the decrypted stack", s.cli("stack", "export", "--show-secrets"), greeting.Plain)
	acctest.ExpectAbsent(t, "pulumi stack export", exported, greeting, password)
	acctest.ExpectAbsent(t, "pulumi stack output", s.cli("stack", "output", "--json"), greeting, password)
	if after := acctest.MustGet(t, secSecrets, ns, "web-shop-auth"); after.GetUID() != uid {
		t.Errorf("the chart's Secret was replaced: uid %s -> %s", uid, after.GetUID())
	}

	res = s.stack.Run(pulumitest.Destroy, nil)
	expectChanges(t, res, map[string]int{"delete": 8})
	for _, gone := range []struct {
		gvr  schema.GroupVersionResource
		name string
	}{{helmCRDs, crd}, {helmClusterRoles, clusterRole}} {
		if obj, err := acctest.Get(t, gone.gvr, "", gone.name); err != nil || obj != nil {
			t.Errorf("%s %s after destroy: err %v, still there %v", gone.gvr.Resource, gone.name, err, obj != nil)
		}
	}
	// The namespace may still be terminating, with what was in it.
	if obj, err := acctest.Get(t, helmNamespaces, "", ns); err != nil || (obj != nil && obj.GetDeletionTimestamp() == nil) {
		t.Errorf("namespace %s after destroy: err %v, still there and not terminating %v", ns, err, obj != nil)
	}
}

// shopChart copies the chart at dir with its CRD's API group renamed to
// group (the chart itself when group is shopGroup) and returns the copy's
// directory: a CRD is cluster-wide, so runs in parallel need their own.
func shopChart(t *testing.T, dir, group string) string {
	t.Helper()
	if group == shopGroup {
		return dir
	}
	return renamedChart(t, dir, shopGroup, group)
}

// stateReader keeps the state of a stack that the Automation API runs in a
// file backend of the test's own and returns a function that runs a pulumi
// command on it, as `pulumi <args> --stack <stack>` run in a project
// directory would: the driver's workspace, where the CLI would run, is the
// stack's own.
func stateReader(t *testing.T, stack *pulumitest.Stack, project string) func(args ...string) string {
	t.Helper()
	backend := "file://" + filepath.ToSlash(filepath.Join(t.TempDir(), "backend"))
	if err := os.MkdirAll(strings.TrimPrefix(backend, "file://"), 0o755); err != nil {
		t.Fatal(err)
	}
	stack.SetEnv("PULUMI_BACKEND_URL", backend)
	dir := t.TempDir()
	env := append(pulumitest.Environ(t, dir), "PULUMI_BACKEND_URL="+backend)
	pulumi, err := toolchain.Path("pulumi")
	if err != nil {
		t.Fatal(err)
	}
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command(pulumi, append(args, "--stack", "organization/"+project+"/"+stack.Name(), "--non-interactive")...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pulumi %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
}

// outputKeys are the keys of a stack output that lists them (sorted, as the
// programs list them) or that is the map itself (YAML programs have no way
// to list a map's keys).
func outputKeys(output any) []string {
	var keys []string
	switch v := output.(type) {
	case []any:
		for _, k := range v {
			s, _ := k.(string)
			keys = append(keys, s)
		}
	case map[string]any:
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
	}
	return keys
}

func decodeSecretKey(t *testing.T, s *unstructured.Unstructured, key string) string {
	t.Helper()
	b64, _, _ := unstructured.NestedString(s.Object, "data", key)
	plain, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(plain) == 0 {
		t.Fatalf("secret %s data.%s: %v", s.GetName(), key, err)
	}
	return string(plain)
}
