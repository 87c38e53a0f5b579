package object_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/testing/otherproviders"
	"github.com/k8sconnect/k8sconnect/provider/internal/managedfields"
)

// kubernetesManifestState is the state of a kubernetes_manifest: manifest and
// object are dynamic values ({"value": ..., "type": ...}), blocks empty lists.
func kubernetesManifestState(manifest, object any) map[string]any {
	return map[string]any{
		"manifest": manifest, "object": object,
		"computed_fields": nil, "field_manager": []any{}, "wait": []any{}, "timeouts": []any{}, "wait_for": nil,
	}
}

// earlyUpstreamState is the state of an early upstream k8sconnect_object
// (schema version 0): no connection and no namespace recorded.
func earlyUpstreamState(body, name string) map[string]any {
	return map[string]any{
		"id": "0123456789ab", "yaml_body": body, "cluster": nil, "delete_protection": nil, "delete_timeout": nil,
		"force_destroy": nil, "ignore_fields": nil, "managed_state_projection": map[string]any{},
		"object_ref": map[string]any{"api_version": "v1", "kind": "ConfigMap", "name": name, "namespace": nil},
	}
}

// moveConfig is a moved block from `from` and the k8sconnect_object it becomes.
func moveConfig(from, body, conn string) string {
	return fmt.Sprintf(`
moved {
  from = %s
  to   = k8sconnect_object.greeting
}

resource "k8sconnect_object" "greeting" {
  yaml_body = %s
  %s
}
`, from, body, conn)
}

