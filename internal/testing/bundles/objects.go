package bundles

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// component is one of the bundle's workloads.
type component struct {
	app, image string
	port       int
	kind       string // Deployment, StatefulSet or DaemonSet
	configMap  string // mounted at /etc/<app>, if set
	secret     string // mounted at /etc/<app>-secret, if set
}

var components = []component{
	{app: "prometheus-operator", image: "quay.io/prometheus-operator/prometheus-operator:v0.86.0", port: 8080, kind: "Deployment", configMap: "prometheus-operator-config"},
	{app: "grafana", image: "docker.io/grafana/grafana:12.2.0", port: 3000, kind: "Deployment", configMap: "grafana-datasources", secret: "grafana-admin"},
	{app: "kube-state-metrics", image: "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.17.0", port: 8080, kind: "Deployment"},
	{app: "blackbox-exporter", image: "quay.io/prometheus/blackbox-exporter:v0.27.0", port: 9115, kind: "Deployment", configMap: "blackbox-exporter-config"},
	{app: "prometheus", image: "quay.io/prometheus/prometheus:v3.7.0", port: 9090, kind: "StatefulSet", configMap: "prometheus-rules", secret: "prometheus-additional-scrape-configs"},
	{app: "alertmanager", image: "quay.io/prometheus/alertmanager:v0.28.1", port: 9093, kind: "StatefulSet", configMap: "alertmanager-templates", secret: "alertmanager-config"},
	{app: "node-exporter", image: "quay.io/prometheus/node-exporter:v1.9.1", port: 9100, kind: "DaemonSet"},
}

