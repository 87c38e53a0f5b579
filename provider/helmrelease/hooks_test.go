package helmrelease_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

var (
	serviceAccounts = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	services        = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	pods            = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	roles           = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
	roleBindings    = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
)

// chartRelease is a release of chart named name in ns, as resource
// k8sconnect_helm_release.<address>, with extra arguments.
func chartRelease(t *testing.T, address, ns, name, chart, extra string) string {
	return fmt.Sprintf(`
resource "k8sconnect_helm_release" %q {
  name      = %q
  namespace = %q
  chart     = %q
  timeout   = "60s"
  %s
  %s
}
`, address, name, ns, chart, extra, acctest.Connection(t))
}

// clusterEvent is what a watch saw of one object: how it changed, and the
// resource version the change wrote (the local cluster's etcd revision,
// which grows with every write, whatever the kind: the order of writes).
type clusterEvent struct {
	change watch.EventType
	object string // Kind/name
	phase  string // a Pod's status.phase
	rv     int64
}

// eventLog is every event of the objects a watchEvents watches, from the
// moment it started.
type eventLog struct {
	mu     sync.Mutex
	events []clusterEvent
}

// watchEvents watches the objects labelled label of each resource in ns
// until the test ends.
func watchEvents(t *testing.T, ns, label string, gvrs ...schema.GroupVersionResource) *eventLog {
	t.Helper()
	log := &eventLog{}
	for _, gvr := range gvrs {
		w, err := acctest.Dynamic(t).Resource(gvr).Namespace(ns).Watch(context.Background(), metav1.ListOptions{LabelSelector: label})
		if err != nil {
			t.Fatalf("watching %s in %s: %v", gvr.Resource, ns, err)
		}
		t.Cleanup(w.Stop)
		go func() {
			for e := range w.ResultChan() {
				obj, ok := e.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				rv, _ := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
				phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
				log.mu.Lock()
				log.events = append(log.events, clusterEvent{e.Type, obj.GetKind() + "/" + obj.GetName(), phase, rv})
				log.mu.Unlock()
			}
		}()
	}
	return log
}

// await returns the events in the order they were written once n of them
// are of the kind of change, or what there is after ten seconds.
func (l *eventLog) await(change watch.EventType, n int) []clusterEvent {
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		events := slices.Clone(l.events)
		l.mu.Unlock()
		slices.SortStableFunc(events, func(a, b clusterEvent) int { return int(a.rv - b.rv) })
		if len(objectsOf(events, change)) >= n || time.Now().After(deadline) {
			return events
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func objectsOf(events []clusterEvent, change watch.EventType) []string {
	var out []string
	for _, e := range events {
		if e.change == change {
			out = append(out, e.object)
		}
	}
	return out
}

// The hooks of one event run by weight, then name, then kind in Helm's
// install order, whatever the order of the chart's files; a weight that is
// no whole number (or has a space in it) runs as weight 0. The helm CLI
// creates the same chart's hooks in the same order.
func TestAccHelmReleaseRunsHooksInHelmsOrder(t *testing.T) {
	ns, helmNS := acctest.Namespace(t), acctest.Namespace(t)
	label := "k8sconnect.test/hook-order=true"
	hookKinds := []schema.GroupVersionResource{configMaps, secrets, serviceAccounts}
	ours, theirs := watchEvents(t, ns, label, hookKinds...), watchEvents(t, helmNS, label, hookKinds...)
	want := []string{"ConfigMap/z", "ConfigMap/v", "ConfigMap/w", "Secret/x", "ConfigMap/a", "Secret/b", "ConfigMap/b", "ServiceAccount/c"}
	inOrder := func(who string, log *eventLog) error {
		if got := objectsOf(log.await(watch.Added, len(want)), watch.Added); !slices.Equal(got, want) {
			return fmt.Errorf("%s created the hooks in the order %v, want %v", who, got, want)
		}
		return nil
	}
	chart := chartPath(t, "hookorder")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{{
			Config: chartRelease(t, "app", ns, "order", chart, ""),
			ConfigStateChecks: []statecheck.StateCheck{
				acctest.ClusterCheck(func() error { return inOrder("k8sconnect_helm_release", ours) }),
				acctest.ClusterCheck(func() error {
					helmCLI(t, "install", "order", chart, "-n", helmNS)
					return inOrder("helm install", theirs)
				}),
			},
		}},
	})
}

