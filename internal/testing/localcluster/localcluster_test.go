package localcluster_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

func TestMain(m *testing.M) { localcluster.Main(m) }

func clientset(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// namespace creates a namespace for one test; it is deleted afterwards.
func namespace(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "lc-" + strings.ToLower(t.Name()) + "-" + hex.EncodeToString(b)
	if len(name) > 63 {
		name = name[len(name)-63:]
	}
	name = strings.TrimLeft(name, "-")
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// eventually polls cond until it returns true, failing the test after timeout
// with the last state cond described.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var state string
	for {
		ok, s, err := cond(ctx)
		if err != nil {
			s = err.Error()
		}
		if ok {
			return
		}
		state = s
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %s waiting for %s; last state: %s", timeout, what, state)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func podTemplate(labels, annotations map[string]string, restart corev1.RestartPolicy) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{
			RestartPolicy: restart,
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "registry.k8s.io/pause:3.10",
			}},
		},
	}
}

func ptr[T any](v T) *T { return &v }

func deployment(name string, replicas int32, annotations map[string]string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: podTemplate(labels, annotations, corev1.RestartPolicyAlways),
		},
	}
}

func job(name string, annotations map[string]string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr(int32(0)),
			Template:     podTemplate(nil, annotations, corev1.RestartPolicyNever),
		},
	}
}

func jobCondition(ctx context.Context, cs kubernetes.Interface, ns, name string, want batchv1.JobConditionType) (bool, string, error) {
	j, err := cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, "", err
	}
	for _, c := range j.Status.Conditions {
		if c.Type == want && c.Status == corev1.ConditionTrue {
			return true, "", nil
		}
	}
	return false, fmt.Sprintf("active=%d succeeded=%d failed=%d conditions=%v", j.Status.Active, j.Status.Succeeded, j.Status.Failed, j.Status.Conditions), nil
}

func TestDeploymentRollsOutAndIsCollected(t *testing.T) {
	t.Parallel()
	cs := clientset(t, localcluster.Shared(t).RESTConfig())
	ns := namespace(t, cs)
	ctx := context.Background()
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment("web", 3, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "3 ready replicas", func(ctx context.Context) (bool, string, error) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return d.Status.ReadyReplicas == 3 && d.Status.UpdatedReplicas == 3,
			fmt.Sprintf("ready=%d updated=%d", d.Status.ReadyReplicas, d.Status.UpdatedReplicas), nil
	})
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Status.PodIP == "" || p.Spec.NodeName != localcluster.NodeName {
			t.Errorf("pod %s: podIP %q on node %q", p.Name, p.Status.PodIP, p.Spec.NodeName)
		}
	}

	// Garbage collection and graceful pod deletion: deleting the Deployment
	// takes its ReplicaSet and pods with it.
	if err := cs.AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{
		PropagationPolicy: ptr(metav1.DeletePropagationBackground),
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the ReplicaSet and pods to be collected", func(ctx context.Context) (bool, string, error) {
		rs, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		return len(rs.Items) == 0 && len(pods.Items) == 0, fmt.Sprintf("%d replicasets, %d pods", len(rs.Items), len(pods.Items)), nil
	})
}

func TestJobCompletes(t *testing.T) {
	t.Parallel()
	cs := clientset(t, localcluster.Shared(t).RESTConfig())
	ns := namespace(t, cs)
	if _, err := cs.BatchV1().Jobs(ns).Create(context.Background(), job("once", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the Job to complete", func(ctx context.Context) (bool, string, error) {
		return jobCondition(ctx, cs, ns, "once", batchv1.JobComplete)
	})
}

func TestJobFailsOnRequest(t *testing.T) {
	t.Parallel()
	cs := clientset(t, localcluster.Shared(t).RESTConfig())
	ns := namespace(t, cs)
	j := job("doomed", map[string]string{localcluster.FailAnnotation: "true"})
	if _, err := cs.BatchV1().Jobs(ns).Create(context.Background(), j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the Job to fail", func(ctx context.Context) (bool, string, error) {
		return jobCondition(ctx, cs, ns, "doomed", batchv1.JobFailed)
	})
}