// objects are the bundle's objects other than the CRDs and their custom
// resources, in Helm's install order by kind (PriorityClass, a kind that order
// does not know, last), each scope as it applies.
func objects(name, logLevel string) []document {
	var docs []document
	add := func(step Step, kind, yaml string) { docs = append(docs, document{step: step, kind: kind, yaml: yaml}) }
	labels := func(app string) string {
		return fmt.Sprintf("    app.kubernetes.io/name: %s\n    app.kubernetes.io/instance: %s\n    app.kubernetes.io/part-of: kube-prometheus\n", app, name)
	}
	meta := func(apiVersion, kind, objName, app string) string {
		return fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n  namespace: %s\n  labels:\n%s", apiVersion, kind, objName, name, labels(app))
	}
	clusterMeta := func(apiVersion, kind, objName, app string) string {
		return fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata:\n  name: %s-%s\n  labels:\n%s", apiVersion, kind, name, objName, labels(app))
	}

	add(ClusterScoped, "Namespace", fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels:\n%s", name,
		labels("kube-prometheus")+"    pod-security.kubernetes.io/enforce: privileged\n"))

	for _, app := range []string{"prometheus", "alertmanager", "grafana", "prometheus-operator"} {
		add(Namespaced, "NetworkPolicy", meta("networking.k8s.io/v1", "NetworkPolicy", app, app)+fmt.Sprintf(`spec:
  podSelector:
    matchLabels:
      app.kubernetes.io/name: %[1]s
  policyTypes:
  - Ingress
  - Egress
  egress:
  - {}
  ingress:
  - from:
    - podSelector:
        matchLabels:
          app.kubernetes.io/name: prometheus
    - podSelector:
        matchLabels:
          app.kubernetes.io/name: grafana
    ports:
    - port: %[2]d
      protocol: TCP
`, app, portOf(app)))
	}
	for _, app := range []string{"prometheus", "alertmanager", "grafana"} {
		add(Namespaced, "PodDisruptionBudget", meta("policy/v1", "PodDisruptionBudget", app, app)+fmt.Sprintf(`spec:
  minAvailable: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: %s
`, app))
	}
	for _, c := range components {
		add(Namespaced, "ServiceAccount", meta("v1", "ServiceAccount", c.app, c.app)+"automountServiceAccountToken: true\n")
	}

	secret := func(objName, app string, data map[string]string, keys ...string) string {
		var b strings.Builder
		b.WriteString(meta("v1", "Secret", objName, app) + "type: Opaque\ndata:\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s: %s\n", k, base64.StdEncoding.EncodeToString([]byte(data[k])))
		}
		return b.String()
	}
	add(Namespaced, "Secret", secret("alertmanager-config", "alertmanager", map[string]string{
		"alertmanager.yaml": "route:\n  receiver: default\n  group_by: [alertname, namespace]\n  group_wait: 30s\n  repeat_interval: 12h\nreceivers:\n- name: default\n",
	}, "alertmanager.yaml"))
	add(Namespaced, "Secret", secret("grafana-admin", "grafana", map[string]string{
		"admin-user": "admin", "admin-password": "bench-only-not-a-secret",
	}, "admin-user", "admin-password"))
	add(Namespaced, "Secret", secret("prometheus-additional-scrape-configs", "prometheus", map[string]string{
		"additional.yaml": "- job_name: blackbox\n  metrics_path: /probe\n  static_configs:\n  - targets: [blackbox-exporter:9115]\n",
	}, "additional.yaml"))

	add(Namespaced, "ConfigMap", meta("v1", "ConfigMap", "prometheus-operator-config", "prometheus-operator")+fmt.Sprintf(`data:
  log.level: %s
  log.format: logfmt
  kubelet-service: kube-system/kubelet
  config-reloader-cpu-limit: 10m
  config-reloader-memory-limit: 50Mi
`, logLevel))
	add(Namespaced, "ConfigMap", meta("v1", "ConfigMap", "grafana-dashboards", "grafana")+"data:\n  overview.json: |-\n"+indent(dashboard(name), 4))
	add(Namespaced, "ConfigMap", meta("v1", "ConfigMap", "grafana-datasources", "grafana")+`data:
  datasources.yaml: |-
    apiVersion: 1
    datasources:
    - name: prometheus
      type: prometheus
      access: proxy
      url: http://prometheus:9090
      isDefault: true
    - name: alertmanager
      type: alertmanager
      url: http://alertmanager:9093
`)
	add(Namespaced, "ConfigMap", meta("v1", "ConfigMap", "alertmanager-templates", "alertmanager")+`data:
  default.tmpl: |-
    {{ define "slack.default.title" }}[{{ .Status | toUpper }}] {{ .CommonLabels.alertname }}{{ end }}
    {{ define "slack.default.text" }}{{ range .Alerts }}{{ .Annotations.description }}
    {{ end }}{{ end }}
`)
	add(Namespaced, "ConfigMap", meta("v1", "ConfigMap", "blackbox-exporter-config", "blackbox-exporter")+`data:
  config.yml: |-
    modules:
      http_2xx:
        prober: http
        timeout: 5s
        http:
          valid_status_codes: [200, 204]
          preferred_ip_protocol: ip4
      tcp_connect:
        prober: tcp
        timeout: 5s
`)
	add(Namespaced, "ConfigMap", meta("v1", "ConfigMap", "prometheus-rules", "prometheus")+`data:
  recording.yaml: |-
    groups:
    - name: node.rules
      rules:
      - record: instance:node_cpu_utilisation:rate5m
        expr: 1 - avg without (cpu) (sum without (mode) (rate(node_cpu_seconds_total{mode=~"idle|iowait|steal"}[5m])))
      - record: instance:node_memory_utilisation:ratio
        expr: 1 - (node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes)
`)

	rules := map[string]string{
		"prometheus-operator": fmt.Sprintf(`- apiGroups: [%s]
  resources: ["*"]
  verbs: ["*"]
- apiGroups: [apps]
  resources: [statefulsets]
  verbs: ["*"]
- apiGroups: [""]
  resources: [configmaps, secrets, services, endpoints, pods]
  verbs: [get, list, watch, create, update, delete]
- apiGroups: [""]
  resources: [namespaces]
  verbs: [get, list, watch]
`, Group(name)),
		"prometheus": `- apiGroups: [""]
  resources: [nodes, nodes/metrics, services, endpoints, pods]
  verbs: [get, list, watch]
- apiGroups: [networking.k8s.io]
  resources: [ingresses]
  verbs: [get, list, watch]
- nonResourceURLs: [/metrics, /metrics/slis]
  verbs: [get]
`,
		"kube-state-metrics": `- apiGroups: ["", apps, batch, policy, networking.k8s.io, autoscaling]
  resources: [configmaps, secrets, nodes, pods, services, namespaces, deployments, statefulsets, daemonsets, jobs, cronjobs, poddisruptionbudgets, ingresses, horizontalpodautoscalers]
  verbs: [list, watch]
`,
		"node-exporter": `- apiGroups: [authentication.k8s.io]
  resources: [tokenreviews]
  verbs: [create]
- apiGroups: [authorization.k8s.io]
  resources: [subjectaccessreviews]
  verbs: [create]
`,
	}
	for _, app := range []string{"prometheus-operator", "prometheus", "kube-state-metrics", "node-exporter"} {
		add(ClusterScoped, "ClusterRole", clusterMeta("rbac.authorization.k8s.io/v1", "ClusterRole", app, app)+"rules:\n"+rules[app])
	}
	for _, app := range []string{"prometheus-operator", "prometheus", "kube-state-metrics", "node-exporter"} {
		add(ClusterScoped, "ClusterRoleBinding", clusterMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", app, app)+fmt.Sprintf(`roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: %[1]s-%[2]s
subjects:
- kind: ServiceAccount
  name: %[2]s
  namespace: %[1]s
`, name, app))
	}
	add(Namespaced, "Role", meta("rbac.authorization.k8s.io/v1", "Role", "prometheus-operator-leader-election", "prometheus-operator")+`rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch]
`)
	add(Namespaced, "Role", meta("rbac.authorization.k8s.io/v1", "Role", "prometheus-config", "prometheus")+`rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get]
