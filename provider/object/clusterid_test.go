package object_test

// cluster_connection.cluster_id, the cluster a user pins: what a user does
// with it (set it, change it by mistake, rename it, mistype it) and what
// they see.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// pinnedConfig is a ConfigMap under the provider block's connection, which
// reaches the cluster through proxy with token in clear, pinned as clusterID
// (none when "").
func pinnedConfig(proxy *faultproxy.Proxy, token, clusterID, ns, name string) string {
	pin := ""
	if clusterID != "" {
		pin = fmt.Sprintf("cluster_id = %q", clusterID)
	}
	return fmt.Sprintf(`
provider "k8sconnect" {
  cluster_connection = {
    host                   = %q
    cluster_ca_certificate = %q
    token                  = %q
    %s
  }
}
`, proxy.URL, proxy.CAPEM, token, pin) + configMapConfig("", ns, name, "hello")
}

// An object is created under cluster_id "prod-eu", set in the provider block
// beside a token. A plan under the same pin changes nothing. The pin is then
// changed to "staging", as a variable pointed at the wrong environment would:
// the plan, a refresh-only run and a destroy are each refused, naming both
// values and the remedy, without one request reaching the cluster (the proxy
// in front of it counts them); state and the object are unchanged, and no
// output holds the token. Setting the pin back changes nothing; the rename the
// message describes (remove cluster_id, refresh, set the new name) works. Before
// cluster_id, the plan had no pin to compare and went on.
func TestAccIdentity_clusterIDPin(t *testing.T) {
	t.Parallel()
	c := localcluster.Shared(t)
	proxy := faultproxy.New(t, c.Host, c.CAPEM)
	ns, name := acctest.Namespace(t), acctest.Name("pinned")
	token := acctest.NamespaceAccount(t, c, ns, "ci", configMapRules)
	w := acctest.NewWorkdir(t)
	w.Write(pinnedConfig(proxy, token, "prod-eu", ns, name))
	w.Cleanup()
	if r := w.MustApply(); len(identityWarnings(r)) != 0 {
		t.Fatalf("a pinned apply was warned about identity: %+v", identityWarnings(r))
	}
	w.MustPlanNoChanges()
	uid := acctest.UID(t, configMaps, ns, name)
	version := acctest.MustGet(t, configMaps, ns, name).GetResourceVersion()
	clusterUID := w.StateAttribute("k8sconnect_object.cm", "cluster_uid")

	w.Write(pinnedConfig(proxy, token, "staging", ns, name))
	before := proxy.Count()
	plan := w.Plan()
	w.MustFail(plan, "plan under another cluster_id")
	refresh := w.Run("apply", "-refresh-only", "-auto-approve", "-input=false", "-json")
	w.MustFail(refresh, "refresh-only run under another cluster_id")
	destroy := w.Destroy()
	w.MustFail(destroy, "destroy under another cluster_id")
	for what, r := range map[string]acctest.Result{"plan": plan, "refresh": refresh, "destroy": destroy} {
		if !r.HasError(`cluster_id is "staging"`, `pinned as "prod-eu"`, `set cluster_id back to "prod-eu"`, "import") {
			t.Errorf("the %s should refuse naming both cluster_ids and the remedy: %+v", what, r.Errors())
		}
		if strings.Contains(r.Output, token) {
			t.Errorf("the %s's output holds the token", what)
		}
	}
	if n := proxy.Count() - before; n != 0 {
		t.Errorf("%d requests reached the cluster under the wrong cluster_id", n)
	}
	if got := w.StateList(); len(got) != 1 {
		t.Fatalf("state lost the object: %q", got)
	}
	if got := w.StateAttribute("k8sconnect_object.cm", "cluster_uid"); got != clusterUID {
		t.Fatalf("cluster_uid = %q, was %q", got, clusterUID)
	}
	if live := acctest.MustGet(t, configMaps, ns, name); string(live.GetUID()) != uid || live.GetResourceVersion() != version {
		t.Fatal("the object was written under the wrong cluster_id")
	}

	w.Write(pinnedConfig(proxy, token, "prod-eu", ns, name))
	w.MustPlanNoChanges()
	// The rename the refusal describes.
	w.Write(pinnedConfig(proxy, token, "", ns, name))
	if r := w.Run("apply", "-refresh-only", "-auto-approve", "-input=false", "-json"); r.Err != nil {
		t.Fatalf("refresh without cluster_id: %v\n%s", r.Err, r.Output)
	}
	w.Write(pinnedConfig(proxy, token, "prod-eu-1", ns, name))
	w.MustPlanNoChanges()
	w.MustApply()
	w.Write(pinnedConfig(proxy, token, "prod-eu", ns, name))
	w.MustFail(w.Plan(), "plan under the old name once the new one is recorded")
	w.Write(pinnedConfig(proxy, token, "prod-eu-1", ns, name))
}

// A cluster_id known only at apply (it comes from another resource, as a
// cluster module's output would) cannot be compared at plan. The engine plans
// the object again once the value is known, during the apply, and that plan
// refuses one that changed before anything is written: the object and the
// state's connection are unchanged. Without the pin check the apply takes the
// new connection into state.
func TestAccIdentity_clusterIDKnownOnlyAtApply(t *testing.T) {
	t.Parallel()
	c := localcluster.Shared(t)
	ns, name := acctest.Namespace(t), acctest.Name("pinned-late")
	config := func(pin string) string {
		return fmt.Sprintf(`
resource "terraform_data" "pin" {
  input = %q
}
`, pin) + configMapConfig(fmt.Sprintf("cluster_connection = {\n    kubeconfig_file = %q\n    cluster_id = terraform_data.pin.output\n  }",
			c.KubeconfigPath), ns, name, "hello")
	}
	w := acctest.NewWorkdir(t)
	w.Write(config("prod-eu"))
	w.Cleanup()
	w.MustApply()
	version := acctest.MustGet(t, configMaps, ns, name).GetResourceVersion()

	w.Write(config("staging"))
	r := w.Apply()
	w.MustFail(r, "apply of a cluster_id known only at apply")
	if !r.HasError(`cluster_id is "staging"`, `pinned as "prod-eu"`) {
		t.Fatalf("the apply should refuse naming both cluster_ids: %+v", r.Errors())
	}
	if got := acctest.MustGet(t, configMaps, ns, name).GetResourceVersion(); got != version {
		t.Fatal("the object was written under another cluster_id")
	}
	if got := w.StateAttribute("k8sconnect_object.cm", "cluster_connection"); !strings.Contains(got, `"prod-eu"`) {
		t.Fatalf("state took the new connection: %s", got)
	}
	w.Write(config("prod-eu"))
	w.MustApply()
	w.MustPlanNoChanges()
}
