# [<context>#]<namespace>/<name> of an ApplySet parent (the Secret or ConfigMap that
# `kubectl apply --prune --applyset` names, or another configuration's set), read through
# $KUBECONFIG. The first apply takes its objects over in place (same UIDs) and prunes those
# the source no longer gives.
terraform import k8sconnect_manifest_set.app default/my-app
