# One k8sconnect_object per document of a multi-document file, keyed by
# <group>/<Kind>/[<namespace>/]<name> so that reordering the file changes nothing.
data "k8sconnect_yaml_split" "app" {
  content = file("${path.module}/app.yaml")
}

resource "k8sconnect_object" "app" {
  for_each  = data.k8sconnect_yaml_split.app.manifests
  yaml_body = each.value

  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}