`)
	for _, rb := range [][2]string{{"prometheus-operator-leader-election", "prometheus-operator"}, {"prometheus-config", "prometheus"}} {
		add(Namespaced, "RoleBinding", meta("rbac.authorization.k8s.io/v1", "RoleBinding", rb[0], rb[1])+fmt.Sprintf(`roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: %s
subjects:
- kind: ServiceAccount
  name: %s
  namespace: %s
`, rb[0], rb[1], name))
	}

	for _, app := range []string{"prometheus-operator", "prometheus", "alertmanager", "grafana", "kube-state-metrics", "node-exporter"} {
		clusterIP := ""
		if app == "node-exporter" {
			clusterIP = "  clusterIP: None\n"
		}
		add(Namespaced, "Service", meta("v1", "Service", app, app)+fmt.Sprintf(`spec:
%[3]s  selector:
    app.kubernetes.io/name: %[1]s
  ports:
  - name: web
    port: %[2]d
    targetPort: web
    protocol: TCP
`, app, portOf(app), clusterIP))
	}
	// Helm's order: DaemonSet, Deployment, StatefulSet.
	for _, kind := range []string{"DaemonSet", "Deployment", "StatefulSet"} {
		for _, c := range components {
			if c.kind == kind {
				add(Namespaced, kind, meta("apps/v1", kind, c.app, c.app)+workloadSpec(name, c))
			}
		}
	}
	add(ClusterScoped, "IngressClass", clusterMeta("networking.k8s.io/v1", "IngressClass", "ingress", "ingress")+
		"spec:\n  controller: k8sconnect.test/bench-ingress\n")
	for _, app := range []string{"grafana", "prometheus"} {
		add(Namespaced, "Ingress", meta("networking.k8s.io/v1", "Ingress", app, app)+fmt.Sprintf(`spec:
  ingressClassName: %[1]s-ingress
  rules:
  - host: %[2]s.%[1]s.example.test
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: %[2]s
            port:
              name: web
`, name, app))
	}
	add(ClusterScoped, "PriorityClass", clusterMeta("scheduling.k8s.io/v1", "PriorityClass", "critical", "kube-prometheus")+
		"value: 1000000\nglobalDefault: false\npreemptionPolicy: Never\ndescription: The monitoring stack, scheduled before ordinary workloads.\n")
	return docs
}

func portOf(app string) int {
	for _, c := range components {
		if c.app == app {
			return c.port
		}
	}
	return 8080
}

// workloadSpec is the spec of a component's Deployment, StatefulSet or
// DaemonSet: one replica (the embedded cluster has one node), a container as
// its chart writes it, with probes, resources, a security context and its
// configuration mounted.
func workloadSpec(name string, c component) string {
	var b strings.Builder
	b.WriteString("spec:\n")
	if c.kind != "DaemonSet" {
		b.WriteString("  replicas: 1\n")
	}
	if c.kind == "StatefulSet" {
		fmt.Fprintf(&b, "  serviceName: %s\n  podManagementPolicy: Parallel\n", c.app)
	}
	fmt.Fprintf(&b, `  selector:
    matchLabels:
      app.kubernetes.io/name: %[1]s
      app.kubernetes.io/instance: %[2]s
  template:
    metadata:
      labels:
        app.kubernetes.io/name: %[1]s
        app.kubernetes.io/instance: %[2]s
      annotations:
        kubectl.kubernetes.io/default-container: %[1]s
    spec:
      serviceAccountName: %[1]s
