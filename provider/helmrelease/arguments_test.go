package helmrelease_test

import (
	"encoding/json"
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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// The arguments of hashicorp/helm's helm_release that tune how a release is
// applied, what its record says and how values are set, on the extras chart.

// extrasConfig is a release of the extras chart with more arguments.
func extrasConfig(t *testing.T, ns, name, more string) string {
	return fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name      = %q
  namespace = %q
  chart     = %q
  %s
  %s
}
`, name, ns, chartPath(t, "extras"), acctest.Connection(t), more)
}

// helmHistory is each revision's description as `helm history` shows it.
func helmHistory(t *testing.T, ns, name string) map[int]string {
	t.Helper()
	var revisions []struct {
		Revision    int    `json:"revision"`
		Description string `json:"description"`
	}
	if err := json.Unmarshal([]byte(helmCLI(t, "history", name, "-n", ns, "-o", "json")), &revisions); err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, r := range revisions {
		out[r.Revision] = r.Description
	}
	return out
}

// described checks that helm history describes revision as want.
func described(t *testing.T, ns, name string, revision int, want string) acctest.ClusterCheck {
	return func() error {
		if got := helmHistory(t, ns, name)[revision]; got != want {
			return fmt.Errorf("helm history describes revision %d as %q, want %q", revision, got, want)
		}
		return nil
	}
}

// helmNotes checks that `helm get notes` shows what notes holds.
func helmNotes(t *testing.T, ns, name, want string) acctest.ClusterCheck {
	return func() error {
		got := helmCLI(t, "get", "notes", name, "-n", ns)
		if strings.TrimSpace(strings.TrimPrefix(got, "NOTES:\n")) != strings.TrimSpace(want) {
			return fmt.Errorf("helm get notes:\n%s\nwant:\n%s", got, want)
		}
		return nil
	}
}

func notesAre(want string) statecheck.StateCheck {
	return statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("notes"), knownvalue.StringExact(want))
}

// description describes each revision an install or upgrade writes, as helm
// --description, and a change to it alone is an upgrade; notes holds the
// rendered NOTES.txt as the record keeps it (scrubbed of set_sensitive
// values), the subchart's too with render_subchart_notes, whose change is an
// upgrade as well.
func TestAccHelmReleaseDescriptionAndNotes(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "described"
	token := acctest.NewSecretValue("token")
	sensitiveSet := fmt.Sprintf(`set_sensitive = [{ name = "token", value = %q }]`, token.Plain)
	notes := func(revision int) string {
		return fmt.Sprintf("%s at revision %d, token (sensitive value hidden).\n", name, revision)
	}
	helper := "The helper of " + name + " is ready.\n"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		CheckDestroy:             func(*terraform.State) error { return records(t, ns, name, map[string]string{})() },
		Steps: []resource.TestStep{
			{
				Config: extrasConfig(t, ns, name, sensitiveSet+"\n  description = \"first rollout\""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue("k8sconnect_helm_release.app", tfjsonpath.New("notes")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					notesAre(notes(1)),
					described(t, ns, name, 1, "first rollout"),
					helmNotes(t, ns, name, notes(1)),
				},
			},
			{
				Config:           extrasConfig(t, ns, name, sensitiveSet+"\n  description = \"first rollout\""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				Config: extrasConfig(t, ns, name, sensitiveSet+"\n  description = \"first rollout\"\n  render_subchart_notes = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("k8sconnect_helm_release.app", plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					notesAre(notes(2) + "\n" + helper),
					described(t, ns, name, 2, "first rollout"),
					helmNotes(t, ns, name, notes(2)+"\n"+helper),
					configMapData(t, ns, name+"-hooked", "revision", "2"), // an upgrade: its hooks ran
				},
			},
			{
				Config: extrasConfig(t, ns, name, sensitiveSet+"\n  description = \"hosts kept\"\n  render_subchart_notes = true"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(3)),
					described(t, ns, name, 1, "first rollout"),
					described(t, ns, name, 3, "hosts kept"),
					configMapData(t, ns, name+"-hooked", "revision", "3"),
				},
			},
			{
				// Without a description, helm's own.
				Config: extrasConfig(t, ns, name, sensitiveSet),
				ConfigStateChecks: []statecheck.StateCheck{
					described(t, ns, name, 4, "Upgrade complete"),
					notesAre(notes(4)),
				},
			},
		},
	})
}

// set_list sets lists as --set name={a,b}, each value one element: a comma
// splits nothing, and an empty list empties the chart's default.
func TestAccHelmReleaseSetList(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "listed"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config: extrasConfig(t, ns, name, `set_list = [{ name = "hosts", value = ["a.example, b.example", "c.example"] }]`),
				ConfigStateChecks: []statecheck.StateCheck{
					configMapData(t, ns, name+"-settings", "hosts", `["a.example, b.example","c.example"]`),
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app",
						tfjsonpath.New("objects").AtMapKey("core/ConfigMap/"+ns+"/"+name+"-settings").AtMapKey("data.hosts"),
						knownvalue.StringExact(`["a.example, b.example","c.example"]`)),
				},
			},
			{
				Config:           extrasConfig(t, ns, name, `set_list = [{ name = "hosts", value = ["a.example, b.example", "c.example"] }]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				Config: extrasConfig(t, ns, name, `set_list = [{ name = "hosts", value = [] }]`),
				ConfigStateChecks: []statecheck.StateCheck{
					configMapData(t, ns, name+"-settings", "hosts", `[]`),
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(2)),
				},
			},
		},
	})
}

