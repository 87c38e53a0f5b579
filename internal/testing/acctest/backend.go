package acctest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// KubernetesBackend is the engine's `kubernetes` backend keeping a
// directory's state in a Secret of the embedded cluster, as a team without
// other shared storage keeps it. Unlike a local state file, which the engine
// writes after every resource, a remote backend is written about every 20 s
// during an apply: what a killed apply loses.
type KubernetesBackend struct {
	t             testing.TB
	Namespace     string
	SecretSuffix  string
	kubeconfig    string
	workspaceName string
}

// NewKubernetesBackend keeps state in ns, in the Secret the engine names
// tfstate-default-<suffix>.
func NewKubernetesBackend(t testing.TB, ns, suffix string) *KubernetesBackend {
	return &KubernetesBackend{t: t, Namespace: ns, SecretSuffix: suffix,
		kubeconfig: localcluster.Shared(t).KubeconfigPath, workspaceName: "default"}
}

// Block is the terraform block's backend, to write beside the configuration.
func (b *KubernetesBackend) Block() string {
	return fmt.Sprintf(`terraform {
  backend "kubernetes" {
    secret_suffix = %q
    namespace     = %q
    config_path   = %q
  }
}
`, b.SecretSuffix, b.Namespace, b.kubeconfig)
}

// Init runs init, which a backend needs before any other command.
func (b *KubernetesBackend) Init(w *Workdir) {
	b.t.Helper()
	w.InstallFromMirror()
	if r := w.Run("init", "-input=false", "-no-color"); r.Err != nil {
		b.t.Fatalf("%s init: %v\n%s", Engine(), r.Err, r.Output)
	}
}

// Saved is how many resource instances the state saved in the cluster holds
// now (0 before the first save).
func (b *KubernetesBackend) Saved() int {
	b.t.Helper()
	s, err := Clientset(b.t).CoreV1().Secrets(b.Namespace).Get(context.Background(),
		"tfstate-"+b.workspaceName+"-"+b.SecretSuffix, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return 0
	}
	if err != nil {
		b.t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(s.Data["tfstate"]))
	if err != nil {
		b.t.Fatalf("the state Secret is not gzip: %v", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		b.t.Fatal(err)
	}
	var state struct {
		Resources []struct {
			Instances []json.RawMessage `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &state); err != nil {
		b.t.Fatalf("the saved state: %v", err)
	}
	n := 0
	for _, r := range state.Resources {
		n += len(r.Instances)
	}
	return n
}

var lockID = regexp.MustCompile(`ID:\s+([0-9a-zA-Z-]+)`)

// ForceUnlock frees the lock a killed run left, as the engine's lock error
// tells the user to: r is that error, whose lock ID is used.
func (b *KubernetesBackend) ForceUnlock(w *Workdir, r Result) {
	b.t.Helper()
	if !r.HasError("Error acquiring the state lock") {
		b.t.Fatalf("want the engine's state lock error, have:\n%s", r.Output)
	}
	var id string
	for _, d := range r.Errors() {
		if m := lockID.FindStringSubmatch(d.Detail); m != nil {
			id = m[1]
		}
	}
	if id == "" {
		b.t.Fatalf("no lock ID in the lock error:\n%s", r.Output)
	}
	if r := w.Run("force-unlock", "-force", id); r.Err != nil {
		b.t.Fatalf("%s force-unlock %s: %v\n%s", Engine(), id, r.Err, r.Output)
	}
}
