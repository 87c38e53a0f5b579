resource "k8sconnect_object" "namespace" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: Namespace
    metadata:
      name: web
  YAML

  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}

# A Deployment whose replica count an autoscaler manages: spec.replicas is
# left to it, so it is neither applied nor judged as drift.
resource "k8sconnect_object" "web" {
  yaml_body = <<-YAML
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
      namespace: web
    spec:
      replicas: 2
      selector:
        matchLabels: {app: web}
      template:
        metadata:
          labels: {app: web}
        spec:
          containers:
            - name: app
              image: nginx:1.27
  YAML

  ignore_fields = ["spec.replicas"]

  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}
