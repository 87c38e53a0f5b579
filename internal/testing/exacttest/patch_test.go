package exacttest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/exactcorpus"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// patchConfig patches every target of targets.json three ways: patch (Server-Side
// Apply), merge_patch and json_patch, each in its own namespace.
func patchConfig(conn string, ns map[string]string) string {
	return fmt.Sprintf(`
locals {
  targets = jsondecode(file("${path.module}/targets.json"))
}

resource "k8sconnect_patch" "apply" {
  for_each = local.targets
  target = {
    api_version = each.value.api_version
    kind        = each.value.kind
    name        = each.value.name
    namespace   = %[2]q
  }
  patch          = file("${path.module}/payload/${each.key}.yaml")
  take_ownership = true
  %[1]s
}

resource "k8sconnect_patch" "merge" {
  for_each = local.targets
  target = {
    api_version = each.value.api_version
    kind        = each.value.kind
    name        = each.value.name
    namespace   = %[3]q
  }
  merge_patch    = file("${path.module}/payload/${each.key}.yaml")
  take_ownership = true
  %[1]s
}

resource "k8sconnect_patch" "json" {
  for_each = local.targets
  target = {
    api_version = each.value.api_version
    kind        = each.value.kind
    name        = each.value.name
    namespace   = %[4]q
  }
  json_patch     = file("${path.module}/jsonpatch/${each.key}.yaml")
  take_ownership = true
  %[1]s
}
`, conn, ns["apply"], ns["merge"], ns["json"])
}

// The corpus through the three patch types: each target starts as the
// document's header (created by kubectl), kubectl patches one copy the same
// way (apply --server-side, patch --type merge, patch --type json) and
// k8sconnect_patch the other; the stored objects must match and the re-plan
// must be empty.
func TestAccExact_patchesMatchKubectl(t *testing.T) {
	start := time.Now()
	cluster := localcluster.Shared(t)
	kubeconfig := cluster.KubeconfigPath
	exactcorpus.EnsureCRD(t, kubeconfig)
	docs := exactcorpus.Patchable(exactcorpus.Load(t, "corpus", "placeholder"))

	ours := map[string]string{}
	for _, typ := range exactcorpus.PatchTypes {
		ours[typ] = acctest.Namespace(t)
		theirs := acctest.Namespace(t)
		exactcorpus.CreateTargets(t, kubeconfig, docs, ours[typ])
		exactcorpus.CreateTargets(t, kubeconfig, docs, theirs)
		exactcorpus.KubectlPatch(t, kubeconfig, typ, docs, theirs)
		t.Cleanup(func() {
			if !t.Failed() {
				return
			}
			t.Logf("kubectl's %s patches are in namespace %s, k8sconnect's in %s", typ, theirs, ours[typ])
		})
		defer func(typ, theirs string) {
			text := func(d exactcorpus.Doc) string { return d.Payload }
			if typ == "json" {
				text = func(d exactcorpus.Doc) string { return d.JSONPatch(t) }
			}
			compareAll(t, docs, theirs, map[string]string{"k8sconnect_patch " + typ: ours[typ]}, text)
		}(typ, theirs)
	}

	w := acctest.NewWorkdir(t)
	w.Write(patchConfig(acctest.Connection(t), ours))
	exactcorpus.Write(t, filepath.Join(w.Dir(), "payload"), "payload", docs)
	exactcorpus.Write(t, filepath.Join(w.Dir(), "jsonpatch"), "jsonpatch", docs)
	targets := map[string]map[string]string{}
	for _, d := range docs {
		targets[d.Key] = map[string]string{"api_version": d.APIVersion, "kind": d.Kind, "name": d.Name}
	}
	raw, _ := json.Marshal(targets)
	if err := os.WriteFile(filepath.Join(w.Dir(), "targets.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	w.Cleanup()
	w.MustApply()
	expectNoChanges(t, w, "after applying the patches")

	// Another manager moves a patched 2^53+1 by one: the plan shows it, apply restores it.
	limits := schemaOf(t, docs, "int-limits")
	acctest.PatchAs(t, "kubectl-edit", limits.GVR(), ours["apply"], limits.Name, `{"spec":{"free":{"two53plus1":9007199254740992}}}`)
	r := w.Plan()
	if add, change, remove := r.Changes(); r.Err != nil || add != 0 || change != 1 || remove != 0 {
		t.Fatalf("%s plan after a one-unit change of a patched field: want 1 to change, got %d/%d/%d %v (%v)\n%s",
			acctest.Engine(), add, change, remove, plannedChanges(r.Output), r.Err, r.Output)
	}
	w.MustApply()
	live := exactcorpus.Raw(t, cluster.RESTConfig(), limits.GVR(), ours["apply"], limits.Name)
	if got := fmt.Sprint(exactcorpus.Field(live, "spec", "free", "two53plus1")); got != "9007199254740993" {
		t.Errorf("after apply the patched spec.free.two53plus1 = %s, want 9007199254740993 restored", got)
	}
	expectNoChanges(t, w, "after reverting the drift")
	t.Logf("%s: %d documents x3 patch types: %s", acctest.Engine(), len(docs), time.Since(start).Round(time.Second))
	// The deferred comparisons run now, before the cleanups destroy anything.
}
