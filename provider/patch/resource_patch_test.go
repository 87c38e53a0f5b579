package patch_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
	"github.com/k8sconnect/k8sconnect/internal/testing/fixtures"
)

func TestMain(m *testing.M) { acctest.Main(m) }

var (
	daemonSets  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

func hasPatchManager(obj *unstructured.Unstructured) bool { return len(acctest.PatchManagers(obj)) > 0 }

func awsNodePatch(conn, noProxy string) string {
	return fmt.Sprintf(`
resource "k8sconnect_patch" "aws_node_proxy" {
  target = {
    api_version = "apps/v1"
    kind        = "DaemonSet"
    name        = "aws-node"
    namespace   = "kube-system"
  }
  patch = yamlencode({
    spec = { template = { spec = { containers = [{
      name = "aws-node"
      env = [
        { name = "HTTP_PROXY", value = "http://proxy:3128" },
        { name = "NO_PROXY", value = %q },
      ]
    }] } } }
  })
  take_ownership = true
  %s
}
`, noProxy, conn)
}

// Scenario 1: the EKS aws-node DaemonSet, created by another manager.
func TestAccPatch_awsNodeProxy(t *testing.T) {
	acctest.ApplyAs(t, "eks.amazonaws.com", daemonSets, fixtures.AWSNodeDaemonSet("kube-system"))
	conn := acctest.Connection(t)

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		CheckDestroy: func(*terraform.State) error {
			ds := acctest.MustGet(t, daemonSets, "kube-system", "aws-node")
			if hasPatchManager(ds) {
				return fmt.Errorf("our field manager is still in managedFields after destroy: %v", acctest.Managers(ds))
			}
			env := acctest.ContainerEnv(ds, "aws-node")
			if env["HTTP_PROXY"] != "http://proxy:3128" {
				return fmt.Errorf("destroy reverted HTTP_PROXY (env %v); it must leave the value", env)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: awsNodePatch(conn, ".svc,.cluster.local"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue("k8sconnect_patch.aws_node_proxy",
						tfjsonpath.New("managed_fields").AtMapKey("spec.template.spec.containers[name=aws-node].env[name=HTTP_PROXY].value"),
						knownvalue.StringExact("http://proxy:3128")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("k8sconnect_patch.aws_node_proxy",
						tfjsonpath.New("previous_owners").AtMapKey("spec.template.spec.containers[name=aws-node].name"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("eks.amazonaws.com")})),
				},
				Check: func(*terraform.State) error {
					ds := acctest.MustGet(t, daemonSets, "kube-system", "aws-node")
					env := acctest.ContainerEnv(ds, "aws-node")
					for k, v := range map[string]string{"HTTP_PROXY": "http://proxy:3128", "NO_PROXY": ".svc,.cluster.local",
						"AWS_VPC_K8S_CNI_LOGLEVEL": "DEBUG", "WARM_ENI_TARGET": "1", "__image": "amazon-k8s-cni:v1.18.0"} {
						if env[k] != v {
							return fmt.Errorf("aws-node %s = %q, want %q (env %v)", k, env[k], v, env)
						}
					}
					if other := acctest.ContainerEnv(ds, "aws-eks-nodeagent"); other["__image"] != "aws-network-policy-agent:v1.1.0" {
						return fmt.Errorf("the other container was changed: %v", other)
					}
					return nil
				},
			},
			{
				// Changing the patch updates in place.
				Config: awsNodePatch(conn, ".svc,.cluster.local,169.254.169.254"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("k8sconnect_patch.aws_node_proxy", plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					if got := acctest.ContainerEnv(acctest.MustGet(t, daemonSets, "kube-system", "aws-node"), "aws-node")["NO_PROXY"]; got != ".svc,.cluster.local,169.254.169.254" {
						return fmt.Errorf("NO_PROXY = %q", got)
					}
					return nil
				},
			},
		},
	})
	// The release is recorded as an Event on the DaemonSet.
	evs, err := acctest.Clientset(t).CoreV1().Events("kube-system").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs.Items {
		if e.Reason == "OwnershipReleased" && e.InvolvedObject.Name == "aws-node" && strings.Contains(e.Message, "env[name=HTTP_PROXY]") {
			found = true
		}
	}
	if !found {
		t.Fatal("no OwnershipReleased event on aws-node")
	}
}

