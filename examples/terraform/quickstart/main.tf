# Quickstart: a namespace and a ConfigMap in it, applied with Server-Side Apply.
#
#   terraform init && terraform apply -var kubeconfig_path=$KUBECONFIG
#
# `make demo` runs this against the embedded local cluster.

terraform {
  required_providers {
    k8sconnect = {
      source = "k8sconnect/k8sconnect"
    }
  }
}

variable "kubeconfig_path" {
  description = "Path to the kubeconfig of the cluster to use."
  type        = string
}

variable "context" {
  description = "Kubeconfig context; null uses its current-context."
  type        = string
  default     = null
}

variable "namespace" {
  description = "Namespace to create."
  type        = string
  default     = "k8sconnect-quickstart"
}

variable "greeting" {
  description = "Value stored in the ConfigMap; change it and apply again to see an in-place update."
  type        = string
  default     = "hello"
}

# The connection lives in the provider block: provider configuration is never
# stored in state, and the kubeconfig file is read by path each time, so its
# credentials (and a rotated token in it) reach neither state nor plans.
provider "k8sconnect" {
  cluster_connection = {
    kubeconfig_file = var.kubeconfig_path
    context         = var.context
  }
}

resource "k8sconnect_object" "namespace" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: Namespace
    metadata:
      name: ${var.namespace}
  YAML
}

resource "k8sconnect_object" "greeting" {
  yaml_body = yamlencode({
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata = {
      name      = "greeting"
      namespace = k8sconnect_object.namespace.resource_ref.name
    }
    data = {
      greeting = var.greeting
    }
  })
}

output "configmap" {
  description = "Where the ConfigMap lives."
  value       = "${k8sconnect_object.greeting.resource_ref.namespace}/${k8sconnect_object.greeting.resource_ref.name}"
}
