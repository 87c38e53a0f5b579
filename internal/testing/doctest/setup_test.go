package doctest

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/fixtures"
)

// A setup gives a block what the embedded cluster lacks: an object another
// tool made, which the block patches or reads. Blocks name setups in their
// marker (<!-- doctest: run setup=<name> -->); examples under examples/ in
// exampleSetups. A setup makes objects with fixed names, so the blocks that
// use one run one at a time, each with a fresh copy.
//
// To add one: a function that makes the objects and registers their removal
// with t.Cleanup (waiting until they are gone), and an entry here.
var setups = map[string]func(t *testing.T){
	// EKS's aws-node DaemonSet in kube-system, as EKS's own manager applied it.
	"eks-aws-node": func(t *testing.T) {
		acctest.ApplyAs(t, "eks.amazonaws.com", daemonSets, fixtures.AWSNodeDaemonSet("kube-system"))
		t.Cleanup(func() { deleteAndWait(t, daemonSets, "kube-system", "aws-node") })
	},
	// Namespace storefront with a Deployment web as a Helm release makes it
	// (and the default ServiceAccount the cluster's controller adds).
	"storefront": func(t *testing.T) {
		namespace(t, "storefront")
		acctest.ApplyAs(t, "helm", deployments, fixtures.HelmDeployment("storefront"))
	},
	// The chart of k8sconnect_helm_template's example in the block's (or
	// the example's) directory, as ./chart (see setupFiles). Every user of
	// the chart makes its CRD, which is cluster-scoped, so they run one at a
	// time; and a release's destroy leaves the CRD of crds/ and the namespace
	// create_namespace made, as Helm's uninstall does, so the next user would
	// find them taken: the cleanup removes them.
	"greeter-chart": func(t *testing.T) {
		t.Cleanup(func() {
			deleteAndWait(t, crds, "", "greetings.greeter.example.com")
			for _, ns := range []string{"greeter", "greeter-release"} {
				deleteAndWait(t, namespaces, "", ns)
			}
		})
	},
}

// setupFiles are setups that give a block files rather than objects: a
// directory of the repository, copied into the block's directory under the
// name given.
var setupFiles = map[string]struct{ from, to string }{
	"greeter-chart": {from: "examples/data-sources/k8sconnect_helm_template/chart", to: "chart"},
}

// exampleSetups are the setups of the example directories under examples/.
var exampleSetups = map[string][]string{
	"examples/resources/k8sconnect_patch": {"eks-aws-node"},
	// Its own chart is the greeter chart; the setup only takes the lock.
	"examples/data-sources/k8sconnect_helm_template": {"greeter-chart"},
	// The release installs the helm_template example's chart (see setupFiles).
	"examples/resources/k8sconnect_helm_release": {"greeter-chart"},
}

var (
	daemonSets  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	namespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	crds        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// setupLocks serialize the blocks that use one setup.
var setupLocks sync.Map // name -> *sync.Mutex

// performSetups runs the named setups for t, holding each one's lock until t ends.
func performSetups(t *testing.T, names []string) {
	t.Helper()
	for _, name := range names {
		run, ok := setups[name]
		if !ok {
			t.Fatalf("unknown setup %q", name)
		}
		l, _ := setupLocks.LoadOrStore(name, &sync.Mutex{})
		mu := l.(*sync.Mutex)
		mu.Lock()
		// Registered first, so it runs last: after the setup's own cleanups.
		t.Cleanup(mu.Unlock)
		run(t)
	}
}

// namespace creates a namespace with its default ServiceAccount in place, and
// deletes it when t ends, waiting until it is gone.
func namespace(t *testing.T, name string) {
	t.Helper()
	cs := acctest.Clientset(t)
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() { deleteAndWait(t, namespaces, "", name) })
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := cs.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("namespace %s has no default ServiceAccount after 30s: %v", name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// deleteAndWait deletes an object and waits until it is gone, so that the
// next block using the same setup can make it afresh.
func deleteAndWait(t *testing.T, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	ri := acctest.Dynamic(t).Resource(gvr)
	ctx := context.Background()
	var err error
	if ns != "" {
		err = ri.Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{})
	} else {
		err = ri.Delete(ctx, name, metav1.DeleteOptions{})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting %s %s/%s: %v", gvr.Resource, ns, name, err)
		return
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		obj, err := acctest.Get(t, gvr, ns, name)
		if err == nil && obj == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s %s/%s is still there 2m after its deletion (err=%v)", gvr.Resource, ns, name, err)
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}
