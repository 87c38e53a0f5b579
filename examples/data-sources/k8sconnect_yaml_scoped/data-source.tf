# The same documents sorted into CRDs, cluster-scoped objects and namespaced
# objects, to apply them in that order.
data "k8sconnect_yaml_scoped" "operator" {
  pattern = "${path.module}/manifests/*.yaml"
}

resource "k8sconnect_object" "crds" {
  for_each  = data.k8sconnect_yaml_scoped.operator.crds
  yaml_body = each.value

  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}

resource "k8sconnect_object" "namespaced" {
  for_each   = data.k8sconnect_yaml_scoped.operator.namespaced
  yaml_body  = each.value
  depends_on = [k8sconnect_object.crds]

  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}