// disable_webhooks runs no hook, at install, upgrade and destroy, as helm
// --no-hooks; the record keeps them, so `helm get hooks` lists them.
func TestAccHelmReleaseDisableWebhooks(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "hookless"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		CheckDestroy: func(*terraform.State) error {
			for _, c := range []acctest.ClusterCheck{
				present(t, configMaps, ns, name+"-uninstalled", false), // the post-delete hook did not run
				present(t, configMaps, ns, name+"-settings", false),
				records(t, ns, name, map[string]string{}),
			} {
				if err := c(); err != nil {
					return err
				}
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: extrasConfig(t, ns, name, "disable_webhooks = true"),
				ConfigStateChecks: []statecheck.StateCheck{
					present(t, configMaps, ns, name+"-settings", true),
					present(t, configMaps, ns, name+"-hooked", false),
					records(t, ns, name, map[string]string{"v1": "deployed"}),
					acctest.ClusterCheck(func() error {
						if h := helmCLI(t, "get", "hooks", name, "-n", ns); !strings.Contains(h, "name: "+name+"-hooked") {
							return fmt.Errorf("helm get hooks lacks the pre-install hook:\n%s", h)
						}
						return nil
					}),
				},
			},
			{
				Config: extrasConfig(t, ns, name, "disable_webhooks = true\n  set = [{ name = \"hosts[0]\", value = \"changed\" }]"),
				ConfigStateChecks: []statecheck.StateCheck{
					configMapData(t, ns, name+"-settings", "hosts", `["changed"]`),
					present(t, configMaps, ns, name+"-hooked", false),
					records(t, ns, name, map[string]string{"v1": "superseded", "v2": "deployed"}),
				},
			},
		},
	})
}

