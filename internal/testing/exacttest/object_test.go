// Package exacttest is the exact-values differential suite: the corpus in
// internal/testing/exactcorpus applied once by kubectl and once by k8sconnect
// (k8sconnect_object directly and fed by yaml_split and yaml_scoped; all three
// k8sconnect_patch types), the objects the API server stored compared field by
// field with every digit kept, and an empty re-plan. Run under terraform (the
// default) and tofu (K8SCONNECT_ENGINE=tofu); the Pulumi half is in bridge/.
package exacttest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/exactcorpus"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

func TestMain(m *testing.M) { acctest.Main(m) }

// objectConfig applies every file of objects/ with for_each, and the same
// corpus again through yaml_split (split.yaml) and yaml_scoped (scoped.yaml).
func objectConfig(conn string) string {
	return fmt.Sprintf(`
locals {
  files = fileset("${path.module}/objects", "*.yaml")
}

resource "k8sconnect_object" "doc" {
  for_each  = local.files
  yaml_body = file("${path.module}/objects/${each.value}")
  %[1]s
}

data "k8sconnect_yaml_split" "all" {
  content = file("${path.module}/split.yaml")
}

resource "k8sconnect_object" "split" {
  for_each  = data.k8sconnect_yaml_split.all.manifests
  yaml_body = each.value
  %[1]s
}

# The corpus as the items of one kind: List, which yaml_split expands by
# re-encoding each item.
data "k8sconnect_yaml_split" "list" {
  content = file("${path.module}/list.yaml")
}

resource "k8sconnect_object" "list" {
  for_each  = data.k8sconnect_yaml_split.list.manifests
  yaml_body = each.value
  %[1]s
}

data "k8sconnect_yaml_scoped" "all" {
  content = file("${path.module}/scoped.yaml")
  %[1]s
}

resource "k8sconnect_object" "scoped" {
  for_each  = data.k8sconnect_yaml_scoped.all.namespaced
  yaml_body = each.value
  %[1]s
}

output "projection" {
  value = k8sconnect_object.doc["int-limits.yaml"].managed_state_projection
}

output "ownership" {
  value = k8sconnect_object.doc["int-limits.yaml"].field_ownership
}
`, conn)
}

