# [<context>#]<apiVersion>/<kind>/[<namespace>/]<name>, read through $KUBECONFIG.
# The first apply with the configuration's own cluster_connection takes
# ownership in place (same UID).
terraform import k8sconnect_object.web apps/v1/Deployment/web/web
