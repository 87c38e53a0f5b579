# The documents of several files sorted into CRDs, cluster-scoped objects
# (namespaces) and namespaced objects, applied in that order: a custom resource
# after its CRD, and every object after its namespace.
data "k8sconnect_yaml_scoped" "operator" {
  pattern = "${path.module}/manifests/*.yaml"
}

# for_each names the data source through a local: the engines evaluate a
# for_each once per instance, and OpenTofu decodes the data source's stored
# result at each of those evaluations, a local's value once.
locals {
  operator = data.k8sconnect_yaml_scoped.operator
}

resource "k8sconnect_object" "crds" {
  for_each  = local.operator.crds
  yaml_body = each.value

  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}

resource "k8sconnect_object" "cluster_scoped" {
  for_each  = local.operator.cluster_scoped
  yaml_body = each.value

  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}

resource "k8sconnect_object" "namespaced" {
  for_each   = local.operator.namespaced
  yaml_body  = each.value
  depends_on = [k8sconnect_object.crds, k8sconnect_object.cluster_scoped]

  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}
