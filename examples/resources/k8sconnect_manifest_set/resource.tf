# A directory of manifests held as one resource. Every object is planned by
# a server-side dry run, so the plan shows, object by object and field by
# field, what the apply will change; an object whose file is removed is
# deleted by the next apply. `kubectl get secret -n shop` shows the ApplySet
# parent (k8sconnect-set-<hash>), and kubectl's own ApplySet tooling sees the
# same set.
provider "k8sconnect" {
  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}

resource "k8sconnect_manifest_set" "shop" {
  path      = "${path.module}/manifests"
  recursive = true
  namespace = "shop"
  # An HPA scales the Deployment: its replica count is the HPA's to set.
  ignore_fields = {
    "apps/Deployment/shop/web" = ["spec.replicas"]
  }
}

output "objects" {
  value = keys(k8sconnect_manifest_set.shop.objects)
}
