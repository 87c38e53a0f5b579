# [<context>#]<namespace>/<name>, of a release installed with helm (3 or 4), read through
# $KUBECONFIG. The first apply takes its objects over in place (same UIDs).
terraform import k8sconnect_helm_release.greeter greeter/greeter