// Scenario 2: a Helm-made Deployment gets an annotation and new limits for one container.
func TestAccPatch_helmDeployment(t *testing.T) {
	ns := acctest.Namespace(t)
	acctest.ApplyAs(t, "helm", deployments, fixtures.HelmDeployment(ns))
	conn := acctest.Connection(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "k8sconnect_patch" "web" {
  target = { api_version = "apps/v1", kind = "Deployment", name = "web", namespace = %q }
  patch = <<-YAML
    metadata:
      annotations:
        example.com/owner: platform
    spec:
      template:
        spec:
          containers:
            - name: web
              resources:
                limits: {memory: 1Gi}
  YAML
  take_ownership = true
  %s
}
`, ns, conn),
			Check: func(*terraform.State) error {
				d := acctest.MustGet(t, deployments, ns, "web")
				if d.GetAnnotations()["example.com/owner"] != "platform" {
					return fmt.Errorf("annotation missing: %v", d.GetAnnotations())
				}
				cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
				if len(cs) != 2 {
					return fmt.Errorf("containers = %d, want 2", len(cs))
				}
				web := cs[0].(map[string]any)
				limits := web["resources"].(map[string]any)["limits"].(map[string]any)
				if limits["memory"] != "1Gi" || limits["cpu"] != "500m" {
					return fmt.Errorf("web limits = %v, want memory 1Gi and cpu 500m kept", limits)
				}
				side := cs[1].(map[string]any)["resources"].(map[string]any)["limits"].(map[string]any)
				if side["cpu"] != "100m" {
					return fmt.Errorf("sidecar limits changed: %v", side)
				}
				return nil
			},
		}},
	})
}

func configMapAs(t *testing.T, manager, ns, name, data string) {
	acctest.ApplyAs(t, manager, configMaps, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: %s\n", name, ns, data))
}

// Scenario 3: RFC 6902 operations, a failing test op, ~1 escaping; merge patch set and delete.
func TestAccPatch_jsonPatchAndMergePatch(t *testing.T) {
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	configMapAs(t, "tool", ns, "cfg", `{a: "1", b: "2", c: "3", d: "4", keep: "x"}`)
	jsonPatch := func(testValue string) string {
		return fmt.Sprintf(`
resource "k8sconnect_patch" "json" {
  target = { api_version = "v1", kind = "ConfigMap", name = "cfg", namespace = %q }
  json_patch = jsonencode([
    { op = "test",    path = "/data/keep", value = %q },
    { op = "add",     path = "/metadata/annotations", value = {} },
    { op = "add",     path = "/metadata/annotations/prometheus.io~1scrape", value = "true" },
    { op = "replace", path = "/data/a", value = "one" },
    { op = "remove",  path = "/data/b" },
    { op = "move",    from = "/data/c", path = "/data/moved" },
    { op = "copy",    from = "/data/d", path = "/data/copied" },
  ])
  take_ownership = true
  %s
}
`, ns, testValue, conn)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				// The server says only "an error in our request"; the provider names the operation.
				Config:      jsonPatch("not-x"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)rejected\s+the\s+patch.*json_patch\s+operation\s+0\s+\(test\s+/data/keep\)\s+failed:\s+testing\s+value\s+/data/keep\s+failed`),
			},
			{
				Config: jsonPatch("x"),
				Check: func(*terraform.State) error {
					cm := acctest.MustGet(t, configMaps, ns, "cfg")
					data := cm.Object["data"].(map[string]any)
					want := map[string]any{"a": "one", "moved": "3", "d": "4", "copied": "4", "keep": "x"}
					for k, v := range want {
						if data[k] != v {
							return fmt.Errorf("data.%s = %v, want %v (data %v)", k, data[k], v, data)
						}
					}
					if _, ok := data["b"]; ok {
						return fmt.Errorf("data.b was not removed")
					}
					if _, ok := data["c"]; ok {
						return fmt.Errorf("data.c was not moved")
					}
					if cm.GetAnnotations()["prometheus.io/scrape"] != "true" {
						return fmt.Errorf("~1 was not unescaped: %v", cm.GetAnnotations())
					}
					return nil
				},
			},
		},
	})

	configMapAs(t, "tool", ns, "merge", `{keep: "x", drop: "y"}`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "k8sconnect_patch" "merge" {
  target      = { api_version = "v1", kind = "ConfigMap", name = "merge", namespace = %q }
  merge_patch = jsonencode({ data = { added = "z", drop = null } })
  take_ownership = true
  %s
}
`, ns, conn),
			Check: func(*terraform.State) error {
				data := acctest.MustGet(t, configMaps, ns, "merge").Object["data"].(map[string]any)
				if data["added"] != "z" || data["keep"] != "x" {
					return fmt.Errorf("merge patch data = %v", data)
				}
				if _, ok := data["drop"]; ok {
					return fmt.Errorf("null did not delete data.drop: %v", data)
				}
				return nil
			},
		}},
	})
}

// Scenario 4: two patches on one target with disjoint fields; each destroy
// releases only its own.
func TestAccPatch_twoPatchesReleaseOnlyTheirOwn(t *testing.T) {
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	configMapAs(t, "tool", ns, "shared", `{base: "1"}`)
	one := fmt.Sprintf(`
resource "k8sconnect_patch" "one" {
  target = { api_version = "v1", kind = "ConfigMap", name = "shared", namespace = %q }
  patch  = "data:\n  one: \"1\"\n"
  take_ownership = true
  %s
}
`, ns, conn)
	two := strings.ReplaceAll(strings.ReplaceAll(one, `"one"`, `"two"`), `one: \"1\"`, `two: \"2\"`)
	var twoManager string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config: one + two,
				Check: func(s *terraform.State) error {
					twoManager = "k8sconnect-patch-" + s.RootModule().Resources["k8sconnect_patch.two"].Primary.ID
					data := acctest.MustGet(t, configMaps, ns, "shared").Object["data"].(map[string]any)
					if data["one"] != "1" || data["two"] != "2" || data["base"] != "1" {
						return fmt.Errorf("data = %v", data)
					}
					return nil
				},
			},
			{
				Config: two,
				Check: func(*terraform.State) error {
					cm := acctest.MustGet(t, configMaps, ns, "shared")
					ms := strings.Join(acctest.Managers(cm), ",")
					if !strings.Contains(ms, twoManager) || strings.Count(ms, "k8sconnect-patch-") != 1 {
						return fmt.Errorf("after destroying one, managers = %s; want only %s among patches", ms, twoManager)
					}
					if cm.Object["data"].(map[string]any)["one"] != "1" {
						return fmt.Errorf("destroying one reverted its value")
					}
					return nil
				},
			},
		},
	})
}

