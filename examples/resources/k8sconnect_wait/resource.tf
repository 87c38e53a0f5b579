resource "k8sconnect_object" "web" {
  yaml_body = file("${path.module}/deployment.yaml")

  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}

# Blocks whatever depends on it until the rollout is done. A timeout fails the
# run, but the Deployment is neither tainted nor replaced: apply again to wait
# again.
resource "k8sconnect_wait" "web" {
  resource_ref = k8sconnect_object.web.resource_ref
  wait_for = {
    rollout = true
    timeout = "5m"
  }
}