// owns reports whether manager owns the field at path (e.g. "data", "greeting").
func owns(t *testing.T, obj *unstructured.Unstructured, manager string, path ...string) bool {
	t.Helper()
	fields, err := managedfields.Of(obj)
	if err != nil {
		t.Fatal(err)
	}
	return fields.Manager(manager).Has(fieldpath.MakePathOrDie(toAny(path)...))
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// expectTakenOver runs the plan and apply of a move and checks what a user
// checks: an update in place (never a replacement) announced by a warning,
// the same UID, k8sconnect owning the data, and an empty plan after.
func expectTakenOver(t *testing.T, w *acctest.Workdir, ns, uid string) *unstructured.Unstructured {
	t.Helper()
	plan := w.Plan()
	if plan.Err != nil {
		t.Fatalf("plan after the move failed: %v\n%s", plan.Err, plan.Output)
	}
	if add, _, remove := plan.Changes(); add != 0 || remove != 0 {
		t.Fatalf("the move planned %d to add and %d to destroy; want an update in place\n%s", add, remove, plan.Output)
	}
	warned := false
	for _, d := range plan.Warnings() {
		if d.Summary == "Taking over an object moved from another provider" && strings.Contains(d.Detail, uid) {
			warned = true
		}
	}
	if !warned {
		t.Errorf("the plan does not warn that it takes over the moved object\n%s", plan.Output)
	}
	w.MustApply()
	live := acctest.MustGet(t, configMaps, ns, "greeting")
	if string(live.GetUID()) != uid {
		t.Fatalf("UID changed from %s to %s: the object was replaced", uid, live.GetUID())
	}
	if !owns(t, live, "k8sconnect", "data", "greeting") {
		t.Errorf("k8sconnect does not own data.greeting after the move; managers %v", acctest.Managers(live))
	}
	w.MustPlanNoChanges()
	return live
}

func TestAccObject_moveFromKubernetesManifest(t *testing.T) {
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	// As hashicorp/kubernetes left it: applied by field manager "Terraform",
	// with a key the new configuration no longer sets.
	before := acctest.ApplyAs(t, "Terraform", configMaps, fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: greeting, namespace: %s}\ndata: {greeting: hello, legacy: keep}\n", ns))
	manifest := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "greeting", "namespace": ns},
		"data":     map[string]any{"greeting": "hello", "legacy": "keep"},
	}
	typ := []any{"object", map[string]any{
		"apiVersion": "string", "kind": "string",
		"metadata": []any{"object", map[string]any{"name": "string", "namespace": "string"}},
		"data":     []any{"object", map[string]any{"greeting": "string", "legacy": "string"}},
	}}
	w := acctest.NewWorkdir(t)
	w.UseStandIn(otherproviders.Kubernetes)
	wrapped := map[string]any{"value": manifest, "type": typ}
	w.WriteState(otherproviders.Kubernetes.Address, "kubernetes_manifest", "greeting", otherproviders.Kubernetes.Version,
		kubernetesManifestState(wrapped, wrapped))
	w.Write(moveConfig("kubernetes_manifest.greeting",
		fmt.Sprintf("%q", fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: greeting, namespace: %s}\ndata: {greeting: hello}\n", ns)), conn))
	w.Cleanup()

	live := expectTakenOver(t, w, ns, string(before.GetUID()))
	if owns(t, live, "Terraform", "data", "greeting") {
		t.Errorf("field manager Terraform still co-owns data.greeting: the move did not hand it over")
	}
	// A key only the old provider set stays, with its owner: a move never
	// deletes what the new configuration merely does not mention.
	if got, _, _ := unstructured.NestedString(live.Object, "data", "legacy"); got != "keep" || !owns(t, live, "Terraform", "data", "legacy") {
		t.Errorf("data.legacy = %q (owned by Terraform: %v); want it kept, still Terraform's", got, owns(t, live, "Terraform", "data", "legacy"))
	}
}

func TestAccObject_moveFromKubectlManifest(t *testing.T) {
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	body := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: greeting\n  namespace: %s\ndata:\n  greeting: hello\n", ns)
	// As a kubectl-style provider's client-side apply left it: an Update by
	// kubectl-client-side-apply with the last-applied annotation.
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "greeting", "namespace": ns, "annotations": map[string]any{
			"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","data":{"greeting":"hello"},"kind":"ConfigMap"}`,
		}},
		"data": map[string]any{"greeting": "hello"},
	}}
	before, err := acctest.Dynamic(t).Resource(configMaps).Namespace(ns).Create(context.Background(), obj,
		metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"})
	if err != nil {
		t.Fatal(err)
	}
	w := acctest.NewWorkdir(t)
	w.UseStandIn(otherproviders.Kubectl)
	w.WriteState(otherproviders.Kubectl.Address, "kubectl_manifest", "greeting", otherproviders.Kubectl.Version, map[string]any{
		"id": "/api/v1/namespaces/" + ns + "/configmaps/greeting", "yaml_body": body, "yaml_body_parsed": body,
		"yaml_incluster": "hash", "live_manifest_incluster": "hash", "api_version": "v1", "kind": "ConfigMap",
		"name": "greeting", "namespace": ns, "override_namespace": nil, "uid": string(before.GetUID()),
		"live_uid": string(before.GetUID()), "sensitive_fields": nil, "ignore_fields": nil, "force_new": false,
		"server_side_apply": false, "field_manager": "kubectl", "force_conflicts": false, "apply_only": false,
		"validate_schema": true, "wait": nil, "wait_for_rollout": true,
	})
	// The move and a change in one apply: the greeting changes in place.
	w.Write(moveConfig("kubectl_manifest.greeting", fmt.Sprintf("%q", strings.Replace(body, "hello", "hello again", 1)), conn))
	w.Cleanup()

	live := expectTakenOver(t, w, ns, string(before.GetUID()))
	if got, _, _ := unstructured.NestedString(live.Object, "data", "greeting"); got != "hello again" {
		t.Errorf("data.greeting = %q, want the configured %q", got, "hello again")
	}
	if owns(t, live, "kubectl-client-side-apply", "data", "greeting") {
		t.Errorf("kubectl-client-side-apply still owns data.greeting after the move")
	}
}

func TestAccObject_moveFromUpstreamObject(t *testing.T) {
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	c := localcluster.Shared(t)
	const upstreamID = "k8sconnect.terraform.io/terraform-id"
	body := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: greeting\n  namespace: %s\ndata:\n  greeting: hello\n", ns)
	// As the upstream provider left it: its manager is named k8sconnect, as
	// ours is, and it marks the object with its own annotation.
	before := acctest.ApplyAs(t, "k8sconnect", configMaps, fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: greeting, namespace: %s, annotations: {%s: 0123456789ab}}\ndata: {greeting: hello}\n", ns, upstreamID))
	w := acctest.NewWorkdir(t)
	w.UseStandIn(otherproviders.Upstream)
	w.WriteState(otherproviders.Upstream.Address, "k8sconnect_object", "legacy", otherproviders.Upstream.Version, map[string]any{
		"id": "0123456789ab", "yaml_body": body,
		"cluster": map[string]any{
			"host": c.Host, "cluster_ca_certificate": string(c.CAPEM), "token": c.Token, "kubeconfig": nil, "context": nil,
			"client_certificate": nil, "client_key": nil, "insecure": nil, "proxy_url": nil, "exec": nil,
		},
		"delete_protection": nil, "delete_timeout": nil, "force_destroy": nil, "ignore_fields": nil,
		"managed_state_projection": map[string]any{"data.greeting": "hello"},
		"object_ref":               map[string]any{"api_version": "v1", "kind": "ConfigMap", "name": "greeting", "namespace": ns},
	})
	w.Write(moveConfig("k8sconnect_object.legacy", fmt.Sprintf("%q", body), conn))
	w.Cleanup()

	live := expectTakenOver(t, w, ns, string(before.GetUID()))
	if _, ok := live.GetAnnotations()[upstreamID]; ok {
		t.Errorf("the upstream provider's annotation %s is still there", upstreamID)
	}
	if live.GetAnnotations()[acctest.AnnotationOwnedBy] == "" {
		t.Errorf("the object does not carry %s after the move", acctest.AnnotationOwnedBy)
	}
}

// A Secret moved from kubernetes_manifest: its values were in the old state,
// but no plan or apply output of the move shows them.
func TestAccObject_moveSecretShowsNoValue(t *testing.T) {
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	const password = "moved-hunter2-secret"
	encoded := base64.StdEncoding.EncodeToString([]byte(password))
	secrets := configMaps
	secrets.Resource = "secrets"
	before := acctest.ApplyAs(t, "Terraform", secrets, fmt.Sprintf(
		"apiVersion: v1\nkind: Secret\nmetadata: {name: greeting, namespace: %s}\ndata: {password: %s}\n", ns, encoded))
	manifest := map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "greeting", "namespace": ns},
		"data":     map[string]any{"password": encoded},
	}
	w := acctest.NewWorkdir(t)
	w.UseStandIn(otherproviders.Kubernetes)
	w.WriteState(otherproviders.Kubernetes.Address, "kubernetes_manifest", "greeting", otherproviders.Kubernetes.Version, kubernetesManifestState(map[string]any{"value": manifest, "type": "dynamic"}, nil))
	w.Write(moveConfig("kubernetes_manifest.greeting", fmt.Sprintf("sensitive(%q)",
		fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: greeting, namespace: %s}\ndata: {password: %s}\n", ns, encoded)), conn))
	w.Cleanup()

	plan := w.Run("plan", "-input=false", "-no-color")
	apply := w.Run("apply", "-auto-approve", "-input=false", "-no-color")
	if plan.Err != nil || apply.Err != nil {
		t.Fatalf("plan: %v, apply: %v\n%s\n%s", plan.Err, apply.Err, plan.Output, apply.Output)
	}
	for _, out := range []string{plan.Output, apply.Output} {
		if strings.Contains(out, password) || strings.Contains(out, encoded) {
			t.Fatalf("the Secret's value is in the engine's output:\n%s", out)
		}
	}
	if uid := acctest.UID(t, secrets, ns, "greeting"); uid != string(before.GetUID()) {
		t.Fatalf("UID changed from %s to %s", before.GetUID(), uid)
	}
	w.MustPlanNoChanges()
}

// The upstream provider's early states recorded no namespace (object_ref with
// a null namespace) and no connection: the move still updates the object in
// its namespace, through the configuration's connection, and replaces nothing.
func TestAccObject_moveWithoutNamespace(t *testing.T) {
	conn := acctest.Connection(t)
	name := acctest.Name("moved")
	body := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  greeting: hello\n", name)
	before := acctest.ApplyAs(t, "k8sconnect", configMaps, fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: default}\ndata: {greeting: hello}\n", name))
	w := acctest.NewWorkdir(t)
	w.UseStandIn(otherproviders.Upstream)
	w.WriteState(otherproviders.Upstream.Address, "k8sconnect_object", "legacy", 0, earlyUpstreamState(body, name))
	w.Write(moveConfig("k8sconnect_object.legacy", fmt.Sprintf("%q", strings.Replace(body, "hello", "hello again", 1)), conn))
	w.Cleanup()
	plan := w.Plan()
	if add, change, remove := plan.Changes(); plan.Err != nil || add != 0 || change != 1 || remove != 0 {
		t.Fatalf("plan: %v, %d/%d/%d to add/change/destroy; want one update\n%s", plan.Err, add, change, remove, plan.Output)
	}
	w.MustApply()
	live := acctest.MustGet(t, configMaps, "default", name)
	if live.GetUID() != before.GetUID() {
		t.Fatalf("UID changed from %s to %s", before.GetUID(), live.GetUID())
	}
	if got, _, _ := unstructured.NestedString(live.Object, "data", "greeting"); got != "hello again" {
		t.Errorf("data.greeting = %q, want %q", got, "hello again")
	}
	w.MustPlanNoChanges()
}

// The object was deleted between the old provider's last run and the move:
// the apply creates it anew, and the plan after that is empty (nothing is
// left over from the move to plan again).
func TestAccObject_moveOfDeletedObjectCreatesIt(t *testing.T) {
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	manifest := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "greeting", "namespace": ns},
		"data":     map[string]any{"greeting": "hello"},
	}
	w := acctest.NewWorkdir(t)
	w.UseStandIn(otherproviders.Kubernetes)
	w.WriteState(otherproviders.Kubernetes.Address, "kubernetes_manifest", "greeting", otherproviders.Kubernetes.Version, kubernetesManifestState(map[string]any{"value": manifest, "type": "dynamic"}, nil))
	w.Write(moveConfig("kubernetes_manifest.greeting",
		fmt.Sprintf("%q", fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: greeting, namespace: %s}\ndata: {greeting: hello}\n", ns)), conn))
	w.Cleanup()
	w.MustApply()
	if got := acctest.MustGet(t, configMaps, ns, "greeting"); got.GetAnnotations()[acctest.AnnotationOwnedBy] == "" {
		t.Fatalf("the re-created object does not carry %s", acctest.AnnotationOwnedBy)
	}
	w.MustPlanNoChanges()
}

// Destroyed right after the move, before any apply: the object is deleted
// (the user moved it into this configuration and then destroyed it), found in
// its namespace although the moved state did not record it.
func TestAccObject_destroyRightAfterMove(t *testing.T) {
	conn := acctest.Connection(t)
	name := acctest.Name("moved")
	body := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  greeting: hello\n", name)
	acctest.ApplyAs(t, "k8sconnect", configMaps, fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: default}\ndata: {greeting: hello}\n", name))
	w := acctest.NewWorkdir(t)
	w.UseStandIn(otherproviders.Upstream)
	w.WriteState(otherproviders.Upstream.Address, "k8sconnect_object", "legacy", 0, earlyUpstreamState(body, name))
	w.Write(fmt.Sprintf("provider \"k8sconnect\" {\n  %s\n}\n", conn) + moveConfig("k8sconnect_object.legacy", fmt.Sprintf("%q", body), ""))
	for _, args := range [][]string{{"destroy", "-auto-approve", "-input=false", "-json"}, {"destroy", "-auto-approve", "-input=false", "-refresh=false", "-json"}} {
		acctest.ApplyAs(t, "k8sconnect", configMaps, fmt.Sprintf(
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: default}\ndata: {greeting: hello}\n", name))
		if args[len(args)-2] == "-refresh=false" {
			w.WriteState(otherproviders.Upstream.Address, "k8sconnect_object", "legacy", 0, earlyUpstreamState(body, name))
		}
		if r := w.Run(args...); r.Err != nil {
			t.Fatalf("%v: %v\n%s", args, r.Err, r.Output)
		}
		acctest.MustNotExist(t, configMaps, "default", name)
	}
}
