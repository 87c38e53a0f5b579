package manifestset_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// kubectl runs the real kubectl with ApplySets enabled (KUBECTL_APPLYSET,
// alpha in kubectl 1.32) against the shared cluster, from dir; it returns
// what kubectl printed and whether it succeeded.
func kubectl(t *testing.T, dir string, args ...string) (string, bool) {
	t.Helper()
	bin := "/usr/bin/kubectl"
	if _, err := os.Stat(bin); err != nil {
		bin = "kubectl"
	}
	cmd := exec.Command(bin, append([]string{"--kubeconfig", localcluster.Shared(t).KubeconfigPath}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECTL_APPLYSET=true")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err == nil
}

// The set and kubectl's ApplySets are one and the same kind of thing: for
// the same parent, kubectl writes the id this set computed, and the same
// kinds annotation for the same kinds; each refuses to take over the other's
// parent, naming the tool that holds it.
func TestAccManifestSet_kubectlSeesTheSameApplySet(t *testing.T) {
	t.Parallel()
	ns := acctest.Namespace(t)
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("kubectl.yaml", configMap(ns, "by-kubectl", "k"))

	// kubectl's own set, parent secret/kubectl-made.
	if out, ok := kubectl(t, dir, "apply", "--server-side", "--prune", "--applyset=secret/kubectl-made", "-n", ns, "-f", "kubectl.yaml"); !ok {
		t.Fatalf("kubectl apply --applyset: %s", out)
	}
	kubectlParent := acctest.MustGet(t, secrets, ns, "kubectl-made")

	// Ours, parent secret/ours, with a ConfigMap too.
	w := acctest.NewWorkdir(t)
	w.Write(setConfig(t, "set", yamlBody(configMap(ns, "by-k8sconnect", "s")),
		`applyset = { name = "ours", namespace = "`+ns+`" }`))
	w.Cleanup()
	w.MustApply()
	ours := acctest.MustGet(t, secrets, ns, "ours")
	const kinds = "applyset.kubernetes.io/contains-group-kinds"
	if got, want := ours.GetAnnotations()[kinds], kubectlParent.GetAnnotations()[kinds]; got != want || got != "ConfigMap" {
		t.Errorf("%s: ours %q, kubectl's %q", kinds, got, want)
	}
	ourID := w.StateAttribute("k8sconnect_manifest_set.set", "applyset_id")

	// kubectl refuses our parent, and we refuse kubectl's.
	out, ok := kubectl(t, dir, "apply", "--server-side", "--prune", "--applyset=secret/ours", "-n", ns, "-f", "kubectl.yaml")
	if ok || !strings.Contains(out, "k8sconnect") {
		t.Errorf("kubectl should refuse to take over the set's parent, naming k8sconnect; it said (ok %v):\n%s", ok, out)
	}
	if got := acctest.MustGet(t, configMaps, ns, "by-k8sconnect").GetLabels()[labelPartOf]; got != ourID {
		t.Errorf("after kubectl's refusal the set's member has part-of %q, want %q", got, ourID)
	}
	other := acctest.NewWorkdir(t)
	other.Write(setConfig(t, "set", yamlBody(configMap(ns, "another", "a")), `applyset = { name = "kubectl-made", namespace = "`+ns+`" }`))
	r := other.Plan()
	other.MustFail(r, "a set naming kubectl's parent")
	if !r.HasError("kubectl-made", "managed by kubectl") {
		t.Errorf("the set should refuse kubectl's parent, naming kubectl:\n%s", r.Output)
	}

	// Destroyed, the parent's name is free: kubectl computes the same id for it.
	if r := w.Destroy(); r.Err != nil {
		t.Fatalf("destroy: %v\n%s", r.Err, r.Output)
	}
	if out, ok := kubectl(t, dir, "apply", "--server-side", "--prune", "--applyset=secret/ours", "-n", ns, "-f", "kubectl.yaml"); !ok {
		t.Fatalf("kubectl apply --applyset=secret/ours after the set's destroy: %s", out)
	}
	if got := acctest.MustGet(t, secrets, ns, "ours").GetLabels()[labelID]; got != ourID {
		t.Errorf("kubectl's id for secret/ours is %q; the set computed %q", got, ourID)
	}
}