`, c.app, name)
	if c.kind == "StatefulSet" {
		fmt.Fprintf(&b, "      priorityClassName: %s-critical\n", name)
	}
	fmt.Fprintf(&b, `      securityContext:
        runAsNonRoot: true
        runAsUser: 65534
        fsGroup: 65534
        seccompProfile:
          type: RuntimeDefault
      containers:
      - name: %[1]s
        image: %[2]s
        imagePullPolicy: IfNotPresent
        args:
        - --web.listen-address=:%[3]d
        - --log.level=info
        ports:
        - name: web
          containerPort: %[3]d
          protocol: TCP
        readinessProbe:
          httpGet:
            path: /-/ready
            port: web
          initialDelaySeconds: 5
          periodSeconds: 10
        livenessProbe:
          httpGet:
            path: /-/healthy
            port: web
          periodSeconds: 30
          failureThreshold: 6
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
          limits:
            memory: 512Mi
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities:
            drop: [ALL]
`, c.app, c.image, c.port)
	var mounts, volumes strings.Builder
	if c.configMap != "" {
		fmt.Fprintf(&mounts, "        - name: config\n          mountPath: /etc/%s\n          readOnly: true\n", c.app)
		fmt.Fprintf(&volumes, "      - name: config\n        configMap:\n          name: %s\n", c.configMap)
	}
	if c.secret != "" {
		fmt.Fprintf(&mounts, "        - name: secret\n          mountPath: /etc/%s-secret\n          readOnly: true\n", c.app)
		fmt.Fprintf(&volumes, "      - name: secret\n        secret:\n          secretName: %s\n", c.secret)
	}
	mounts.WriteString("        - name: tmp\n          mountPath: /tmp\n")
	volumes.WriteString("      - name: tmp\n        emptyDir: {}\n")
	b.WriteString("        volumeMounts:\n" + mounts.String() + "      volumes:\n" + volumes.String())
	return b.String()
}

// dashboard is a Grafana dashboard as JSON, as the dashboards ConfigMaps of
// kube-prometheus hold them: about 20 KB of panels.
func dashboard(name string) string {
	rnd := newSource("dashboard")
	var panels []string
	for i := 0; i < 24; i++ {
		panels = append(panels, fmt.Sprintf(`    {
      "id": %d,
      "type": "timeseries",
      "title": "%s",
      "description": "%s",
      "datasource": {"type": "prometheus", "uid": "prometheus"},
      "gridPos": {"h": 8, "w": 12, "x": %d, "y": %d},
      "fieldConfig": {"defaults": {"unit": "short", "min": 0}, "overrides": []},
      "options": {"legend": {"displayMode": "table", "placement": "right"}, "tooltip": {"mode": "multi"}},
      "targets": [
        {"expr": "sum by (namespace) (rate(container_cpu_usage_seconds_total{namespace=\"%s\"}[5m]))", "legendFormat": "{{namespace}}", "refId": "A"},
        {"expr": "sum by (pod) (container_memory_working_set_bytes{namespace=\"%s\"})", "legendFormat": "{{pod}}", "refId": "B"}
      ]
    }`, i+1, rnd.sentence(), rnd.paragraph(2), (i%2)*12, (i/2)*8, name, name))
	}
	return fmt.Sprintf("{\n  \"title\": \"Kubernetes / Overview\",\n  \"uid\": \"overview\",\n  \"schemaVersion\": 39,\n  \"panels\": [\n%s\n  ]\n}", strings.Join(panels, ",\n"))
}

func indent(text string, n int) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = pad(n) + l
	}
	return strings.Join(lines, "\n") + "\n"
}
