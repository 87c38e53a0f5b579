package localcluster

import (
	"context"
	"crypto/tls"
	"net/http"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// startControllerManager starts kube-controller-manager without waiting for
// it (see waitControllers).
func (s *startup) startControllerManager(context.Context) error {
	kubeconfig := s.c.componentKubeconfig(kcmName)
	return s.run(kcmName, []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(s.ports.controllerManager),
		"--cert-dir=" + s.c.path("pki", kcmName+"-generated"),
		// No node IPAM (kwok assigns pod IPs) and no node lifecycle: nothing
		// taints or evicts the kwok node.
		"--controllers=*,-node-ipam-controller,-node-lifecycle-controller",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + s.files.saPrivate,
		"--root-ca-file=" + s.files.ca,
		"--cluster-signing-cert-file=" + s.files.clientCA,
		"--cluster-signing-key-file=" + s.files.clientCAKey,
		"--service-cluster-ip-range=" + serviceCIDR,
		"--leader-elect=false",
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--profiling=false",
	})
}

// startScheduler starts kube-scheduler without waiting for it (see
// waitControllers).
func (s *startup) startScheduler(context.Context) error {
	kubeconfig := s.c.componentKubeconfig(schedulerName)
	return s.run(schedulerName, []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(s.ports.scheduler),
		"--cert-dir=" + s.c.path("pki", schedulerName+"-generated"),
		"--leader-elect=false",
		"--profiling=false",
	})
}

// waitControllers waits until the controller manager and then the scheduler
// answer /healthz.
func (s *startup) waitControllers(ctx context.Context) error {
	health := componentHealthClient()
	if err := s.c.waitFor(ctx, "kube-controller-manager to be healthy", kcmName, func(ctx context.Context) error {
		return httpOK(ctx, health, "https://127.0.0.1:"+strconv.Itoa(s.ports.controllerManager)+"/healthz", "")
	}); err != nil {
		return err
	}
	return s.c.waitFor(ctx, "kube-scheduler to be healthy", schedulerName, func(ctx context.Context) error {
		return httpOK(ctx, health, "https://127.0.0.1:"+strconv.Itoa(s.ports.scheduler)+"/healthz", "")
	})
}

// waitDefaultServiceAccount waits until the controller manager has created
// the default ServiceAccount: until then the API server rejects pods in the
// default namespace.
func (s *startup) waitDefaultServiceAccount(ctx context.Context) error {
	return s.c.waitFor(ctx, "the default ServiceAccount", kcmName, func(ctx context.Context) error {
		_, err := s.admin.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}

// componentHealthClient reaches the /healthz of the controller manager and the
// scheduler, which serve self-signed certificates on loopback: only their
// liveness is asked, no credential is sent.
func componentHealthClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, //nolint:gosec // loopback health probe, nothing secret sent
	}}
}
