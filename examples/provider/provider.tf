terraform {
  required_providers {
    k8sconnect = {
      source = "k8sconnect/k8sconnect"
    }
  }
}

# The default connection of every resource and data source that sets none.
# Provider configuration never reaches state, and the kubeconfig file is read
# each time the provider connects, so a rotated token in it changes no plan.
# A resource may carry its own cluster_connection instead, e.g. for a cluster
# this configuration creates (see the bootstrapping guide).
provider "k8sconnect" {
  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}