// A hook that fails after others of its event succeeded: it is deleted by
// its hook-failed policy, and so is the earlier hook whose policy is
// hook-succeeded, as helm does; the one without either policy stays, the
// hook after it never runs, and the error has the pod's own message. helm
// install leaves the same objects.
func TestAccHelmReleaseFailedHookDeletesAsHelm(t *testing.T) {
	ns, helmNS := acctest.Namespace(t), acctest.Namespace(t)
	chart := chartPath(t, "hookfail")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{{
			Config: chartRelease(t, "app", ns, "fail", chart, ""),
			ExpectError: regexp.MustCompile(`(?s)pre-install\s+hook\s+batch/Job/` + ns +
				`/migrate\s+failed.*BackoffLimitExceeded.*failed\s+on\s+purpose.*exit\s+code\s+1`),
		}},
	})
	if out, err := helmRun(t, toolchain.Helm, "install", "fail", chart, "-n", helmNS); err == nil {
		t.Fatalf("helm install of a failing hook succeeded:\n%s", out)
	}
	for _, c := range []struct {
		gvr  schema.GroupVersionResource
		name string
		left bool
	}{
		{jobs, "migrate", false},    // hook-failed
		{configMaps, "done", false}, // hook-succeeded, and a later hook of its event failed
		{configMaps, "stays", true},
		{configMaps, "never", false},
		{configMaps, "settings", false},
	} {
		for who, ns := range map[string]string{"k8sconnect_helm_release": ns, "helm install": helmNS} {
			if err := present(t, c.gvr, ns, c.name, c.left)(); err != nil {
				t.Errorf("after %s: %v", who, err)
			}
		}
	}
}

// A destroy runs the pre-delete Pod hook until it succeeded, then deletes
// the objects kind by kind in Helm's uninstall order; the hook, whose
// policy is the default, stays. helm uninstall does the same.
func TestAccHelmReleaseUninstallsAsHelm(t *testing.T) {
	ns, helmNS := acctest.Namespace(t), acctest.Namespace(t)
	label := "k8sconnect.test/uninstall=true"
	kinds := []schema.GroupVersionResource{services, deployments, roleBindings, roles, configMaps, secrets, serviceAccounts, pods}
	ours, theirs := watchEvents(t, ns, label, kinds...), watchEvents(t, helmNS, label, kinds...)
	want := []string{"Service/app", "Deployment/app", "RoleBinding/app", "Role/app", "ConfigMap/app", "Secret/app", "ServiceAccount/app"}
	uninstalled := func(who, ns string, log *eventLog) error {
		events := log.await(watch.Deleted, len(want))
		if got := objectsOf(events, watch.Deleted); !slices.Equal(got, want) {
			return fmt.Errorf("%s deleted %v, in that order; want %v", who, got, want)
		}
		hookDone := slices.IndexFunc(events, func(e clusterEvent) bool { return e.object == "Pod/goodbye" && e.phase == "Succeeded" })
		firstDeleted := slices.IndexFunc(events, func(e clusterEvent) bool { return e.change == watch.Deleted })
		if hookDone < 0 || hookDone > firstDeleted {
			return fmt.Errorf("%s: the pre-delete hook had not succeeded before the first object was deleted: %v", who, events)
		}
		return present(t, pods, ns, "goodbye", true)()
	}
	chart := chartPath(t, "uninstallorder")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		CheckDestroy:             func(*terraform.State) error { return uninstalled("k8sconnect_helm_release", ns, ours) },
		Steps: []resource.TestStep{{
			Config: chartRelease(t, "app", ns, "bye", chart, ""),
			ConfigStateChecks: []statecheck.StateCheck{
				present(t, pods, ns, "goodbye", false), // runs only on uninstall
			},
		}},
	})
	helmCLI(t, "install", "bye", chart, "-n", helmNS)
	helmCLI(t, "uninstall", "bye", "-n", helmNS)
	if err := uninstalled("helm uninstall", helmNS, theirs); err != nil {
		t.Error(err)
	}
}

