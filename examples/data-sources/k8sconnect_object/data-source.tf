# Read an object k8sconnect does not manage, e.g. to pass a value on.
data "k8sconnect_object" "dns" {
  api_version = "v1"
  kind        = "Service"
  name        = "kube-dns"
  namespace   = "kube-system"

  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}

output "cluster_dns_ip" {
  value = data.k8sconnect_object.dns.object.spec.clusterIP
}
