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

# A Secret given by yaml_body_wo: never kept in state, never shown in a plan
# (Terraform 1.11 or OpenTofu 1.11 and later), yet every plan still checks it
# against the cluster. Raise the revision with each new value.
variable "db_password" {
  type      = string
  ephemeral = true
  default   = "example-only" # pass the real value with TF_VAR_db_password
}

resource "k8sconnect_object" "db_credentials" {
  yaml_body_wo = <<-YAML
    apiVersion: v1
    kind: Secret
    metadata:
      name: db-credentials
      namespace: web
    type: Opaque
    stringData:
      password: ${var.db_password}
  YAML
  yaml_body_wo_revision = 1

  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
  depends_on = [k8sconnect_object.namespace]
}