func TestDaemonSetAndStatefulSetBecomeReady(t *testing.T) {
	t.Parallel()
	cs := clientset(t, localcluster.Shared(t).RESTConfig())
	ns := namespace(t, cs)
	ctx := context.Background()
	labels := map[string]string{"app": "agent"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: podTemplate(labels, nil, corev1.RestartPolicyAlways),
		},
	}
	if _, err := cs.AppsV1().DaemonSets(ns).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dbLabels := map[string]string{"app": "db"}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: dbLabels},
			Template: podTemplate(dbLabels, nil, corev1.RestartPolicyAlways),
		},
	}
	if _, err := cs.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the DaemonSet's pod to be ready", func(ctx context.Context) (bool, string, error) {
		d, err := cs.AppsV1().DaemonSets(ns).Get(ctx, "agent", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return d.Status.DesiredNumberScheduled == 1 && d.Status.NumberReady == 1,
			fmt.Sprintf("desired=%d ready=%d", d.Status.DesiredNumberScheduled, d.Status.NumberReady), nil
	})
	eventually(t, time.Minute, "the StatefulSet's 2 pods to be ready", func(ctx context.Context) (bool, string, error) {
		s, err := cs.AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return s.Status.ReadyReplicas == 2, fmt.Sprintf("ready=%d", s.Status.ReadyReplicas), nil
	})
}

