# A release installed with helm (3 or 4), by <namespace>/<name>; prefix <context># to read it
# through another kubeconfig context. The first apply takes its objects over in place.
terraform import k8sconnect_helm_release.greeter greeter/greeter