// A second patch that would take the first one's field is refused at plan.
func TestAccPatch_rivalPatchRefused(t *testing.T) {
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	configMapAs(t, "tool", ns, "contested", `{base: "1"}`)
	p := func(name, value string) string {
		return fmt.Sprintf(`
resource "k8sconnect_patch" %q {
  target = { api_version = "v1", kind = "ConfigMap", name = "contested", namespace = %q }
  patch  = "data:\n  level: %s\n"
  take_ownership = true
  %s
}
`, name, ns, value, conn)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{Config: p("first", "a")},
			{Config: p("first", "a") + p("second", "b"), ExpectError: regexp.MustCompile(`(?s)Another k8sconnect_patch owns.*data.level`)},
		},
	})
}

// Scenario 6: bad input fails at plan and applies nothing.
func TestAccPatch_badInput(t *testing.T) {
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	configMapAs(t, "tool", ns, "victim", `{a: "1"}`)
	target := fmt.Sprintf(`target = { api_version = "v1", kind = "ConfigMap", name = "victim", namespace = %q }`, ns)
	cases := map[string]struct{ body, want string }{
		"invalid yaml":         {`patch = "data: [unclosed"` + "\n take_ownership = true", `not valid YAML`},
		"op without path":      {`json_patch = jsonencode([{ op = "add", value = "x" }])` + "\n take_ownership = true", `operation 0 \(add\) needs a path`},
		"op without value":     {`json_patch = jsonencode([{ op = "replace", path = "/data/a" }])` + "\n take_ownership = true", `needs a value`},
		"take_ownership false": {`patch = "data: {a: b}"` + "\n take_ownership = false", `take_ownership must be true`},
		"two patch types":      {`patch = "data: {a: b}"` + "\n merge_patch = \"data: {a: c}\"\n take_ownership = true", `2 attributes specified when one \(and only one\) of`},
		"metadata.uid":         {`merge_patch = "metadata: {uid: abc}"` + "\n take_ownership = true", `metadata.uid`},
		"status":               {`json_patch = jsonencode([{ op = "add", path = "/status/x", value = 1 }])` + "\n take_ownership = true", `changes status`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.Factories(),
				Steps: []resource.TestStep{{
					Config:      fmt.Sprintf("resource \"k8sconnect_patch\" \"bad\" {\n  %s\n  %s\n  %s\n}\n", target, tc.body, conn),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
	if data := acctest.MustGet(t, configMaps, ns, "victim").Object["data"].(map[string]any); len(data) != 1 || data["a"] != "1" {
		t.Fatalf("bad input changed the target: %v", data)
	}
}

// Self-patching: an object k8sconnect_object manages cannot be patched.
func TestAccPatch_refusesObjectsManagedByK8sconnectObject(t *testing.T) {
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{Config: fmt.Sprintf(`
resource "k8sconnect_object" "mine" {
  yaml_body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mine\n  namespace: %s\ndata: {a: b}\n"
  %s
}
`, ns, conn)},
			{
				Config: fmt.Sprintf(`
resource "k8sconnect_object" "mine" {
  yaml_body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mine\n  namespace: %[1]s\ndata: {a: b}\n"
  %[2]s
}
resource "k8sconnect_patch" "self" {
  target = { api_version = "v1", kind = "ConfigMap", name = "mine", namespace = %[1]q }
  patch  = "data: {a: c}"
  take_ownership = true
  %[2]s
}
`, ns, conn),
				ExpectError: regexp.MustCompile(`Cannot patch an object k8sconnect_object manages`),
			},
		},
	})
}

// A missing target is an error at apply that points to k8sconnect_object; a
// target deleted later takes the patch out of state quietly.
func TestAccPatch_missingAndDeletedTarget(t *testing.T) {
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	cfg := fmt.Sprintf(`
resource "k8sconnect_patch" "p" {
  target = { api_version = "v1", kind = "ConfigMap", name = "later", namespace = %q }
  patch  = "data: {a: b}"
  take_ownership = true
  %s
}
`, ns, conn)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{Config: cfg, ExpectError: regexp.MustCompile(`(?s)does not exist.*use k8sconnect_object`)},
			{
				PreConfig: func() { configMapAs(t, "tool", ns, "later", `{x: "1"}`) },
				Config:    cfg,
			},
			{
				PreConfig: func() {
					_ = acctest.Clientset(t).CoreV1().ConfigMaps(ns).Delete(context.Background(), "later", metav1.DeleteOptions{})
				},
				Config:             cfg,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true, // the patch left state; it would be created again
			},
		},
	})
}

