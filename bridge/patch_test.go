package bridge_test

// k8sconnect_patch under Pulumi: the six scenarios of provider/patch's
// Terraform tests (resource_patch_test.go, drift_test.go), run as Pulumi
// programs against the local cluster, with the same assertions: the object in
// the cluster, its field managers, the values a destroy leaves behind, and the
// provider's warnings and errors as `pulumi preview` prints them.
//
// Scenarios 1-3 are example programs (examples/pulumi-typescript/scenarios/
// aws-node-proxy.ts, examples/pulumi-python/scenarios/helm_deployment.py and
// examples/pulumi-go/scenarios/json_and_merge_patch.go); 4-6 are YAML programs
// written here; a Java one (examples/pulumi-java's scenarios.PatchAndWait)
// patches and then waits for the rollout. Run with: go test ./bridge -run
// TestPulumiPatch -v

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/fixtures"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

var (
	patchNamespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	patchDaemonSets  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	patchDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	patchConfigMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// patchConfig is stack config that points a program at the local cluster
// through the kubeconfig's context kubeContext, plus extra.
func patchConfig(t *testing.T, kubeContext string, extra pulumitest.Config) pulumitest.Config {
	t.Helper()
	cfg := pulumitest.Config{
		"kubeconfigPath": pulumitest.Plain(localcluster.Shared(t).KubeconfigPath),
		"context":        pulumitest.Plain(kubeContext),
	}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

func configMapData(t *testing.T, ns, name string) map[string]any {
	t.Helper()
	data, _, _ := unstructured.NestedMap(acctest.MustGet(t, patchConfigMaps, ns, name).Object, "data")
	return data
}

// expectLog fails the test unless the engine output has every one of want,
// whitespace runs joined so that wrapped lines still match.
func expectLog(t *testing.T, res pulumitest.Result, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(flat(res.Log), flat(w)) {
			t.Fatalf("pulumi %s output lacks %q:\n%s", res.Operation, w, res.Log)
		}
	}
}

// expectNoLog fails the test if the engine output has any of unwanted.
func expectNoLog(t *testing.T, res pulumitest.Result, unwanted ...string) {
	t.Helper()
	for _, u := range unwanted {
		if strings.Contains(flat(res.Log), flat(u)) {
			t.Fatalf("pulumi %s output has %q:\n%s", res.Operation, u, res.Log)
		}
	}
}

// outputMap reads a stack output that is a map.
func outputMap(t *testing.T, res pulumitest.Result, name string) map[string]any {
	t.Helper()
	m, ok := res.Outputs[name].(map[string]any)
	if !ok {
		t.Fatalf("output %s = %#v, want a map (outputs %v)", name, res.Outputs[name], res.Outputs)
	}
	return m
}

// outputOwners reads one entry of a previousOwners or fieldOwnership output.
func outputOwners(t *testing.T, res pulumitest.Result, name, key string) []string {
	t.Helper()
	list, ok := outputMap(t, res, name)[key].([]any)
	if !ok {
		t.Fatalf("output %s[%q] = %#v, want a list of managers", name, key, outputMap(t, res, name)[key])
	}
	var out []string
	for _, v := range list {
		out = append(out, fmt.Sprint(v))
	}
	return out
}

// releasedEvent reports whether an OwnershipReleased Event on the object names path.
func releasedEvent(t *testing.T, ns, name, path string) bool {
	t.Helper()
	evs, err := acctest.Clientset(t).CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.Items {
		if e.Reason == "OwnershipReleased" && e.InvolvedObject.Name == name && strings.Contains(e.Message, path) {
			return true
		}
	}
	return false
}

// Scenario 1 (TypeScript): the EKS aws-node DaemonSet, in a namespace that
// EKS made, gets proxy env vars; its other env vars and containers stay
// EKS's, and destroy leaves the values and takes our manager away.
func TestPulumiPatch_awsNodeProxy(t *testing.T) {
	skipShort(t)
	t.Parallel()
	const eks = "eks.amazonaws.com"
	ns := acctest.Name("eks")
	acctest.ApplyAs(t, eks, patchNamespaces, "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n")
	t.Cleanup(func() {
		_ = acctest.Clientset(t).CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	acctest.ApplyAs(t, eks, patchDaemonSets, fixtures.AWSNodeDaemonSet(ns))
	awsNode := func() *unstructured.Unstructured { return acctest.MustGet(t, patchDaemonSets, ns, "aws-node") }
	const (
		httpProxy = "spec.template.spec.containers[name=aws-node].env[name=HTTP_PROXY].value"
		nameKey   = "spec.template.spec.containers[name=aws-node].name"
	)

	stack := pulumitest.NewScenario(t, pulumitest.TypeScript, "aws-node-proxy")
	cfg := patchConfig(t, localcluster.TokenContext, pulumitest.Config{"namespace": pulumitest.Plain(ns)})

	// The preview names the manager the patch takes fields from, and changes nothing.
	res := stack.Run(pulumitest.Preview, cfg)
	expectChanges(t, res, map[string]int{"create": 2})
	expectLog(t, res, "Field ownership override",
		"currently managed by: "+eks,
		nameKey+" (from "+eks+")")
	if env := acctest.ContainerEnv(awsNode(), "aws-node"); env["HTTP_PROXY"] != "" {
		t.Fatalf("the preview applied the patch: env %v", env)
	}

	res = stack.Run(pulumitest.Up, nil)
	expectChanges(t, res, map[string]int{"create": 2})
	if got := outputMap(t, res, "managedFields")[httpProxy]; got != "http://proxy:3128" {
		t.Errorf("output managedFields[%q] = %v, want http://proxy:3128", httpProxy, got)
	}
	if got := outputOwners(t, res, "previousOwners", nameKey); !slices.Equal(got, []string{eks}) {
		t.Errorf("output previousOwners[%q] = %v, want [%s]", nameKey, got, eks)
	}
	ds := awsNode()
	env := acctest.ContainerEnv(ds, "aws-node")
	for k, v := range map[string]string{"HTTP_PROXY": "http://proxy:3128", "NO_PROXY": ".svc,.cluster.local",
		"AWS_VPC_K8S_CNI_LOGLEVEL": "DEBUG", "WARM_ENI_TARGET": "1", "__image": "amazon-k8s-cni:v1.18.0"} {
		if env[k] != v {
			t.Errorf("aws-node %s = %q, want %q (env %v)", k, env[k], v, env)
		}
	}
	if other := acctest.ContainerEnv(ds, "aws-eks-nodeagent"); other["__image"] != "aws-network-policy-agent:v1.1.0" {
		t.Errorf("the other container was changed: %v", other)
	}
	if ms := acctest.Managers(ds); !slices.Contains(ms, eks) || len(acctest.PatchManagers(ds)) != 1 {
		t.Errorf("managers = %v, want %s and one k8sconnect-patch-*", ms, eks)
	}
	if t.Failed() {
		t.FailNow()
	}

	// Changing the patch is an in-place update.
	res = stack.Run(pulumitest.Preview, pulumitest.Config{"noProxy": pulumitest.Plain(".svc,.cluster.local,169.254.169.254")})
	expectChanges(t, res, map[string]int{"same": 1, "update": 1})
	res = stack.Run(pulumitest.Up, nil)
	expectChanges(t, res, map[string]int{"same": 1, "update": 1})
	if got := acctest.ContainerEnv(awsNode(), "aws-node")["NO_PROXY"]; got != ".svc,.cluster.local,169.254.169.254" {
		t.Fatalf("NO_PROXY after the update = %q", got)
	}

	// Destroy releases the fields: the values stay, our manager goes.
	res = stack.Run(pulumitest.Destroy, nil)
	expectChanges(t, res, map[string]int{"delete": 2})
	ds = awsNode()
	if ms := acctest.PatchManagers(ds); len(ms) != 0 {
		t.Errorf("our field manager is still in managedFields after destroy: %v", acctest.Managers(ds))
	}
	env = acctest.ContainerEnv(ds, "aws-node")
	if env["HTTP_PROXY"] != "http://proxy:3128" || env["WARM_ENI_TARGET"] != "1" {
		t.Errorf("destroy changed the env; it must leave the values: %v", env)
	}
	if !releasedEvent(t, ns, "aws-node", "env[name=HTTP_PROXY]") {
		t.Errorf("no OwnershipReleased event on aws-node")
	}
}

// containerLimits returns the resource limits of a Deployment's containers by name.
func containerLimits(obj *unstructured.Unstructured) map[string]map[string]any {
	cs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	out := map[string]map[string]any{}
	for _, c := range cs {
		limits, _, _ := unstructured.NestedMap(c.(map[string]any), "resources", "limits")
		out[fmt.Sprint(c.(map[string]any)["name"])] = limits
	}
	return out
}

// Scenario 2 (Python): a Deployment a "helm" manager applied gets an
// annotation and a new memory limit for one container, found by name.
func TestPulumiPatch_helmDeployment(t *testing.T) {
	skipShort(t)
	t.Parallel()
	ns := acctest.Namespace(t)
	acctest.ApplyAs(t, "helm", patchDeployments, fixtures.HelmDeployment(ns))
	web := func() *unstructured.Unstructured { return acctest.MustGet(t, patchDeployments, ns, "web") }
	const (
		memory     = "spec.template.spec.containers[name=web].resources.limits.memory"
		annotation = `metadata.annotations["example.com/owner"]`
	)

	stack := pulumitest.NewScenario(t, pulumitest.Python, "helm_deployment")
	res := stack.Run(pulumitest.Preview, patchConfig(t, localcluster.CertContext, pulumitest.Config{"namespace": pulumitest.Plain(ns)}))
	expectChanges(t, res, map[string]int{"create": 2})
	expectLog(t, res, "Field ownership override", "currently managed by: helm", memory+" (from helm)")
	if got := containerLimits(web())["web"]["memory"]; got != "256Mi" {
		t.Fatalf("the preview changed the memory limit to %v", got)
	}

	res = stack.Run(pulumitest.Up, nil)
	expectChanges(t, res, map[string]int{"create": 2})
	fields := outputMap(t, res, "managedFields")
	if fields[memory] != "1Gi" || fields[annotation] != "platform" {
		t.Errorf("output managedFields = %v, want %s = 1Gi and %s = platform", fields, memory, annotation)
	}
	if got := outputOwners(t, res, "previousOwners", memory); !slices.Equal(got, []string{"helm"}) {
		t.Errorf("output previousOwners[%q] = %v, want [helm]", memory, got)
	}
	d := web()
	if got := d.GetAnnotations()["example.com/owner"]; got != "platform" {
		t.Errorf("annotation example.com/owner = %q, want platform (annotations %v)", got, d.GetAnnotations())
	}
	limits := containerLimits(d)
	if len(limits) != 2 || limits["web"]["memory"] != "1Gi" || limits["web"]["cpu"] != "500m" {
		t.Errorf("limits = %v, want web memory 1Gi and cpu 500m kept, and the sidecar", limits)
	}
	if limits["sidecar"]["cpu"] != "100m" {
		t.Errorf("sidecar limits changed: %v", limits["sidecar"])
	}
	if ms := acctest.Managers(d); !slices.Contains(ms, "helm") || len(acctest.PatchManagers(d)) != 1 {
		t.Errorf("managers = %v, want helm and one k8sconnect-patch-*", ms)
	}
	if t.Failed() {
		t.FailNow()
	}

	res = stack.Run(pulumitest.Destroy, nil)
	expectChanges(t, res, map[string]int{"delete": 2})
	d = web()
	if ms := acctest.PatchManagers(d); len(ms) != 0 {
		t.Errorf("our field manager is still in managedFields after destroy: %v", acctest.Managers(d))
	}
	if d.GetAnnotations()["example.com/owner"] != "platform" || containerLimits(d)["web"]["memory"] != "1Gi" {
		t.Errorf("destroy reverted the patch (annotations %v, limits %v); it must leave the values", d.GetAnnotations(), containerLimits(d))
	}
}

func configMapOwnedBy(t *testing.T, manager, ns, name, data string) {
	t.Helper()
	acctest.ApplyAs(t, manager, patchConfigMaps, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: %s\n", name, ns, data))
}

// Scenario 3 (Go): a JSON Patch with all six RFC 6902 operations and "~1"
// escaping, whose failing test operation is a clean error at preview; and a
// merge patch that sets one key and deletes another with null.
func TestPulumiPatch_jsonPatchAndMergePatch(t *testing.T) {
	skipShort(t)
	t.Parallel()
	ns := acctest.Namespace(t)
	configMapOwnedBy(t, "tool", ns, "cfg", `{a: "1", b: "2", c: "3", d: "4", keep: "x"}`)
	configMapOwnedBy(t, "tool", ns, "merge", `{keep: "x", drop: "y"}`)
	stack := pulumitest.NewScenario(t, pulumitest.Go, "json-and-merge-patch")

	// The test operation expects data.keep to be "not-x": the server's dry
	// run rejects the whole patch, and the preview says which operation failed.
	res, err := stack.Try(pulumitest.Preview, patchConfig(t, localcluster.CertContext, pulumitest.Config{
		"namespace": pulumitest.Plain(ns),
		"keep":      pulumitest.Plain("not-x"),
	}))
	if err == nil {
		t.Fatalf("pulumi preview with a failing test operation succeeded:\n%s", res.Log)
	}
	expectLog(t, res, "The API server rejected the patch", "ConfigMap "+ns+"/cfg",
		"jsonPatch operation 0 (test /data/keep) failed: testing value /data/keep failed")
	if data := configMapData(t, ns, "cfg"); len(data) != 5 || data["b"] != "2" {
		t.Fatalf("the failed preview changed the ConfigMap: %v", data)
	}

	res = stack.Run(pulumitest.Up, pulumitest.Config{"keep": pulumitest.Plain("x")})
	expectChanges(t, res, map[string]int{"create": 3})
	cm := acctest.MustGet(t, patchConfigMaps, ns, "cfg")
	data, _, _ := unstructured.NestedMap(cm.Object, "data")
	want := map[string]any{"a": "one", "moved": "3", "d": "4", "copied": "4", "keep": "x"}
	if fmt.Sprint(data) != fmt.Sprint(want) {
		t.Errorf("cfg data = %v, want %v (b removed, c moved)", data, want)
	}
	if got := cm.GetAnnotations()["prometheus.io/scrape"]; got != "true" {
		t.Errorf("~1 was not unescaped: annotations %v", cm.GetAnnotations())
	}
	merged := configMapData(t, ns, "merge")
	if fmt.Sprint(merged) != fmt.Sprint(map[string]any{"added": "z", "keep": "x"}) {
		t.Errorf("merge data = %v, want added=z, keep=x and drop deleted", merged)
	}
	if got := outputMap(t, res, "mergeManagedFields")["data.added"]; got != "z" {
		t.Errorf("output mergeManagedFields[data.added] = %v, want z", got)
	}
	if t.Failed() {
		t.FailNow()
	}

	// JSON Patch operations do not apply twice ("remove /data/b" finds
	// nothing to remove); an unchanged patch must still preview no change.
	res = stack.Run(pulumitest.Preview, nil)
	expectChanges(t, res, map[string]int{"same": 3})

	res = stack.Run(pulumitest.Destroy, nil)
	expectChanges(t, res, map[string]int{"delete": 3})
	for _, name := range []string{"cfg", "merge"} {
		if ms := acctest.PatchManagers(acctest.MustGet(t, patchConfigMaps, ns, name)); len(ms) != 0 {
			t.Errorf("ConfigMap %s: our field manager is still there after destroy: %v", name, ms)
		}
	}
	if got := configMapData(t, ns, "cfg")["a"]; got != "one" {
		t.Errorf("destroy reverted cfg's data.a to %v; it must leave the value", got)
	}
	if got := configMapData(t, ns, "merge")["added"]; got != "z" {
		t.Errorf("destroy reverted merge's data.added to %v; it must leave the value", got)
	}
}

// patchProgram is a YAML program of k8sconnect:Patch resources (YAML, indented
// by four spaces), each given clusterConnection: ${cluster}, the kubeconfig
// and context of the stack's config.
func patchProgram(resources string) string {
	return `name: k8sconnect-patch
runtime: yaml
config:
  kubeconfigPath:
    type: string
  context:
    type: string
variables:
  cluster:
    kubeconfig:
      fn::secret:
        fn::readFile: ${kubeconfigPath}
    context: ${context}
resources:
` + resources
}

// configMapPatch is one k8sconnect:Patch of ConfigMap ns/name in a
// patchProgram; body is its patch-type properties, one per line.
func configMapPatch(resource, ns, name string, body ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %s:\n    type: k8sconnect:Patch\n    properties:\n      clusterConnection: ${cluster}\n", resource)
	fmt.Fprintf(&b, "      target: {apiVersion: v1, kind: ConfigMap, name: %s, namespace: %s}\n", name, ns)
	for _, l := range body {
		b.WriteString("      " + l + "\n")
	}
	return b.String()
}

// Scenario 4 (YAML): two patches on one ConfigMap with disjoint fields; each
// destroy releases only its own.
func TestPulumiPatch_twoPatchesReleaseOnlyTheirOwn(t *testing.T) {
	skipShort(t)
	t.Parallel()
	ns := acctest.Namespace(t)
	configMapOwnedBy(t, "tool", ns, "shared", `{base: "1"}`)
	one := configMapPatch("one", ns, "shared", `patch: "data: {one: '1'}"`, "takeOwnership: true")
	two := configMapPatch("two", ns, "shared", `patch: "data: {two: '2'}"`, "takeOwnership: true")
	const outputs = "outputs:\n  oneManager: k8sconnect-patch-${one.id}\n  twoManager: k8sconnect-patch-${two.id}\n"
	stack := pulumitest.NewYAMLProgram(t, patchProgram(one+two+outputs))

	res := stack.Run(pulumitest.Up, patchConfig(t, localcluster.TokenContext, nil))
	expectChanges(t, res, map[string]int{"create": 3})
	oneManager, twoManager := fmt.Sprint(res.Outputs["oneManager"]), fmt.Sprint(res.Outputs["twoManager"])
	cm := acctest.MustGet(t, patchConfigMaps, ns, "shared")
	if data, _, _ := unstructured.NestedMap(cm.Object, "data"); data["one"] != "1" || data["two"] != "2" || data["base"] != "1" {
		t.Fatalf("data = %v, want base, one and two", data)
	}
	if ms := acctest.PatchManagers(cm); !slices.Contains(ms, oneManager) || !slices.Contains(ms, twoManager) || len(ms) != 2 {
		t.Fatalf("patch managers = %v, want %s and %s", ms, oneManager, twoManager)
	}

	// Removing "one" from the program destroys it alone.
	stack.WriteYAML(patchProgram(two + "outputs:\n  twoManager: k8sconnect-patch-${two.id}\n"))
	res = stack.Run(pulumitest.Up, nil)
	expectChanges(t, res, map[string]int{"same": 2, "delete": 1})
	cm = acctest.MustGet(t, patchConfigMaps, ns, "shared")
	if ms := acctest.PatchManagers(cm); !slices.Equal(ms, []string{twoManager}) {
		t.Fatalf("after destroying one, patch managers = %v; want only %s", ms, twoManager)
	}
	if data, _, _ := unstructured.NestedMap(cm.Object, "data"); data["one"] != "1" || data["two"] != "2" {
		t.Fatalf("destroying one changed the data: %v", data)
	}

	res = stack.Run(pulumitest.Destroy, nil)
	expectChanges(t, res, map[string]int{"delete": 2})
	cm = acctest.MustGet(t, patchConfigMaps, ns, "shared")
	if ms := acctest.PatchManagers(cm); len(ms) != 0 {
		t.Fatalf("after destroying two, patch managers = %v; want none", ms)
	}
	if ms := acctest.Managers(cm); !slices.Contains(ms, "tool") {
		t.Fatalf("the releases took the other manager away: managers %v", ms)
	}
	if data, _, _ := unstructured.NestedMap(cm.Object, "data"); data["one"] != "1" || data["two"] != "2" || data["base"] != "1" {
		t.Fatalf("destroy changed the data: %v", data)
	}
}

// Scenario 5 (YAML): a controller keeps writing the patched field; `pulumi
// preview --refresh` shows the drift and names the controller, and up
// applies the patch again.
func TestPulumiPatch_driftNamesTheController(t *testing.T) {
	skipShort(t)
	t.Parallel()
	ns := acctest.Namespace(t)
	configMapOwnedBy(t, "tool", ns, "tuned", `{level: "low"}`)
	level := func() any { return configMapData(t, ns, "tuned")["level"] }
	stack := pulumitest.NewYAMLProgram(t, patchProgram(configMapPatch("tune", ns, "tuned", `patch: "data: {level: high}"`, "takeOwnership: true")))

	res := stack.Run(pulumitest.Preview, patchConfig(t, localcluster.CertContext, nil))
	expectChanges(t, res, map[string]int{"create": 2})
	expectLog(t, res, "Field ownership override", "data.level (from tool)")
	res = stack.Run(pulumitest.Up, nil)
	expectChanges(t, res, map[string]int{"create": 2})
	if got := level(); got != "high" {
		t.Fatalf("level after up = %v, want high", got)
	}

	configMapOwnedBy(t, "level-controller", ns, "tuned", `{level: "medium"}`)
	res = stack.Run(pulumitest.Preview, nil, pulumitest.RefreshFirst)
	expectChanges(t, res, map[string]int{"same": 1, "update": 1})
	expectLog(t, res, "Drift: external changes will be reverted", "data.level: medium -> high (changed by level-controller)",
		`To let level-controller manage them, remove them from the patch: ["data.level"]`)
	expectNoLog(t, res, "ignore_fields")
	if got := level(); got != "medium" {
		t.Fatalf("the preview changed level to %v", got)
	}

	res = stack.Run(pulumitest.Up, nil)
	expectChanges(t, res, map[string]int{"same": 1, "update": 1})
	if got := level(); got != "high" {
		t.Fatalf("level after up = %v, want high (the patch applied again)", got)
	}
	res = stack.Run(pulumitest.Preview, nil, pulumitest.RefreshFirst)
	expectChanges(t, res, map[string]int{"same": 2})
	expectNoLog(t, res, "Drift")
}

// Scenario 6 (YAML): bad input is an error at preview that says what is
// wrong, and nothing reaches the cluster or the stack.
func TestPulumiPatch_badInput(t *testing.T) {
	skipShort(t)
	t.Parallel()
	ns := acctest.Namespace(t)
	configMapOwnedBy(t, "tool", ns, "victim", `{a: "1"}`)
	cases := []struct {
		name string
		body []string
		want string
	}{
		{"invalid YAML", []string{`patch: "data: [unclosed"`, "takeOwnership: true"}, "patch is not valid YAML or JSON"},
		{"invalid JSON", []string{`jsonPatch: '[{"op": "add", "path": "/data/x"'`, "takeOwnership: true"}, "jsonPatch must be a JSON array of operations"},
		{"op without path", []string{`jsonPatch: '[{"op": "add", "value": "x"}]'`, "takeOwnership: true"}, "jsonPatch operation 0 (add) needs a path"},
		{"op without value", []string{`jsonPatch: '[{"op": "replace", "path": "/data/a"}]'`, "takeOwnership: true"}, "jsonPatch operation 0 (replace) needs a value"},
		{"takeOwnership false", []string{`patch: "data: {a: b}"`, "takeOwnership: false"}, "takeOwnership must be true"},
		{"two patch types", []string{`patch: "data: {a: b}"`, `mergePatch: "data: {a: c}"`, "takeOwnership: true"}, "2 attributes specified when one (and only one) of"},
		{"metadata.uid", []string{`mergePatch: "metadata: {uid: abc}"`, "takeOwnership: true"}, "sets metadata.uid, which the API server owns"},
		{"status", []string{`jsonPatch: '[{"op": "add", "path": "/status/x", "value": 1}]'`, "takeOwnership: true"}, "changes status, which the object's controller owns"},
	}
	stack := pulumitest.NewYAMLProgram(t, patchProgram(configMapPatch("bad", ns, "victim", cases[0].body...)))
	cfg := patchConfig(t, localcluster.TokenContext, nil)
	// One stack, one program after another: a subtest could not use it.
	for _, tc := range cases {
		stack.WriteYAML(patchProgram(configMapPatch("bad", ns, "victim", tc.body...)))
		res, err := stack.Try(pulumitest.Preview, cfg)
		cfg = nil
		switch {
		case err == nil:
			t.Errorf("%s: pulumi preview succeeded; want an error saying %q:\n%s", tc.name, tc.want, res.Log)
		case !strings.Contains(flat(res.Log), tc.want):
			t.Errorf("%s: pulumi preview failed without saying %q:\n%s", tc.name, tc.want, res.Log)
		}
	}
	if resources, pending := stack.Resources(); len(resources) != 0 || pending != 0 {
		t.Errorf("the stack has %v and %d pending operations; want nothing", resources, pending)
	}
	cm := acctest.MustGet(t, patchConfigMaps, ns, "victim")
	if data, _, _ := unstructured.NestedMap(cm.Object, "data"); len(data) != 1 || data["a"] != "1" {
		t.Errorf("bad input changed the target: %v", data)
	}
	if ms := acctest.PatchManagers(cm); len(ms) != 0 {
		t.Errorf("bad input left a patch manager on the target: %v", ms)
	}
}

// rolloutIncomplete says what a Deployment's rollout still lacks, as
// `kubectl rollout status` judges it, or "" once it has finished.
func rolloutIncomplete(d *unstructured.Unstructured) string {
	status := func(field string) int64 {
		v, _, _ := unstructured.NestedInt64(d.Object, "status", field)
		return v
	}
	want, found, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
	if !found {
		want = 1
	}
	switch {
	case status("observedGeneration") < d.GetGeneration():
		return fmt.Sprintf("generation %d not observed yet (observed %d)", d.GetGeneration(), status("observedGeneration"))
	case status("updatedReplicas") < want:
		return fmt.Sprintf("%d of %d replicas updated", status("updatedReplicas"), want)
	case status("replicas") > status("updatedReplicas"):
		return fmt.Sprintf("%d old replicas pending termination", status("replicas")-status("updatedReplicas"))
	case status("availableReplicas") < status("updatedReplicas"):
		return fmt.Sprintf("%d of %d updated replicas available", status("availableReplicas"), status("updatedReplicas"))
	}
	return ""
}

// Scenario 7 (Java): a Deployment that a "helm" manager made with client-go,
// outside Pulumi, gets an env var through a Patch, and a Wait holds `pulumi
// up` until the rollout that the patch starts has finished.
func TestPulumiPatch_javaPatchAndWait(t *testing.T) {
	skipShort(t)
	t.Parallel()
	ns := acctest.Namespace(t)
	acctest.ApplyAs(t, "helm", patchDeployments, fixtures.HelmDeployment(ns))
	web := func() *unstructured.Unstructured { return acctest.MustGet(t, patchDeployments, ns, "web") }
	// The first rollout, Helm's, finishes before the patch, so what the Wait
	// waits for is the patch's.
	for deadline := time.Now().Add(time.Minute); rolloutIncomplete(web()) != ""; time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("helm's rollout of web did not finish: %s", rolloutIncomplete(web()))
		}
	}
	before := web().GetGeneration()
	// The patched pods start 3s after they were created, as on a slow node:
	// without the Wait, `pulumi up` would return while the old pod still runs.
	waitReleasePodsAfter(t, ns, "app=web", 3*time.Second)
	const greeting = "spec.template.spec.containers[name=web].env[name=GREETING].value"

	stack := pulumitest.NewScenario(t, pulumitest.Java, "PatchAndWait")
	res := stack.Run(pulumitest.Up, patchConfig(t, localcluster.TokenContext, pulumitest.Config{
		"namespace":      pulumitest.Plain(ns),
		"greeting":       pulumitest.Plain("hola"),
		"podAnnotations": holdPods(),
	}))
	// The Patch, the Wait and the stack.
	expectChanges(t, res, map[string]int{"create": 3})
	if got := outputMap(t, res, "managedFields")[greeting]; got != "hola" {
		t.Errorf("output managedFields[%q] = %v, want hola", greeting, got)
	}
	d := web()
	if d.GetGeneration() <= before {
		t.Fatalf("the patch started no rollout: generation %d, was %d", d.GetGeneration(), before)
	}
	if msg := rolloutIncomplete(d); msg != "" {
		t.Fatalf("pulumi up returned before the patch's rollout finished: %s", msg)
	}
	if env := acctest.ContainerEnv(d, "web"); env["GREETING"] != "hola" || env["__image"] != "nginx:1.27" {
		t.Errorf("web container env = %v, want GREETING=hola and helm's image kept", env)
	}
	if sidecar := acctest.ContainerEnv(d, "sidecar"); sidecar["GREETING"] != "" || sidecar["__image"] != "envoy:v1.30" {
		t.Errorf("the sidecar was changed: %v", sidecar)
	}
	if ms := acctest.Managers(d); !slices.Contains(ms, "helm") || len(acctest.PatchManagers(d)) != 1 {
		t.Errorf("managers = %v, want helm and one k8sconnect-patch-*", ms)
	}
	if t.Failed() {
		t.FailNow()
	}

	// A finished rollout is not judged again, and the patch holds: nothing to do.
	res = stack.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges)
	expectChanges(t, res, map[string]int{"same": 3})

	// Destroy releases the env var: the value stays, our manager goes, and
	// the Deployment stays helm's.
	res = stack.Run(pulumitest.Destroy, nil)
	expectChanges(t, res, map[string]int{"delete": 3})
	d = web()
	if ms := acctest.PatchManagers(d); len(ms) != 0 {
		t.Errorf("our field manager is still in managedFields after destroy: %v", acctest.Managers(d))
	}
	if env := acctest.ContainerEnv(d, "web"); env["GREETING"] != "hola" {
		t.Errorf("destroy reverted the patch (env %v); it must leave the value", env)
	}
}
