# The documents of several files sorted into CRDs, cluster-scoped objects
# (namespaces) and namespaced objects, applied in that order: a custom resource
# after its CRD, and every object after its namespace.
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

resource "k8sconnect_object" "cluster_scoped" {
  for_each  = data.k8sconnect_yaml_scoped.operator.cluster_scoped
  yaml_body = each.value

  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}

resource "k8sconnect_object" "namespaced" {
  for_each   = data.k8sconnect_yaml_scoped.operator.namespaced
  yaml_body  = each.value
  depends_on = [k8sconnect_object.crds, k8sconnect_object.cluster_scoped]

  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}