// before-hook-creation deletes the previous run of the release's own hook,
// and nothing else of that name: not another release's hook, nor an object
// someone made by hand. The install that meets one fails and says whose it
// is; the object is left as it was.
func TestAccHelmReleaseBeforeHookCreationDeletesOnlyItsOwn(t *testing.T) {
	ns := acctest.Namespace(t)
	chart := chartPath(t, "sharedhook")
	one := func(mark string) string {
		return chartRelease(t, "one", ns, "one", chart, fmt.Sprintf(`set = [{ name = "mark", value = %q }]`, mark))
	}
	var firstUID string
	hookOf := func(release, revision string) acctest.ClusterCheck {
		return func() error {
			cm := acctest.MustGet(t, configMaps, ns, "shared")
			if got := cm.GetAnnotations()["meta.helm.sh/release-name"]; got != release {
				return fmt.Errorf("the hook is marked as release %q's, want %q's", got, release)
			}
			return configMapData(t, ns, "shared", "revision", revision)()
		}
	}
	handmade := `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "handmade", "namespace": "` + ns + `"}, "data": {"mine": "yes"}}`
	var handmadeUID string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config: one("1"),
				ConfigStateChecks: []statecheck.StateCheck{
					hookOf("one", "1"),
					acctest.ClusterCheck(func() error { firstUID = acctest.UID(t, configMaps, ns, "shared"); return nil }),
				},
			},
			{
				Config: one("1") + chartRelease(t, "two", ns, "two", chart, ""),
				ExpectError: regexp.MustCompile(`(?s)post-install\s+hook\s+core/ConfigMap/` + ns + `/shared:\s+removing\s+its\s+previous\s+run:` +
					`.*is\s+not\s+this\s+release's\s+\(it\s+belongs\s+to\s+Helm\s+release\s+` + ns + `/one\)`),
			},
			{
				PreConfig: func() {
					if got := acctest.UID(t, configMaps, ns, "shared"); got != firstUID {
						t.Fatalf("release two deleted release one's hook: UID %s -> %s", firstUID, got)
					}
				},
				// An upgrade of one replaces its own hook.
				Config: one("2"),
				ConfigStateChecks: []statecheck.StateCheck{
					hookOf("one", "2"),
					acctest.ClusterCheck(func() error {
						if acctest.UID(t, configMaps, ns, "shared") == firstUID {
							return fmt.Errorf("the upgrade did not replace its hook")
						}
						return nil
					}),
				},
			},
			{
				PreConfig: func() {
					handmadeUID = string(acctest.ApplyAs(t, "kubectl", configMaps, handmade).GetUID())
				},
				Config: one("2") + chartRelease(t, "three", ns, "three", chart, `set = [{ name = "hookName", value = "handmade" }]`),
				ExpectError: regexp.MustCompile(`(?s)post-install\s+hook\s+core/ConfigMap/` + ns + `/handmade:.*is\s+not\s+this\s+release's` +
					`\s+\(it\s+belongs\s+to\s+no\s+Helm\s+release\s+\(made\s+by\s+kubectl\)\)`),
			},
			{
				Config: one("2"),
				ConfigStateChecks: []statecheck.StateCheck{
					configMapData(t, ns, "handmade", "mine", "yes"),
					acctest.ClusterCheck(func() error {
						if got := acctest.UID(t, configMaps, ns, "handmade"); got != handmadeUID {
							return fmt.Errorf("the handmade ConfigMap was replaced: UID %s -> %s", handmadeUID, got)
						}
						if strings.Contains(fmt.Sprint(acctest.MustGet(t, configMaps, ns, "handmade").GetAnnotations()), "three") {
							return fmt.Errorf("release three marked the handmade ConfigMap")
						}
						return nil
					}),
				},
			},
		},
	})
}