// A held Deployment stays unready until its template drops the annotation.
func TestHeldDeploymentIsReleasedByItsTemplate(t *testing.T) {
	t.Parallel()
	cs := clientset(t, localcluster.Shared(t).RESTConfig())
	ns := namespace(t, cs)
	ctx := context.Background()
	d := deployment("held", 1, map[string]string{localcluster.HoldAnnotation: "true"})
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the held pod to be scheduled", func(ctx context.Context) (bool, string, error) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=held"})
		if err != nil {
			return false, "", err
		}
		return len(pods.Items) == 1 && pods.Items[0].Spec.NodeName != "", fmt.Sprintf("%d pods", len(pods.Items)), nil
	})
	time.Sleep(3 * time.Second) // more than kwok needs to start a pod
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=held"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodPending || podReady(&p) {
			t.Fatalf("held pod %s: phase %s, ready %v; want Pending and not ready", p.Name, p.Status.Phase, podReady(&p))
		}
	}

	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:null}}}}}`, localcluster.HoldAnnotation)
	if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, "held", ktypes.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the released Deployment to be ready", func(ctx context.Context) (bool, string, error) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "held", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return d.Status.ReadyReplicas == 1 && d.Status.UpdatedReplicas == 1 && d.Status.Replicas == 1,
			fmt.Sprintf("ready=%d updated=%d replicas=%d", d.Status.ReadyReplicas, d.Status.UpdatedReplicas, d.Status.Replicas), nil
	})
}

// A held Job stays incomplete until its pod drops the annotation.
func TestHeldJobIsReleasedByItsPod(t *testing.T) {
	t.Parallel()
	cs := clientset(t, localcluster.Shared(t).RESTConfig())
	ns := namespace(t, cs)
	ctx := context.Background()
	if _, err := cs.BatchV1().Jobs(ns).Create(ctx, job("held", map[string]string{localcluster.HoldAnnotation: "true"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pod string
	eventually(t, time.Minute, "the held Job's pod to be scheduled", func(ctx context.Context) (bool, string, error) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=held"})
		if err != nil {
			return false, "", err
		}
		if len(pods.Items) == 1 && pods.Items[0].Spec.NodeName != "" {
			pod = pods.Items[0].Name
			return true, "", nil
		}
		return false, fmt.Sprintf("%d pods", len(pods.Items)), nil
	})
	time.Sleep(3 * time.Second)
	if done, state, err := jobCondition(ctx, cs, ns, "held", batchv1.JobComplete); err != nil || done {
		t.Fatalf("held Job: complete=%v (%s), err %v", done, state, err)
	}
	p, err := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.Phase != corev1.PodPending || podReady(p) {
		t.Fatalf("held pod: phase %s, ready %v", p.Status.Phase, podReady(p))
	}

	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, localcluster.HoldAnnotation)
	if _, err := cs.CoreV1().Pods(ns).Patch(ctx, pod, ktypes.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the released Job to complete", func(ctx context.Context) (bool, string, error) {
		return jobCondition(ctx, cs, ns, "held", batchv1.JobComplete)
	})
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func TestNamespaceDeletionAndServiceAccounts(t *testing.T) {
	t.Parallel()
	cs := clientset(t, localcluster.Shared(t).RESTConfig())
	ns := namespace(t, cs)
	ctx := context.Background()
	eventually(t, time.Minute, "the namespace's default ServiceAccount", func(ctx context.Context) (bool, string, error) {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, "", err
	})
	if _, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("TokenRequest for the default ServiceAccount: %v", err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the namespace to be deleted", func(ctx context.Context) (bool, string, error) {
		n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return false, "", err
		}
		return false, fmt.Sprintf("phase %s, conditions %v", n.Status.Phase, n.Status.Conditions), nil
	})
}

// Both users of the kubeconfig work, each through its own context, and are
// who they claim.
func TestKubeconfigUsers(t *testing.T) {
	t.Parallel()
	c := localcluster.Shared(t)
	for ctxName, user := range map[string]string{
		localcluster.TokenContext: localcluster.TokenUser,
		localcluster.CertContext:  localcluster.CertUser,
	} {
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: c.KubeconfigPath},
			&clientcmd.ConfigOverrides{CurrentContext: ctxName}).ClientConfig()
		if err != nil {
			t.Fatalf("context %s: %v", ctxName, err)
		}
		cs := clientset(t, cfg)
		if _, err := cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Errorf("context %s: listing namespaces: %v", ctxName, err)
		}
		review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("context %s: %v", ctxName, err)
		}
		if got := review.Status.UserInfo.Username; got != user {
			t.Errorf("context %s: user %q, want %q", ctxName, got, user)
		}
	}
	raw, err := clientcmd.LoadFromFile(c.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if raw.CurrentContext != localcluster.TokenContext {
		t.Errorf("current-context %q, want %q", raw.CurrentContext, localcluster.TokenContext)
	}

	// The same users from the Cluster's fields.
	certCfg := &rest.Config{Host: c.Host, TLSClientConfig: rest.TLSClientConfig{
		CAData: c.CAPEM, CertData: c.ClientCertPEM, KeyData: c.ClientKeyPEM,
	}}
	if _, err := clientset(t, certCfg).CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Errorf("client certificate user: %v", err)
	}
	if _, err := clientset(t, c.RESTConfig()).CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Errorf("token user: %v", err)
	}
}

func TestUnknownCAIsRefused(t *testing.T) {
	t.Parallel()
	c := localcluster.Shared(t)
	// A CA from another cluster's kind: the API server's certificate must not verify.
	other, err := otherCA()
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.RESTConfig()
	cfg.CAData = other
	_, err = clientset(t, cfg).CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if err == nil {
		t.Fatal("listing namespaces with the wrong CA succeeded")
	}
	if !strings.Contains(err.Error(), "certificate signed by unknown authority") && !strings.Contains(err.Error(), "x509") {
		t.Fatalf("want a certificate verification error, got %v", err)
	}
	// And a wrong token is refused.
	cfg = c.RESTConfig()
	cfg.BearerToken = "not-the-token"
	_, err = clientset(t, cfg).CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Fatalf("wrong token: want 401 Unauthorized, got %v", err)
	}
}

func TestLoadAttaches(t *testing.T) {
	t.Parallel()
	c := localcluster.Shared(t)
	l, err := localcluster.Load(c.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if l.Host != c.Host || l.Token != c.Token || string(l.CAPEM) != string(c.CAPEM) || string(l.ClientCertPEM) != string(c.ClientCertPEM) {
		t.Fatalf("Load(%s) does not give back the cluster's connection details", c.KubeconfigPath)
	}
	if err := l.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := localcluster.Load(c.KubeconfigPath + ".missing"); err == nil || !errors.Is(err, errNotExist()) {
		t.Fatalf("Load of a missing file: %v", err)
	}
}

func errNotExist() error { return fs.ErrNotExist }

// otherCA is a fresh self-signed CA certificate, in PEM.
func otherCA() ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "some-other-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}
