package acctest

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
)

// AnnotationCreatePending is the marker a crash-safe create's first step
// writes and its second step removes (docs/adr/0001-crash-safe-create.md).
const AnnotationCreatePending = "k8sconnect.io/create-pending"

// AnnotationOwnedBy carries the id of the k8sconnect resource that owns an
// object. Tests spell the contract out rather than import the provider's
// constant, so a rename in the provider is caught here.
const AnnotationOwnedBy = "k8sconnect.io/owned-by"

// CrashObject is the one ConfigMap a crash test creates through
// k8sconnect_object in a namespace of its own, and the cluster-side checks
// the crash tests of every engine make on it.
type CrashObject struct {
	T         testing.TB
	Namespace string
	Name      string
}

// ApplyMarked matches the first step of a create: the apply that carries the
// pending marker.
func (c CrashObject) ApplyMarked() faultproxy.Match {
	m := faultproxy.ApplyOf("configmaps", c.Name)
	m.Body = AnnotationCreatePending
	return m
}

// ApplyUnmarked matches the applies without the marker: a create's second
// step, or an update.
func (c CrashObject) ApplyUnmarked() faultproxy.Match {
	m := faultproxy.ApplyOf("configmaps", c.Name)
	m.NoBody = AnnotationCreatePending
	return m
}

// Objects are the namespace's ConfigMaps, except the one the cluster puts in
// every namespace.
func (c CrashObject) Objects() map[string]metav1.ObjectMeta {
	c.T.Helper()
	list, err := Clientset(c.T).CoreV1().ConfigMaps(c.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		c.T.Fatal(err)
	}
	out := map[string]metav1.ObjectMeta{}
	for _, cm := range list.Items {
		if cm.Name != "kube-root-ca.crt" {
			out[cm.Name] = cm.ObjectMeta
		}
	}
	return out
}

// ExpectOrphan checks what a create cut short after its first step leaves:
// the object alone in the namespace, carrying the pending marker. It returns
// the object's UID.
func (c CrashObject) ExpectOrphan() string {
	c.T.Helper()
	objs := c.Objects()
	m, ok := objs[c.Name]
	if !ok || len(objs) != 1 {
		c.T.Fatalf("want only ConfigMap %s in %s after the failed run, have %v", c.Name, c.Namespace, names(objs))
	}
	if m.Annotations[AnnotationCreatePending] == "" || m.Annotations[AnnotationCreatePending] != m.Annotations[AnnotationOwnedBy] {
		c.T.Fatalf("ConfigMap %s/%s: want the pending marker equal to the owner id, have annotations %v", c.Namespace, c.Name, m.Annotations)
	}
	return string(m.UID)
}

// ExpectNoObjects checks that a failed run left nothing in the namespace.
func (c CrashObject) ExpectNoObjects() {
	c.T.Helper()
	if objs := c.Objects(); len(objs) != 0 {
		c.T.Fatalf("want no ConfigMap in %s, have %v", c.Namespace, names(objs))
	}
}

// ExpectConverged checks the cluster's side of a recovering run: exactly one
// object, with uid (when given), the greeting, our owner id and no marker.
// It returns the object's UID.
func (c CrashObject) ExpectConverged(uid, greeting string) string {
	c.T.Helper()
	objs := c.Objects()
	m, ok := objs[c.Name]
	if !ok || len(objs) != 1 {
		c.T.Fatalf("want exactly ConfigMap %s in %s, have %v", c.Name, c.Namespace, names(objs))
	}
	if uid != "" && string(m.UID) != uid {
		c.T.Fatalf("ConfigMap %s/%s was replaced: UID %s, was %s", c.Namespace, c.Name, m.UID, uid)
	}
	if _, pending := m.Annotations[AnnotationCreatePending]; pending || m.Annotations[AnnotationOwnedBy] == "" {
		c.T.Fatalf("ConfigMap %s/%s: want the owner id and no pending marker, have annotations %v", c.Namespace, c.Name, m.Annotations)
	}
	cm, err := Clientset(c.T).CoreV1().ConfigMaps(c.Namespace).Get(context.Background(), c.Name, metav1.GetOptions{})
	if err != nil {
		c.T.Fatal(err)
	}
	if cm.Data["greeting"] != greeting {
		c.T.Fatalf("ConfigMap %s/%s data.greeting = %q, want %q", c.Namespace, c.Name, cm.Data["greeting"], greeting)
	}
	return string(m.UID)
}

// OwnerID is the resource id the object carries in its owned-by annotation.
func (c CrashObject) OwnerID() string {
	c.T.Helper()
	return c.Objects()[c.Name].Annotations[AnnotationOwnedBy]
}

// ExpectActed checks that a fault acted at least once: a crash test whose
// fault never fired proves nothing.
func ExpectActed(t testing.TB, f *faultproxy.Fault) {
	t.Helper()
	if f.Hits() == 0 {
		t.Fatalf("rule %q never acted: the test proved nothing", f.Rule())
	}
	t.Logf("rule %q acted %d time(s)", f.Rule(), f.Hits())
}

func names[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// StartOwned starts cmd in a process group of its own, its output collected
// in the returned buffer; the test kills the group at its end if cmd is still
// running. KillWhileHeld kills such a run mid-request.
func StartOwned(t testing.TB, cmd *exec.Cmd) *bytes.Buffer {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	faultproxy.OwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_, _ = faultproxy.KillTree(cmd.Process.Pid)
		}
	})
	return &out
}

// KillWhileHeld waits until f (a Pause rule) holds a response of cmd, a run
// started in a process group of its own (StartOwned),
// and kills it with its plugins (SIGKILL), as a CI runner's timeout would. It
// checks that each of commands (the engine, its plugins) was among the killed
// and that the run ended with a non-zero exit, then releases the held response
// and waits until the killed processes are gone. out is the run's output, for
// messages.
func KillWhileHeld(t testing.TB, cmd *exec.Cmd, out *bytes.Buffer, f *faultproxy.Fault, commands ...string) {
	t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	held := make(chan error, 1)
	go func() { held <- f.WaitHeld(ctx, 1) }()
	select {
	case err := <-held:
		if err != nil {
			_, _ = faultproxy.KillTree(cmd.Process.Pid)
			t.Fatalf("%v\n%s", err, out)
		}
	case err := <-exited:
		t.Fatalf("%s ended (%v) before its request was held\n%s", filepath.Base(cmd.Path), err, out)
	}
	killed, err := faultproxy.KillTree(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed %s and its plugins: %v", filepath.Base(cmd.Path), killed)
	for _, want := range commands {
		found := false
		for _, p := range killed {
			found = found || p.Command == want
		}
		if !found {
			t.Errorf("killed %v: %s is not among them", killed, want)
		}
	}
	err = <-exited
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("the killed run ended with %v, want a non-zero exit", err)
	}
	f.Release()
	faultproxy.WaitDead(t, killed)
}
