# Set a proxy on EKS's aws-node DaemonSet, which EKS made and manages: only
# these fields change, and destroy hands them back instead of reverting them.
resource "k8sconnect_patch" "aws_node_proxy" {
  target = {
    api_version = "apps/v1"
    kind        = "DaemonSet"
    name        = "aws-node"
    namespace   = "kube-system"
  }

  patch = <<-YAML
    spec:
      template:
        spec:
          containers:
            - name: aws-node
              env:
                - name: HTTP_PROXY
                  value: http://proxy.internal:3128
  YAML

  take_ownership = true

  cluster_connection = {
    kubeconfig_file = "~/.kube/config"
  }
}
