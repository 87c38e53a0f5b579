package acctest

import "fmt"

// Objects that other tools own in k8sconnect_patch's real-world scenarios;
// each engine's scenario tests create them the same way.

// AWSNodeDaemonSet is an EKS-like aws-node DaemonSet in namespace: two
// containers, and env vars of EKS's own that a patch must leave alone.
func AWSNodeDaemonSet(namespace string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: DaemonSet
metadata: {name: aws-node, namespace: %s}
spec:
  selector: {matchLabels: {k8s-app: aws-node}}
  template:
    metadata: {labels: {k8s-app: aws-node}}
    spec:
      tolerations: [{operator: Exists}]
      containers:
        - name: aws-node
          image: amazon-k8s-cni:v1.18.0
          env:
            - {name: AWS_VPC_K8S_CNI_LOGLEVEL, value: DEBUG}
            - {name: WARM_ENI_TARGET, value: "1"}
        - name: aws-eks-nodeagent
          image: aws-network-policy-agent:v1.1.0
`, namespace)
}

// HelmDeployment is a Deployment "web" as a Helm release makes it: a web
// container and a sidecar, each with its own limits.
func HelmDeployment(namespace string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %s, labels: {app.kubernetes.io/managed-by: Helm}}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx:1.27
          resources: {limits: {cpu: 500m, memory: 256Mi}}
        - name: sidecar
          image: envoy:v1.30
          resources: {limits: {cpu: 100m}}
`, namespace)
}
