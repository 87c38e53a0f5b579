# Read an object k8sconnect does not manage, e.g. to pass a value on: here the
# in-cluster address of the API server, which every cluster has.
data "k8sconnect_object" "api" {
  api_version = "v1"
  kind        = "Service"
  name        = "kubernetes"
  namespace   = "default"

  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}

output "api_server_cluster_ip" {
  value = data.k8sconnect_object.api.object.spec.clusterIP
}
