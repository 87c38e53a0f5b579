# A chart installed as a Helm release, every object of it planned by a
# server-side dry run: the plan shows, object by object and field by field,
# what the apply will change. `helm list -n greeter` shows the release, and
# each apply writes a revision that `helm history` lists. ./chart is a chart
# directory (here, the greeter chart of k8sconnect_helm_template's example);
# a repository or an oci:// registry works the same way.
provider "k8sconnect" {
  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}

resource "k8sconnect_helm_release" "greeter" {
  name             = "greeter"
  namespace        = "greeter"
  create_namespace = true
  chart            = "${path.module}/chart"
  values = [yamlencode({
    replicas = 2
  })]
  set     = [{ name = "greeting", value = "hello from a release" }]
  timeout = "2m"
}

output "revision" {
  value = k8sconnect_helm_release.greeter.revision
}
