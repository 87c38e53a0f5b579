package bridge_test

// The exact-values differential suite under Pulumi: the corpus of
// internal/testing/exactcorpus applied by kubectl and by KubernetesObjects in a
// YAML program, the stored objects compared field by field with every digit,
// an empty preview, an update that flips int-or-string types, drift of one
// unit beyond 2^53, and how numbers Pulumi cannot hold (its numbers are
// float64) reach the program: managedStateProjection is a map of strings, and
// a Wait's status and getObject's object carry integers beyond ±(2^53-1) as
// strings of their digits.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/unicode/norm"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/exactcorpus"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// exactProgram is a YAML program with one KubernetesObject per document, a
// field Wait on int-limits' spec.free.two53plus1 and a getObject of it.
func exactProgram(t *testing.T, docs []exactcorpus.Doc) string {
	t.Helper()
	cluster := localcluster.Shared(t)
	conn := yamlConnection(cluster.Host, cluster.CAPEM, cluster.Token)
	resources := map[string]any{}
	for _, d := range docs {
		resources[resourceName(d)] = map[string]any{
			"type":       "k8sconnect:KubernetesObject",
			"properties": map[string]any{"clusterConnection": conn, "yamlBody": d.Text},
		}
	}
	// The Wait and getObject read the kubeconfig file: a resourceRef whose
	// connection holds a secret token cannot be passed to a Wait from YAML
	// (the bridge fails to encode the secret token nested in it).
	fileConn := map[string]any{"kubeconfigFile": cluster.KubeconfigPath}
	resources["limitswait"] = map[string]any{
		"type": "k8sconnect:index/wait:Wait",
		"properties": map[string]any{
			"resourceRef": map[string]any{
				"apiVersion": exactcorpus.Group + "/v1", "kind": "Exact",
				"name": "${intlimits.resourceRef.name}", "namespace": "${intlimits.resourceRef.namespace}",
				"clusterConnection": fileConn,
			},
			"waitFor": map[string]any{"field": "spec.free.two53plus1", "timeout": "60s"},
		},
	}
	program := map[string]any{
		"name": "k8sconnect-exact", "runtime": "yaml", "resources": resources,
		"variables": map[string]any{
			"limits": map[string]any{"fn::invoke": map[string]any{
				"function": "k8sconnect:index/getObject:getObject",
				"arguments": map[string]any{
					"apiVersion": exactcorpus.Group + "/v1", "kind": "Exact",
					"name": "${intlimits.resourceRef.name}", "namespace": "${intlimits.resourceRef.namespace}",
					"clusterConnection": fileConn,
				},
			}},
		},
		"outputs": map[string]any{
			"projection": "${intlimits.managedStateProjection}",
			"ownership":  "${intlimits.fieldOwnership}",
			"status":     "${limitswait.status}",
			"free":       "${limits.object.spec.free}",
			"json":       "${limits.json}",
		},
	}
	b, err := yaml.Marshal(program)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func resourceName(d exactcorpus.Doc) string { return strings.ReplaceAll(d.Key, "-", "") }

func TestPulumiExact_objectsMatchKubectl(t *testing.T) {
	skipShort(t)
	start := time.Now()
	cluster := localcluster.Shared(t)
	kubeconfig := cluster.KubeconfigPath
	exactcorpus.EnsureCRD(t, kubeconfig)
	nsKubectl, nsPulumi := acctest.Namespace(t), acctest.Namespace(t)
	docs := exactcorpus.Load(t, "corpus", nsPulumi)
	total := len(docs) + 2 // the Wait and the stack

	stack := pulumitest.NewYAMLProgram(t, exactProgram(t, docs))
	res := stack.Run(pulumitest.Up, nil)
	expectChanges(t, res, map[string]int{"create": total})
	exactcorpus.Kubectl(t, kubeconfig, "apply", "--server-side", "-f",
		exactcorpus.Write(t, t.TempDir(), "", exactcorpus.Load(t, "corpus", nsKubectl)))
	compareWithKubectl(t, docs, nsKubectl, nsPulumi)
	checkExactOutputs(t, res.Outputs)
	expectChanges(t, stack.Run(pulumitest.Preview, nil), map[string]int{"same": total})

	// The update: int-or-string values flip between integer and string.
	updated := exactcorpus.Updated(t, nsPulumi)
	stack.WriteYAML(exactProgram(t, updated))
	expectChanges(t, stack.Run(pulumitest.Up, nil), map[string]int{"same": total - 2, "update": 2})
	exactcorpus.Kubectl(t, kubeconfig, "apply", "--server-side", "-f",
		exactcorpus.Write(t, t.TempDir(), "", exactcorpus.Updated(t, nsKubectl)))
	compareWithKubectl(t, updated, nsKubectl, nsPulumi)
	expectChanges(t, stack.Run(pulumitest.Preview, nil), map[string]int{"same": total})

	// Someone else moves two owned fields by one unit: preview shows it, up reverts it.
	var limits exactcorpus.Doc
	for _, d := range docs {
		if d.Key == "int-limits" {
			limits = d
		}
	}
	acctest.PatchAs(t, "kubectl-edit", limits.GVR(), nsPulumi, limits.Name,
		`{"spec":{"free":{"two53plus1":9007199254740992},"typed":{"int64":9223372036854775806}}}`)
	expectChanges(t, stack.Run(pulumitest.Preview, nil), map[string]int{"same": total - 1, "update": 1})
	stack.Run(pulumitest.Up, nil)
	live := exactcorpus.Raw(t, cluster.RESTConfig(), limits.GVR(), nsPulumi, limits.Name)
	if got := fmt.Sprint(exactcorpus.Field(live, "spec", "free", "two53plus1")); got != "9007199254740993" {
		t.Errorf("after pulumi up spec.free.two53plus1 = %s, want 9007199254740993 restored", got)
	}
	if got := fmt.Sprint(exactcorpus.Field(live, "spec", "typed", "int64")); got != "9223372036854775807" {
		t.Errorf("after pulumi up spec.typed.int64 = %s, want 9223372036854775807 restored", got)
	}
	expectChanges(t, stack.Run(pulumitest.Preview, nil), map[string]int{"same": total})
	t.Logf("pulumi: %d documents, create, update, drift and previews: %s", len(docs), time.Since(start).Round(time.Second))
}

func compareWithKubectl(t *testing.T, docs []exactcorpus.Doc, nsKubectl, nsPulumi string) {
	t.Helper()
	compareNamespaces(t, docs, nsKubectl, nsPulumi, "KubernetesObject", func(d exactcorpus.Doc) string { return d.Text })
}

// compareNamespaces holds each document stored in nsPulumi against kubectl's in
// nsKubectl; text is what the program handed the provider for it.
func compareNamespaces(t *testing.T, docs []exactcorpus.Doc, nsKubectl, nsPulumi, how string, text func(exactcorpus.Doc) string) {
	t.Helper()
	cfg := localcluster.Shared(t).RESTConfig()
	for _, d := range docs {
		want := exactcorpus.Raw(t, cfg, d.GVR(), nsKubectl, d.Name)
		if !norm.NFC.IsNormalString(text(d)) {
			// As under Terraform, yamlBody reaches the provider in Unicode NFC
			// (the bridge plans through go-cty, whose strings are NFC).
			want = exactcorpus.NFC(want).(map[string]any)
		}
		got := exactcorpus.Raw(t, cfg, d.GVR(), nsPulumi, d.Name)
		if diffs := exactcorpus.Diff(want, got); len(diffs) > 0 {
			t.Errorf("%s through %s under pulumi differs from kubectl's (kubectl ≠ k8sconnect):\n  %s", d.Key, how, strings.Join(diffs, "\n  "))
		}
	}
}

// checkExactOutputs: what a Pulumi program reads keeps every digit.
func checkExactOutputs(t *testing.T, outputs map[string]any) {
	t.Helper()
	projection, _ := outputs["projection"].(map[string]any)
	for path, want := range map[string]string{
		"spec.free.two53plus1":                     "9007199254740993",
		"spec.free.minInt64":                       "-9223372036854775808",
		"spec.typed.int64":                         "9223372036854775807",
		"spec.byPort[port=9007199254740993].value": "above",
	} {
		if got := projection[path]; got != want {
			t.Errorf("managedStateProjection[%q] = %#v, want %q", path, got, want)
		}
	}
	ownership, _ := outputs["ownership"].(map[string]any)
	if _, ok := ownership["spec.byPort[port=-9223372036854775808].value"]; !ok {
		t.Errorf("fieldOwnership has no path with the int64 minimum as list-map key")
	}
	// Integers beyond ±(2^53-1) arrive as strings; smaller ones as numbers.
	status, _ := outputs["status"].(map[string]any)
	if got := exactcorpus.Field(status, "spec", "free", "two53plus1"); got != "9007199254740993" {
		t.Errorf("Wait status = %#v, want spec.free.two53plus1 as the string \"9007199254740993\"", outputs["status"])
	}
	free, _ := outputs["free"].(map[string]any)
	for key, want := range map[string]any{
		"two53plus1": "9007199254740993", "two63minus1": "9223372036854775807", "minInt64": "-9223372036854775808",
		"two53": "9007199254740992", "quoted": "9007199254740993",
	} {
		if got := free[key]; got != want {
			t.Errorf("getObject object.spec.free.%s = %#v, want %#v", key, got, want)
		}
	}
	if got, ok := free["list"].([]any); !ok || len(got) != 5 || got[3] != float64(0) || got[4] != float64(-1) {
		t.Errorf("getObject object.spec.free.list = %#v, want small integers as numbers", free["list"])
	}
	if js, _ := outputs["json"].(string); !strings.Contains(js, `"two53plus1":9007199254740993`) {
		t.Errorf("getObject json lost digits: %.300s", js)
	}
}

// exactPatchProgram patches every patchable document three ways (Patch with
// patch, mergePatch and jsonPatch, one namespace each) and applies the whole
// corpus again through getYamlSplit and through getYamlScoped's namespaced map.
func exactPatchProgram(t *testing.T, patchable []exactcorpus.Doc, ours map[string]string, split, scoped []exactcorpus.Doc) string {
	t.Helper()
	cluster := localcluster.Shared(t)
	conn := yamlConnection(cluster.Host, cluster.CAPEM, cluster.Token)
	fileConn := map[string]any{"kubeconfigFile": cluster.KubeconfigPath}
	resources := map[string]any{}
	for _, typ := range exactcorpus.PatchTypes {
		for _, d := range patchable {
			props := map[string]any{
				"target":            map[string]any{"apiVersion": d.APIVersion, "kind": d.Kind, "name": d.Name, "namespace": ours[typ]},
				"takeOwnership":     true,
				"clusterConnection": conn,
			}
			switch typ {
			case "apply":
				props["patch"] = d.Payload
			case "merge":
				props["mergePatch"] = d.Payload
			case "json":
				props["jsonPatch"] = d.JSONPatch(t)
			}
			resources[typ+resourceName(d)] = map[string]any{"type": "k8sconnect:index/patch:Patch", "properties": props}
		}
	}
	join := func(docs []exactcorpus.Doc) string {
		var b strings.Builder
		for _, d := range docs {
			b.WriteString("---\n" + d.Text)
		}
		return b.String()
	}
	for i, d := range split {
		resources["split"+resourceName(d)] = map[string]any{"type": "k8sconnect:KubernetesObject", "properties": map[string]any{
			"clusterConnection": conn, "yamlBody": fmt.Sprintf("${split.manifests[%q]}", d.SplitKey())}}
		resources["scoped"+resourceName(d)] = map[string]any{"type": "k8sconnect:KubernetesObject", "properties": map[string]any{
			"clusterConnection": conn, "yamlBody": fmt.Sprintf("${scoped.namespaced[%q]}", scoped[i].SplitKey())}}
	}
	program := map[string]any{
		"name": "k8sconnect-exact-patch", "runtime": "yaml", "resources": resources,
		"variables": map[string]any{
			"split": map[string]any{"fn::invoke": map[string]any{
				"function": "k8sconnect:index/getYamlSplit:getYamlSplit", "arguments": map[string]any{"content": join(split)}}},
			"scoped": map[string]any{"fn::invoke": map[string]any{
				"function":  "k8sconnect:index/getYamlScoped:getYamlScoped",
				"arguments": map[string]any{"content": join(scoped), "clusterConnection": fileConn}}},
		},
	}
	b, err := yaml.Marshal(program)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The corpus through the three Patch types and through getYamlSplit and
// getYamlScoped feeding KubernetesObjects, under Pulumi, against kubectl.
func TestPulumiExact_patchesAndSplitMatchKubectl(t *testing.T) {
	skipShort(t)
	start := time.Now()
	cluster := localcluster.Shared(t)
	kubeconfig := cluster.KubeconfigPath
	exactcorpus.EnsureCRD(t, kubeconfig)
	patchable := exactcorpus.Patchable(exactcorpus.Load(t, "corpus", "placeholder"))
	ours, theirs := map[string]string{}, map[string]string{}
	for _, typ := range exactcorpus.PatchTypes {
		ours[typ], theirs[typ] = acctest.Namespace(t), acctest.Namespace(t)
		exactcorpus.CreateTargets(t, kubeconfig, patchable, ours[typ])
		exactcorpus.CreateTargets(t, kubeconfig, patchable, theirs[typ])
		exactcorpus.KubectlPatch(t, kubeconfig, typ, patchable, theirs[typ])
	}
	nsKubectl, nsSplit, nsScoped := acctest.Namespace(t), acctest.Namespace(t), acctest.Namespace(t)
	split, scoped := exactcorpus.Load(t, "corpus", nsSplit), exactcorpus.Load(t, "corpus", nsScoped)
	exactcorpus.Kubectl(t, kubeconfig, "apply", "--server-side", "-f",
		exactcorpus.Write(t, t.TempDir(), "", exactcorpus.Load(t, "corpus", nsKubectl)))

	total := 3*len(patchable) + 2*len(split) + 1
	stack := pulumitest.NewYAMLProgram(t, exactPatchProgram(t, patchable, ours, split, scoped))
	expectChanges(t, stack.Run(pulumitest.Up, nil), map[string]int{"create": total})
	for _, typ := range exactcorpus.PatchTypes {
		text := func(d exactcorpus.Doc) string { return d.Payload }
		if typ == "json" {
			text = func(d exactcorpus.Doc) string { return d.JSONPatch(t) }
		}
		compareNamespaces(t, patchable, theirs[typ], ours[typ], "Patch "+typ, text)
	}
	// The program hands the functions the documents as written (Pulumi YAML
	// does not normalize them), and they hand yamlBody JSON in ASCII, with
	// escapes for every other character, which the bridge's go-cty cannot
	// normalize either: the reference is kubectl's object as it is, decomposed
	// characters included. An empty text is NFC, which says so.
	asJSON := func(exactcorpus.Doc) string { return "" }
	compareNamespaces(t, split, nsKubectl, nsSplit, "getYamlSplit", asJSON)
	compareNamespaces(t, split, nsKubectl, nsScoped, "getYamlScoped", asJSON)
	expectChanges(t, stack.Run(pulumitest.Preview, nil), map[string]int{"same": total})
	t.Logf("pulumi: %d patches and %d objects: %s", 3*len(patchable), 2*len(split), time.Since(start).Round(time.Second))
}
