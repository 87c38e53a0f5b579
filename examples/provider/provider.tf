terraform {
  required_providers {
    k8sconnect = {
      source = "k8sconnect/k8sconnect"
    }
  }
}

# The provider block takes no required settings: each resource names its own
# cluster_connection, so one configuration can manage several clusters,
# including one it creates in the same run.
provider "k8sconnect" {}
