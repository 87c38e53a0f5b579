# A chart rendered against the cluster it is applied to, one
# k8sconnect_object per object: every plan shows what changes in each object,
# field by field. The chart's Secret (a token it generates once and reads back
# with lookup) comes apart in `sensitive`, so its value never prints.
provider "k8sconnect" {
  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}

resource "k8sconnect_object" "namespace" {
  yaml_body = jsonencode({
    apiVersion = "v1"
    kind       = "Namespace"
    metadata   = { name = "greeter" }
  })
}

data "k8sconnect_helm_template" "greeter" {
  name      = "greeter"
  namespace = "greeter"
  chart     = "${path.module}/chart"
  values = [yamlencode({
    replicas = 2
  })]
  set = [{ name = "greeting", value = "hello from terraform" }]
}

# for_each names the data source through a local: the engines evaluate a
# for_each once per instance, and OpenTofu decodes the data source's stored
# result at each of those evaluations, a local's value once.
locals {
  greeter = data.k8sconnect_helm_template.greeter
}

resource "k8sconnect_object" "crds" {
  for_each  = local.greeter.crds
  yaml_body = each.value
}

resource "k8sconnect_object" "cluster_scoped" {
  for_each   = local.greeter.cluster_scoped
  yaml_body  = each.value
  depends_on = [k8sconnect_object.crds]
}

resource "k8sconnect_object" "namespaced" {
  for_each   = local.greeter.namespaced
  yaml_body  = each.value
  depends_on = [k8sconnect_object.namespace, k8sconnect_object.cluster_scoped]
}

resource "k8sconnect_object" "sensitive" {
  for_each         = toset(data.k8sconnect_helm_template.greeter.sensitive_keys)
  yaml_body        = data.k8sconnect_helm_template.greeter.sensitive[each.key]
  sensitive_fields = lookup(data.k8sconnect_helm_template.greeter.sensitive_fields, each.key, null)
  depends_on       = [k8sconnect_object.namespace]
}
