package acctest

import (
	"fmt"
	"strings"
)

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

// CRD is a namespaced CustomResourceDefinition of kind in group, served and
// stored as v1 (plural: the lower-case kind plus "s"), whose spec has the given
// OpenAPI properties, written as they stand under `properties:` with no
// indentation. In a configuration, give it as yaml_body = %q.
func CRD(group, kind, specProperties string) string {
	lower := strings.ToLower(kind)
	var props strings.Builder
	for _, line := range strings.Split(strings.TrimRight(specProperties, "\n"), "\n") {
		props.WriteString("                " + line + "\n")
	}
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[2]ss.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: %[2]ss, singular: %[2]s, kind: %[3]s}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
%[4]s`, group, lower, kind, props.String())
}
