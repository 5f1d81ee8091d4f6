{{- define "taskloom.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "taskloom.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* selectorLabels takes (list $ "component"). */}}
{{- define "taskloom.selectorLabels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ $root.Chart.Name }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "taskloom.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* env is every container's configuration: plain values, then secrets by reference only. */}}
{{- define "taskloom.env" -}}
{{- range $name, $value := .Values.config }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- range $name, $key := .Values.secrets.required }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $.Values.secrets.name }}
      key: {{ $key }}
{{- end }}
{{- range $name, $key := .Values.secrets.optional }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $.Values.secrets.name }}
      key: {{ $key }}
      optional: true
{{- end }}
{{- with .Values.temporalTLS.secretName }}
- name: TEMPORAL_TLS_CERT
  value: {{ $.Values.temporalTLS.mountPath }}/tls.crt
- name: TEMPORAL_TLS_KEY
  value: {{ $.Values.temporalTLS.mountPath }}/tls.key
- name: TEMPORAL_TLS_CA
  value: {{ $.Values.temporalTLS.mountPath }}/ca.crt
{{- end }}
{{- end -}}

{{- define "taskloom.tlsVolumeMounts" -}}
{{- with .Values.temporalTLS.secretName }}
- name: temporal-tls
  mountPath: {{ $.Values.temporalTLS.mountPath }}
  readOnly: true
{{- end }}
{{- end -}}

{{- define "taskloom.tlsVolumes" -}}
{{- with .Values.temporalTLS.secretName }}
- name: temporal-tls
  secret:
    secretName: {{ . }}
{{- end }}
{{- end -}}

{{/* podExtras: scheduling settings shared by every pod. */}}
{{- define "taskloom.podExtras" -}}
automountServiceAccountToken: false
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
