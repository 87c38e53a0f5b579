"""Runs a migration Job and creates what needs the migrated database only once
the Job is Complete. If the Job takes longer than the Wait's timeout (config
`timeout`), `pulumi up` fails and the ConfigMap that depends on the Wait is not
created, but the Job stays as it is, still in the stack: nothing is marked for
replacement. Run `pulumi up` again (with a longer timeout, or once whatever
held the Job back is fixed) and it waits again on the same Job, then creates
the ConfigMap."""

import json
import os

import pulumi
import pulumi_k8sconnect as k8sconnect

# docs:begin wait-retry
config = pulumi.Config()
kubeconfig_path = (
    config.get("kubeconfigPath")
    or os.environ.get("KUBECONFIG")
    or os.path.expanduser("~/.kube/config")
)
with open(kubeconfig_path, encoding="utf-8") as f:
    cluster = {
        "kubeconfig": pulumi.Output.secret(f.read()),
        "context": config.get("context"),
    }
namespace = config.require("namespace")
# Annotations for the Job's pod (JSON object). The tests use it to hold the pod
# back, so that the first wait times out.
pod_annotations = config.get_object("podAnnotations") or {}

job = k8sconnect.KubernetesObject(
    "migrate",
    cluster_connection=cluster,
    yaml_body=f"""apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  namespace: {namespace}
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations: {json.dumps(pod_annotations)}
    spec:
      restartPolicy: Never
      containers: [{{name: migrate, image: busybox}}]
""",
)

migrated = k8sconnect.Wait(
    "migrated",
    resource_ref=job.resource_ref,
    # The timeout is part of wait_for: the bridge ignores customTimeouts.
    wait_for={"condition": "Complete", "timeout": config.get("timeout") or "10m"},
)

k8sconnect.KubernetesObject(
    "after-migration",
    cluster_connection=cluster,
    yaml_body=f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: after-migration
  namespace: {namespace}
data:
  done: "yes"
""",
    opts=pulumi.ResourceOptions(depends_on=[migrated]),
)
# docs:end wait-retry

pulumi.export("waited", migrated.id)
