package object_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// counted declares a ConfigMap; every one but c0 waits for c0.
func counted(conn, ns, label, name, value string) string {
	after := "\n  depends_on = [k8sconnect_object.c0]"
	if label == "c0" {
		after = ""
	}
	return fmt.Sprintf(`
resource "k8sconnect_object" "%s" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: %s
      namespace: %s
    data:
      greeting: %s
  YAML
  %s%s
}
`, label, name, ns, value, conn, after)
}

// Requests per object, counted against the real server.
//
// A create costs exactly three: the dry run of the create-only apply at plan,
// and the two steps of the crash-safe, exclusive create
// (docs/adr/0001-crash-safe-create.md). The engine plans each create once
// more right before applying it; once the provider has applied anything in
// that run, that re-plan sends nothing (providerdata.Phase). So only the
// creates re-planned before the run's first apply (at most -parallelism of
// them) cost a fourth request: here the first object, which every other one
// depends on.
//
// A plan of an unchanged object costs one read and one dry run; an update,
// one apply.
func TestAccObject_requestsPerObject(t *testing.T) {
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	base := acctest.Name("counted")
	names := []string{"c0", "c1", "c2", "c3"}
	log := filepath.Join(t.TempDir(), "requests.log")
	t.Setenv("K8SCONNECT_REQUEST_LOG", log)
	config := func(value string) string {
		var b strings.Builder
		for _, n := range names {
			b.WriteString(counted(conn, ns, n, base+"-"+n, value))
		}
		return b.String()
	}
	w := acctest.NewWorkdir(t)
	w.Write(config("one"))
	w.MustApply()
	w.Cleanup()
	var summary []string
	for i, n := range names {
		got := acctest.RequestsTo(t, log, "configmaps", base+"-"+n)
		want := 3
		if i == 0 {
			want = 4 // re-planned before the run's first apply
		}
		if len(got) != want {
			t.Errorf("create of %s made %d requests on the object, want exactly %d:\n%s", n, len(got), want, strings.Join(got, "\n"))
		}
		dryRuns := 0
		for _, l := range got {
			if strings.Contains(l, "dryRun") {
				dryRuns++
			}
		}
		if dryRuns != want-2 {
			t.Errorf("create of %s made %d dry runs, want %d (the plan's check%s):\n%s", n, dryRuns, want-2,
				map[bool]string{true: " and the first re-plan's", false: ""}[i == 0], strings.Join(got, "\n"))
		}
		summary = append(summary, fmt.Sprintf("%s %d", n, len(got)))
	}

	acctest.ClearRequestLog(t, log)
	if r := w.Plan(); r.Err != nil {
		t.Fatalf("plan: %v\n%s", r.Err, r.Output)
	}
	for _, n := range names {
		// The read alone: nobody changed the object since the apply, so a dry
		// run would answer what the apply stored (ownership.UnchangedSinceApply).
		if got := acctest.RequestsTo(t, log, "configmaps", base+"-"+n); len(got) != 1 || !strings.HasPrefix(got[0], "GET") {
			t.Errorf("plan of unchanged %s made %d requests, want exactly 1 (the read):\n%s", n, len(got), strings.Join(got, "\n"))
		}
	}

	w.Write(config("two"))
	acctest.ClearRequestLog(t, log)
	w.MustApply()
	for _, n := range names {
		var applies []string
		for _, l := range acctest.RequestsTo(t, log, "configmaps", base+"-"+n) {
			if strings.HasPrefix(l, "PATCH") && !strings.Contains(l, "dryRun") {
				applies = append(applies, l)
			}
		}
		if len(applies) != 1 {
			t.Errorf("update of %s made %d apply requests, want 1:\n%s", n, len(applies), strings.Join(applies, "\n"))
		}
	}
	fmt.Fprintf(os.Stderr, "requests per object on create: %s\n", strings.Join(summary, ", "))
}

// A plan that makes a namespace and objects in it asks the server about the
// namespace's absence once per concurrent plan, not once per object: the
// server holds a create in a namespace it lacks for 50 ms before it answers
// NotFound, and every object's dry run would sit through that wait to learn
// what the first answer said (connection.NamespaceMissing). The objects are
// known after apply either way, and the apply makes them all. An object in a
// namespace that exists is still dry-run in the same plan, so a mistake in
// it is still refused at plan.
func TestAccObject_planIntoANewNamespace(t *testing.T) {
	fresh, existing, conn := acctest.NamespaceToMake(t), acctest.Namespace(t), acctest.Connection(t)
	base := acctest.Name("cm")
	const objects, parallelism = 24, 4
	log := filepath.Join(t.TempDir(), "requests.log")
	t.Setenv("K8SCONNECT_REQUEST_LOG", log)
	config := func(extra string) string {
		var b strings.Builder
		fmt.Fprintf(&b, `
resource "k8sconnect_object" "ns" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: Namespace
    metadata:
      name: %s
  YAML
  %s
}

resource "k8sconnect_object" "cm" {
  count     = %d
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: %s-${count.index}
      namespace: %s
    data:
      greeting: hello
  YAML
  %s
  depends_on = [k8sconnect_object.ns]
}
`, fresh, conn, objects, base, fresh, conn)
		b.WriteString(extra)
		return b.String()
	}
	w := acctest.NewWorkdir(t)

	// In the same plan, a mistake in an object of a namespace that exists.
	w.Write(config(fmt.Sprintf(`
resource "k8sconnect_object" "typo" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: %s-typo
      namespace: %s
    dta:
      greeting: hello
  YAML
  %s
  depends_on = [k8sconnect_object.cm]
}
`, base, existing, conn)))
	r := w.Run("plan", "-input=false", "-no-color", fmt.Sprintf("-parallelism=%d", parallelism))
	w.MustFail(r, "plan with a misspelt field in a namespace that exists")
	if !strings.Contains(r.Output, "Unknown field in") || !strings.Contains(r.Output, `"dta"`) {
		t.Errorf("the plan does not refuse the misspelt field dta:\n%s", r.Output)
	}

	w.Write(config(""))
	acctest.ClearRequestLog(t, log)
	if r := w.Run("plan", "-input=false", "-out=tfplan", fmt.Sprintf("-parallelism=%d", parallelism)); r.Err != nil {
		t.Fatalf("plan: %v\n%s", r.Err, r.Output)
	}
	dryRuns := 0
	for i := range objects {
		for _, l := range acctest.RequestsTo(t, log, "configmaps", fmt.Sprintf("%s-%d", base, i)) {
			if !strings.Contains(l, "dryRun") {
				t.Errorf("the plan sent %s", l)
			}
			dryRuns++
		}
	}
	t.Logf("%d dry runs for %d ConfigMaps", dryRuns, objects)
	if dryRuns == 0 || dryRuns > parallelism {
		t.Errorf("the plan sent %d dry runs for %d ConfigMaps in namespace %s, which it is to make; want 1 to %d "+
			"(one per concurrent plan, until the server has said the namespace does not exist)",
			dryRuns, objects, fresh, parallelism)
	}
	w.Cleanup()
	if r := w.Run("apply", "-input=false", "tfplan"); r.Err != nil {
		t.Fatalf("apply of the saved plan: %v\n%s", r.Err, r.Output)
	}
	for i := range objects {
		acctest.MustGet(t, configMaps, fresh, fmt.Sprintf("%s-%d", base, i))
	}
	w.MustPlanNoChanges()
}
