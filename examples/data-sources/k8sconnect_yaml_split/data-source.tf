# One k8sconnect_object per document of a multi-document file, keyed by
# <group>/<Kind>/[<namespace>/]<name> so that reordering the file changes nothing.
data "k8sconnect_yaml_split" "app" {
  content = file("${path.module}/app.yaml")
}

# for_each names the data source through a local: the engines evaluate a
# for_each once per instance, and OpenTofu decodes the data source's stored
# result at each of those evaluations, a local's value once.
locals {
  app = data.k8sconnect_yaml_split.app
}

resource "k8sconnect_object" "app" {
  for_each  = local.app.manifests
  yaml_body = each.value

  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}
