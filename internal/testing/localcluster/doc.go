// Package localcluster runs a real Kubernetes control plane on loopback for the
// project's tests and for development: etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler, with kwok playing the kubelet of
// one fake node. Each component is a child process built by package toolchain
// (`make tools`); its output goes to <Dir>/logs/<component>.log.
//
// # What the cluster offers
//
//   - TLS on 127.0.0.1 with a CA generated at start (Cluster.CAPEM), which
//     clients must verify; client certificates are signed by a second CA.
//   - Authorization Node,RBAC. Two admin users, both in system:masters: a
//     static-token user k8sconnect-admin (Cluster.Token) and a client
//     certificate user CN=k8sconnect-cert-admin (Cluster.ClientCertPEM and
//     ClientKeyPEM). The controller manager, the scheduler and kwok use their
//     own certificate users (system:kube-controller-manager,
//     system:kube-scheduler, and k8sconnect-kwok in system:masters).
//   - A kubeconfig (Cluster.KubeconfigPath, certificates inline) with context
//     "k8sconnect-local" (token user; the current context) and
//     "k8sconnect-local-cert" (certificate user).
//   - Every controller but nodeipam and nodelifecycle, each with its own
//     service account token (ServiceAccounts, namespace deletion, garbage
//     collection, Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs...).
//   - One node, NodeName, with no taints and room for thousands of pods; kwok
//     keeps it Ready and plays the pods bound to it with this package's own
//     stages (stages/*.yaml): a pod becomes Running and Ready with an IP at
//     once; a pod with restartPolicy Never or OnFailure (Job pods) then
//     succeeds a second later; a deleted pod finishes its graceful deletion at
//     once. There are no containers: images are never pulled, probes never run,
//     logs and exec are not available.
//   - Free ports picked at each start, so several clusters run side by side
//     (go test runs test binaries in parallel, each with its own cluster).
//
// # Holding pods back
//
// A pod annotated HoldAnnotation ("k8sconnect.test/hold") with the value "true"
// stays Pending: never Ready, never completed. Put the annotation in a pod
// template to keep a Deployment, StatefulSet, DaemonSet or Job from becoming
// ready or complete, e.g. to test a wait that must time out. Release it with
// either:
//
//   - the pods themselves: remove the annotation from each pod (kubectl
//     annotate pod NAME k8sconnect.test/hold-), or set it to anything but
//     "true". The pods then start at once (and Job pods complete). This works
//     for every workload and is the only way for a Job, whose template cannot
//     change. Deleting a held pod does not release anything: its controller
//     recreates it from the same template, held again.
//   - the template: remove the annotation from the pod template of a
//     Deployment, StatefulSet or DaemonSet. That is a new revision; its pods
//     are not held and the rollout completes (held pods are deleted by the
//     rollout like any unready pod; deletion is never held back). For a
//     StatefulSet with the default OrderedReady policy, also delete the held
//     pod: the StatefulSet controller waits for it before rolling.
//
// A pod with restartPolicy Never annotated FailAnnotation
// ("k8sconnect.test/fail") = "true" fails (exit code 1) instead of succeeding,
// to drive a Job to failure.
//
// # Tests
//
// Test packages call Main from TestMain and Shared from their tests:
//
//	func TestMain(m *testing.M) { localcluster.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		c := localcluster.Shared(t)
//		...
//	}
//
// The cluster starts on the first call to Shared (a package whose selected
// tests never call it starts nothing) and stops when the tests end; on failure
// the component logs are kept and their path printed. With
// K8SCONNECT_KUBECONFIG set to the kubeconfig of a running cluster (the one
// `make cluster-up` prints), Shared uses that cluster instead and Main leaves it
// running. Tests share the cluster: give every object a unique name or
// namespace.
//
// A test binary's cluster lives in a temporary directory (os.TempDir()/
// k8sconnect-cluster-*). On Linux the components die with the test binary
// even if it is killed; the directory of a killed run is removed by a later
// Start once no component of it runs (after ten minutes; kept logs after a day).
//
// # Source layout
//
// localcluster.go has the Cluster type, the public API (Start, Load, Check,
// Stop) and start, which lists the steps of a start in order. Each
// component's steps live in its own file: etcd.go, apiserver.go,
// controllers.go (kube-controller-manager and kube-scheduler) and kwok.go
// (with the node it plays and its stages). certs.go makes the credentials
// and the kubeconfigs, process.go runs the component processes or finds them
// through their pid files, and testing.go has Main and Shared.
//
// # Environment
//
//   - K8SCONNECT_KUBECONFIG: kubeconfig of a running cluster for Main and
//     Shared to use instead of starting one.
//   - K8SCONNECT_CLUSTER_DIR: state directory of the detached dev cluster
//     (DevDir); default os.UserCacheDir()/k8sconnect/cluster.
//   - K8SCONNECT_TOOLS_DIR: where package toolchain keeps the binaries.
package localcluster