// wait_for_jobs awaits every Job of the release until it completes, as helm
// --wait-for-jobs: a Job that never completes fails the run after timeout,
// naming it, where wait alone takes it as ready once started; a Job that
// fails fails the run at once; a Job that completes has completed when the
// apply returns.
func TestAccHelmReleaseWaitForJobs(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "jobs"
	config := func(job, more string) string {
		return extrasConfig(t, ns, name, fmt.Sprintf("set = [{ name = \"job\", value = %q }]\n  %s", job, more))
	}
	const timeout = "\n  timeout = \"30s\""
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config: config("held", "wait_for_jobs = true\n  timeout = \"10s\""),
				ExpectError: regexp.MustCompile(`(?s)Release not ready.*batch/Job/` + ns + `/` + name +
					`-held\s+is\s+not\s+ready`),
			},
			{
				Config: config("held", timeout),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("status"), knownvalue.StringExact("deployed")),
				},
			},
			{
				Config:      config("failing", "wait_for_jobs = true"+timeout),
				ExpectError: regexp.MustCompile(`(?s)batch/Job/` + ns + `/` + name + `-failing\s+is\s+not\s+ready.*exit\s+code\s+1`),
			},
			{
				Config: config("quick", "wait_for_jobs = true"+timeout),
				ConfigStateChecks: []statecheck.StateCheck{
					acctest.ClusterCheck(func() error {
						job, err := acctest.Get(t, jobs, ns, name+"-quick")
						if err != nil || job == nil {
							return fmt.Errorf("job %s-quick: %v", name, err)
						}
						if n, _, _ := unstructured.NestedInt64(job.Object, "status", "succeeded"); n != 1 {
							return fmt.Errorf("the apply returned before the Job completed: status %v", job.Object["status"])
						}
						return nil
					}),
				},
			},
		},
	})
}

// lint fails the plan of a chart that helm lint fails, naming the file and
// the finding, though the chart renders and installs without it.
func TestAccHelmReleaseLint(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "linted"
	config := func(more string) string {
		return fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name      = %q
  namespace = %q
  chart     = %q
  %s
  %s
}
`, name, ns, chartPath(t, "linty"), acctest.Connection(t), more)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config:      config("lint = true"),
				ExpectError: regexp.MustCompile(`(?s)The chart fails lint.*Chart\.yaml:\s+invalid\s+email\s+'not-an-email'\s+for\s+maintainer\s+'ops'`),
			},
			{
				Config: config(""),
				ConfigStateChecks: []statecheck.StateCheck{
					present(t, configMaps, ns, name+"-settings", true),
				},
			},
		},
	})
}

// upgrade_install takes over, at install, a release that helm made, as an
// import would and as helm upgrade --install upgrades it: the same UIDs,
// helm's field manager let go, the next revision of the same history (an
// upgrade: its hooks run); without it the install is refused. The values are
// helm's, so that helm's field manager keeps every field unless it is taken
// from it.
func TestAccHelmReleaseUpgradeInstall(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "upgraded"
	helmCLI(t, "install", name, chartPath(t, "extras"), "-n", ns, "--set", "hosts={a.example}")
	uid := acctest.UID(t, configMaps, ns, name+"-settings")
	set := `set_list = [{ name = "hosts", value = ["a.example"] }]`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config:      extrasConfig(t, ns, name, set),
				ExpectError: regexp.MustCompile(`(?s)already exists in the cluster.*upgrade_install = true`),
			},
			{
				Config: extrasConfig(t, ns, name, set+"\n  upgrade_install = true"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(2)),
					records(t, ns, name, map[string]string{"v1": "superseded", "v2": "deployed"}),
					described(t, ns, name, 1, "Install complete"),
					described(t, ns, name, 2, "Upgrade complete"),
					configMapData(t, ns, name+"-hooked", "revision", "2"),
					acctest.ClusterCheck(func() error {
						cm := acctest.MustGet(t, configMaps, ns, name+"-settings")
						if string(cm.GetUID()) != uid {
							return fmt.Errorf("the ConfigMap was replaced: UID %s -> %s", uid, cm.GetUID())
						}
						for _, e := range cm.GetManagedFields() {
							if e.Manager == "helm" && e.FieldsV1 != nil && strings.Contains(string(e.FieldsV1.GetRawBytes()), "f:hosts") {
								return fmt.Errorf("helm's field manager still holds data.hosts: %s", e.FieldsV1.GetRawBytes())
							}
						}
						return nil
					}),
				},
			},
			{
				Config:           extrasConfig(t, ns, name, set+"\n  upgrade_install = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}