// A refresh that gets no answer about the target (every read of it dropped on
// the way) keeps the patch in state and says why, with the remedy; only a
// definite answer takes it out (TestAccPatch_missingAndDeletedTarget). This
// is the rule k8sconnect_object's refresh keeps too, through the same code.
func TestAccPatch_refreshWithoutAnAnswerKeepsState(t *testing.T) {
	p := newPatchCrash(t)
	p.w.MustApply()
	f := p.proxy.Inject(faultproxy.Rule{Match: faultproxy.Match{Method: "GET", Path: "/configmaps/" + p.name}, Action: faultproxy.Drop})
	r := p.w.Run("apply", "-refresh-only", "-auto-approve", "-input=false", "-json")
	acctest.ExpectActed(t, f)
	if r.Err != nil {
		t.Fatalf("%s apply -refresh-only with no answer about the target should warn, not fail: %v\n%s", acctest.Engine(), r.Err, r.Output)
	}
	if got := p.w.StateList(); strings.Join(got, ",") != "k8sconnect_patch.greeting" {
		t.Fatalf("a refresh that got no answer changed state to %q\n%s", got, r.Output)
	}
	warned := false
	for _, d := range r.Warnings() {
		warned = warned || (strings.Contains(d.Summary, "Could not refresh the patch of ConfigMap "+p.ns+"/"+p.name) &&
			strings.Contains(d.Summary, "state kept as it was") && strings.Contains(d.Detail, "run again when the cluster is reachable"))
	}
	if !warned {
		t.Fatalf("want a warning that the patch's state was kept, naming the target and the remedy; have %+v\n%s", r.Warnings(), r.Output)
	}
	f.Remove()
	p.expectConverged("")
}