// writeObjects writes the corpus for the four ways k8sconnect_object gets it.
func writeObjects(t *testing.T, dir string, docs []exactcorpus.Doc, nsSplit, nsScoped, nsList string) {
	t.Helper()
	list := "apiVersion: v1\nkind: List\nitems:\n"
	for _, d := range docs {
		lines := strings.Split(strings.TrimSuffix(d.In(nsList).Text, "\n"), "\n")
		for i, l := range lines {
			switch {
			case i == 0:
				list += "- " + l + "\n"
			case l == "":
				list += "\n"
			default:
				list += "  " + l + "\n"
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "list.yaml"), []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	exactcorpus.Write(t, filepath.Join(dir, "objects"), "", docs)
	for file, ns := range map[string]string{"split.yaml": nsSplit, "scoped.yaml": nsScoped} {
		var b strings.Builder
		for _, d := range docs {
			b.WriteString("---\n" + d.In(ns).Text)
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// kubectlApply applies docs with `kubectl apply --server-side`, the reference.
func kubectlApply(t *testing.T, kubeconfig string, docs []exactcorpus.Doc) {
	t.Helper()
	dir := exactcorpus.Write(t, t.TempDir(), "", docs)
	exactcorpus.Kubectl(t, kubeconfig, "apply", "--server-side", "-f", dir)
}

// compareAll holds every document k8sconnect stored in each of namespaces
// against kubectl's copy in nsKubectl. text is what the engine was handed for
// a document: when it is not in Unicode NFC, the engine normalized it before
// the provider saw it (see exactcorpus.NFC), and kubectl's object in NFC is
// the reference.
func compareAll(t *testing.T, docs []exactcorpus.Doc, nsKubectl string, namespaces map[string]string, text func(exactcorpus.Doc) string) {
	t.Helper()
	cfg := localcluster.Shared(t).RESTConfig()
	for _, d := range docs {
		want := exactcorpus.Raw(t, cfg, d.GVR(), nsKubectl, d.Name)
		if !norm.NFC.IsNormalString(text(d)) {
			want = exactcorpus.NFC(want).(map[string]any)
		}
		for how, ns := range namespaces {
			got := exactcorpus.Raw(t, cfg, d.GVR(), ns, d.Name)
			if diffs := exactcorpus.Diff(want, got); len(diffs) > 0 {
				t.Errorf("%s through %s under %s differs from kubectl's (kubectl ≠ k8sconnect):\n  %s",
					d.Key, how, acctest.Engine(), strings.Join(diffs, "\n  "))
			}
		}
	}
}

func wholeText(d exactcorpus.Doc) string { return d.Text }

func expectNoChanges(t *testing.T, w *acctest.Workdir, when string) {
	t.Helper()
	r := w.Plan()
	if r.Err != nil {
		t.Fatalf("%s plan %s: %v\n%s", acctest.Engine(), when, r.Err, r.Output)
	}
	if add, change, remove := r.Changes(); add != 0 || change != 0 || remove != 0 {
		t.Logf("changing: %v", plannedChanges(r.Output))
		t.Fatalf("%s plan %s: %d to add, %d to change, %d to destroy; want none\n%s", acctest.Engine(), when, add, change, remove, r.Output)
	}
}

// The corpus through k8sconnect_object (directly, via yaml_split and via
// yaml_scoped) stores exactly what kubectl stores, re-plans empty, survives an
// update in which int-or-string values change type, and a change of one unit
// to a 2^53+1 or int64-max field by another manager is drift that the next
// plan shows and apply reverts.
func TestAccExact_objectsMatchKubectl(t *testing.T) {
	start := time.Now()
	cluster := localcluster.Shared(t)
	kubeconfig := cluster.KubeconfigPath
	exactcorpus.EnsureCRD(t, kubeconfig)
	nsKubectl, nsObject, nsSplit, nsScoped := acctest.Namespace(t), acctest.Namespace(t), acctest.Namespace(t), acctest.Namespace(t)
	nsList := acctest.Namespace(t)
	targets := map[string]string{"k8sconnect_object": nsObject, "yaml_split": nsSplit, "yaml_scoped": nsScoped, "yaml_split of a List": nsList}

	w := acctest.NewWorkdir(t)
	w.Write(objectConfig(acctest.Connection(t)))
	docs := exactcorpus.Load(t, "corpus", nsObject)
	writeObjects(t, w.Dir(), docs, nsSplit, nsScoped, nsList)
	w.Cleanup()
	w.MustApply()
	kubectlApply(t, kubeconfig, exactcorpus.Load(t, "corpus", nsKubectl))
	compareAll(t, docs, nsKubectl, targets, wholeText)
	expectNoChanges(t, w, "after the first apply")
	checkOutputs(t, w)
	t.Logf("%s: create, compare and re-plan of %d documents x3: %s", acctest.Engine(), len(docs), time.Since(start).Round(time.Second))

	// The update: int-or-string values flip between integer and string.
	updated := exactcorpus.Updated(t, nsObject)
	writeObjects(t, w.Dir(), updated, nsSplit, nsScoped, nsList)
	w.MustApply()
	kubectlApply(t, kubeconfig, exactcorpus.Updated(t, nsKubectl))
	compareAll(t, updated, nsKubectl, targets, wholeText)
	expectNoChanges(t, w, "after the update")

	// Someone else changes two fields we own by one unit; then a controller
	// takes a field under a list-map key beyond 2^53 from us, whose drift is
	// only found through the field set kept in private state. Each time the
	// plan shows one change and apply restores what yaml_body says.
	limits := schemaOf(t, docs, "int-limits")
	cfg := cluster.RESTConfig()
	for _, adversary := range []struct {
		what   string
		change func()
		want   map[string]string
	}{
		{"a one-unit change beyond 2^53 and at int64's maximum", func() {
			acctest.PatchAs(t, "kubectl-edit", limits.GVR(), nsObject, limits.Name,
				`{"spec":{"free":{"two53plus1":9007199254740992},"typed":{"int64":9223372036854775806}}}`)
		}, map[string]string{"free.two53plus1": "9007199254740993", "typed.int64": "9223372036854775807"}},
		{"a field under list-map key 2^53+1 taken by another manager", func() {
			exactcorpus.ApplyAs(t, cfg, "port-controller", limits.GVR(), nsObject, limits.Name, fmt.Sprintf(
				`{"apiVersion":%q,"kind":"Exact","metadata":{"name":%q,"namespace":%q},"spec":{"byPort":[{"port":9007199254740993,"value":"taken"}]}}`,
				limits.APIVersion, limits.Name, nsObject))
		}, map[string]string{"byPort.0": "map[port:9007199254740993 value:above]"}},
	} {
		adversary.change()
		r := w.Plan()
		if add, change, remove := r.Changes(); r.Err != nil || add != 0 || change != 1 || remove != 0 {
			t.Fatalf("%s plan after %s: want 1 to change, got %d/%d/%d (%v)\n%s",
				acctest.Engine(), adversary.what, add, change, remove, r.Err, r.Output)
		}
		w.MustApply()
		live := exactcorpus.Raw(t, cfg, limits.GVR(), nsObject, limits.Name)
		for path, want := range adversary.want {
			parts := strings.Split(path, ".")
			var field any = parts[1]
			if parts[1] == "0" {
				field = 0
			}
			if got := fmt.Sprint(exactcorpus.Field(live, "spec", parts[0], field)); got != want {
				t.Errorf("after %s and apply, spec.%s = %s, want %s restored", adversary.what, path, got, want)
			}
		}
	}
	expectNoChanges(t, w, "after reverting the drift")
	t.Logf("%s: whole test %s", acctest.Engine(), time.Since(start).Round(time.Second))
}

func schemaOf(t *testing.T, docs []exactcorpus.Doc, key string) exactcorpus.Doc {
	t.Helper()
	for _, d := range docs {
		if d.Key == key {
			return d
		}
	}
	t.Fatalf("no corpus document %s", key)
	return exactcorpus.Doc{}
}

// checkOutputs: managed_state_projection and field_ownership, as the engine
// prints them, keep every digit in values and in list-map keys.
func checkOutputs(t *testing.T, w *acctest.Workdir) {
	t.Helper()
	r := w.Run("output", "-json")
	if r.Err != nil {
		t.Fatalf("output: %v\n%s", r.Err, r.Output)
	}
	var out struct {
		Projection struct{ Value map[string]string }   `json:"projection"`
		Ownership  struct{ Value map[string][]string } `json:"ownership"`
	}
	if err := json.Unmarshal([]byte(r.Output[strings.Index(r.Output, "{"):]), &out); err != nil {
		t.Fatalf("output -json: %v\n%s", err, r.Output)
	}
	for path, want := range map[string]string{
		"spec.free.two53plus1":                     "9007199254740993",
		"spec.free.two63minus1":                    "9223372036854775807",
		"spec.free.minInt64":                       "-9223372036854775808",
		"spec.typed.int64":                         "9223372036854775807",
		"spec.byPort[port=9007199254740993].value": "above",
		"spec.tags[=9223372036854775807]":          "9223372036854775807",
	} {
		if got, ok := out.Projection.Value[path]; !ok || got != want {
			t.Errorf("managed_state_projection[%q] = %q, want %q", path, got, want)
		}
	}
	if _, ok := out.Ownership.Value["spec.byPort[port=-9223372036854775808].value"]; !ok {
		t.Errorf("field_ownership has no path with the int64 minimum as list-map key: %v", keys(out.Ownership.Value))
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// plannedChanges lists the addresses a -json plan would change, with the action.
func plannedChanges(output string) []string {
	var out []string
	for _, line := range strings.Split(output, "\n") {
		var l struct {
			Type   string `json:"type"`
			Change struct {
				Action   string `json:"action"`
				Resource struct {
					Addr string `json:"addr"`
				} `json:"resource"`
			} `json:"change"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Type == "planned_change" {
			out = append(out, l.Change.Action+" "+l.Change.Resource.Addr)
		}
	}
	return out
}
