package bridge_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// Requests per object of a Pulumi update, counted against the real server.
//
// Pulumi plans an update more than once in one process: a preview runs the
// Diff and then previews the Update; the update runs the Diff again and then
// the plan the Update makes before it applies. Were each of those plans to
// read the object and ask for a dry run, that would be 4 requests to preview
// and 5 to update. A plan hands what it read, and the dry run's answer, to
// the next plan of the same object, so each process reads once and asks
// once: 2 to preview, 3 to update (the apply one of them), and `pulumi up`
// with its preview costs 5, not 9.
//
// The drifted object (another manager changed our field between the runs)
// shows that the plans handed on still see what the first one read: the
// preview warns, and the update sets our value over theirs.
func TestPulumiRequests_updateReadsOncePerProcess(t *testing.T) {
	skipShort(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	names := []string{acctest.Name("plain"), acctest.Name("drifted")}
	program := func(value string) string {
		t.Helper()
		resources := map[string]any{}
		for i, name := range names {
			resources[fmt.Sprintf("cm%d", i)] = map[string]any{"type": "k8sconnect:KubernetesObject", "properties": map[string]any{
				"clusterConnection": map[string]any{"kubeconfigFile": cluster.KubeconfigPath},
				"yamlBody":          fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {key: %s}\n", name, ns, value),
			}}
		}
		b, err := yaml.Marshal(map[string]any{"name": "k8sconnect-requests", "runtime": "yaml", "resources": resources})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	log := filepath.Join(t.TempDir(), "requests.log")
	s := pulumitest.NewYAMLProgram(t, program("one"))
	s.SetEnv("K8SCONNECT_REQUEST_LOG", log)
	expectChanges(t, s.Run(pulumitest.Up, nil), map[string]int{"create": 3})

	acctest.PatchAs(t, "config-controller", objConfigMaps, ns, names[1], `{"data":{"key":"theirs"}}`)
	s.WriteYAML(program("two"))
	acctest.ClearRequestLog(t, log)
	preview := s.Run(pulumitest.Preview, nil)
	expectChanges(t, preview, map[string]int{"same": 1, "update": 2})
	if !strings.Contains(flat(preview.Log), "data.key: theirs -> two (last applied one; they set theirs (changed by config-controller))") {
		t.Errorf("the preview does not warn that config-controller's value will be replaced:\n%s", preview.Log)
	}
	for _, name := range names {
		expectRequests(t, log, name, "the preview", "GET", "PATCH dryRun")
	}

	acctest.ClearRequestLog(t, log)
	expectChanges(t, s.Run(pulumitest.Up, nil), map[string]int{"same": 1, "update": 2})
	for _, name := range names {
		expectRequests(t, log, name, "the update", "GET", "PATCH dryRun", "PATCH")
		if err := acctest.ConfigMapHas(t, ns, name, "key", "two"); err != nil {
			t.Error(err)
		}
	}
}

// expectRequests checks that the requests logged for the ConfigMap name were
// exactly want, in order: a method, with " dryRun" for a dry run.
func expectRequests(t *testing.T, log, name, what string, want ...string) {
	t.Helper()
	var got []string
	for _, line := range acctest.RequestsTo(t, log, "configmaps", name) {
		method, url, _ := strings.Cut(line, " ")
		if _, query, _ := strings.Cut(url, "?"); strings.Contains(query, "dryRun") {
			method += " dryRun"
		}
		got = append(got, method)
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("%s sent %d requests for %s: %s; want exactly %s", what, len(got), name, strings.Join(got, ", "), strings.Join(want, ", "))
	}
}

// Requests per object of a HelmRelease upgrade under Pulumi, counted against
// the real server: as for KubernetesObject above, each process reads each
// object once and dry-runs it at most once, however many times the engine
// plans the release in it (its Diff, then its Update). And an upgrade
// dry-runs only what it renders otherwise (ADR 0013, item 14): the
// ConfigMap that holds the changed value and the one that writes
// .Release.Revision, not the steady one.
func TestPulumiRequests_helmReleaseUpgradeReadsOncePerProcess(t *testing.T) {
	skipShort(t)
	t.Parallel()
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, ns := localcluster.Shared(t).KubeconfigPath, acctest.Namespace(t)
	chart := filepath.Join(repo, "provider", "helmrelease", "testdata", "charts", "counted")
	program := func(greeting string) string {
		return releaseProgram(t, "k8sconnect-release-requests", map[string]map[string]any{"release": {
			"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
			"name":              "counted", "namespace": ns, "chart": chart, "wait": false,
			"set": []any{map[string]any{"name": "greeting", "value": greeting}},
		}}, nil)
	}
	log := filepath.Join(t.TempDir(), "requests.log")
	s := pulumitest.NewYAMLProgram(t, program("hello"))
	s.SetEnv("K8SCONNECT_REQUEST_LOG", log)
	expectChanges(t, s.Run(pulumitest.Up, nil), map[string]int{"create": 2})

	s.WriteYAML(program("bonjour"))
	acctest.ClearRequestLog(t, log)
	expectChanges(t, s.Run(pulumitest.Preview, nil), map[string]int{"same": 1, "update": 1})
	expectRequests(t, log, "counted-steady", "the preview", "GET")
	for _, changed := range []string{"counted-greeting", "counted-revision"} {
		expectRequests(t, log, changed, "the preview", "GET", "PATCH dryRun")
	}

	acctest.ClearRequestLog(t, log)
	expectChanges(t, s.Run(pulumitest.Up, nil), map[string]int{"same": 1, "update": 1})
	expectRequests(t, log, "counted-steady", "the update", "GET", "PATCH")
	for _, changed := range []string{"counted-greeting", "counted-revision"} {
		expectRequests(t, log, changed, "the update", "GET", "PATCH dryRun", "PATCH")
	}
	for name, want := range map[string][2]string{"counted-greeting": {"greeting", "bonjour"}, "counted-revision": {"revision", "2"},
		"counted-steady": {"note", "steady"}} {
		if err := acctest.ConfigMapHas(t, ns, name, want[0], want[1]); err != nil {
			t.Error(err)
		}
	}
}

// A HelmRelease into a namespace its apply makes (createNamespace) sends no
// dry run of its objects, neither in the preview nor in the plan of the
// update's create: one read tells each process the namespace is not there
// yet, and the server would hold each dry run 50 ms before saying so. The
// create applies each object once.
func TestPulumiRequests_helmReleaseIntoANewNamespace(t *testing.T) {
	skipShort(t)
	t.Parallel()
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, ns := localcluster.Shared(t).KubeconfigPath, acctest.NamespaceToMake(t)
	chart := filepath.Join(repo, "provider", "helmrelease", "testdata", "charts", "counted")
	log := filepath.Join(t.TempDir(), "requests.log")
	s := pulumitest.NewYAMLProgram(t, releaseProgram(t, "k8sconnect-release-new-namespace", map[string]map[string]any{"release": {
		"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
		"name":              "counted", "namespace": ns, "createNamespace": true, "chart": chart, "wait": false,
		"set": []any{map[string]any{"name": "greeting", "value": "hello"}},
	}}, nil))
	s.SetEnv("K8SCONNECT_REQUEST_LOG", log)
	expectChanges(t, s.Run(pulumitest.Up, nil), map[string]int{"create": 2})
	for _, name := range []string{"counted-greeting", "counted-steady", "counted-revision"} {
		expectRequests(t, log, name, "the preview and the update", "PATCH")
	}
	if err := acctest.ConfigMapHas(t, ns, "counted-greeting", "greeting", "hello"); err != nil {
		t.Error(err)
	}
}
