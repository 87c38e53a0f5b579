package helmrelease_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// script writes an executable shell script into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// postrenderConfig is a release of the one-configmap chart piped through
// binary with args.
func postrenderConfig(t *testing.T, ns, name, binary, args string) string {
	return fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name       = %q
  namespace  = %q
  chart      = %q
  postrender = { binary_path = %q, args = [%s] }
  %s
}
`, name, ns, chartPath(t, "one-configmap"), binary, args, acctest.Connection(t))
}

// postrender pipes the rendered objects through a program, as helm
// --post-renderer: one that exits 1, and one that returns what is not YAML,
// each fail the plan naming it, with nothing applied; one that changes an
// object and adds another (from its arguments) makes the release those
// objects, in objects, the cluster and the record helm reads; a change of
// its arguments is an upgrade.
func TestAccHelmReleasePostrender(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "postrendered"
	dir := t.TempDir()
	failing := script(t, dir, "failing", "cat >/dev/null\necho 'kaboom: the post-renderer gave up' >&2\nexit 1\n")
	garbled := script(t, dir, "garbled", "cat >/dev/null\nprintf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata: [unclosed\\n'\n")
	good := script(t, dir, "good", "sed 's/greeting: hello/greeting: post-rendered/'\n"+
		"printf -- '---\\napiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: %s-added\\ndata:\\n  by: %s\\n' \"$1\" \"$2\"\n")
	added := "core/ConfigMap/" + ns + "/" + name + "-added"
	settings := "core/ConfigMap/" + ns + "/" + name + "-settings"
	nothingApplied := func() {
		if got := recordStatuses(t, ns, name); len(got) != 0 {
			t.Errorf("a refused plan wrote release records: %v", got)
		}
		acctest.MustNotExist(t, configMaps, ns, name+"-settings")
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config: postrenderConfig(t, ns, name, failing, ""),
				ExpectError: regexp.MustCompile(`(?s)Post-renderer failed.*post-renderer\s+` + regexp.QuoteMeta(failing) +
					`\s+exited\s+with\s+code\s+1.*kaboom:\s+the\s+post-renderer\s+gave\s+up`),
			},
			{
				PreConfig: nothingApplied,
				Config:    postrenderConfig(t, ns, name, garbled, ""),
				ExpectError: regexp.MustCompile(`(?s)Invalid chart output.*the\s+output\s+of\s+post-renderer\s+` +
					regexp.QuoteMeta(garbled)),
			},
			{
				PreConfig: nothingApplied,
				Config:    postrenderConfig(t, ns, name, good, fmt.Sprintf("%q, %q", name, "first")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("objects").AtMapKey(settings).AtMapKey("data.greeting"),
						knownvalue.StringExact("post-rendered")),
					plancheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("objects").AtMapKey(added).AtMapKey("data.by"),
						knownvalue.StringExact("first")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					configMapData(t, ns, name+"-settings", "greeting", "post-rendered"),
					configMapData(t, ns, name+"-added", "by", "first"),
					acctest.ClusterCheck(func() error {
						m := helmCLI(t, "get", "manifest", name, "-n", ns)
						if !strings.Contains(m, "greeting: post-rendered") || !strings.Contains(m, "name: "+name+"-added") {
							return fmt.Errorf("helm get manifest should show the post-rendered objects:\n%s", m)
						}
						return nil
					}),
				},
			},
			{
				Config: postrenderConfig(t, ns, name, good, fmt.Sprintf("%q, %q", name, "second")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("k8sconnect_helm_release.app", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					configMapData(t, ns, name+"-added", "by", "second"),
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(2)),
				},
			},
		},
	})
}
