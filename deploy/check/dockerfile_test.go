package check

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskloom/taskloom/internal/config"
)

// dockerfile is deploy/Dockerfile's instructions, continuation lines joined.
func dockerfile(t *testing.T) [][2]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	var cur string
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cur += line
		if strings.HasSuffix(cur, "\\") {
			cur = strings.TrimSuffix(cur, "\\") + " "
			continue
		}
		op, rest, _ := strings.Cut(cur, " ")
		out = append(out, [2]string{strings.ToUpper(op), strings.TrimSpace(rest)})
		cur = ""
	}
	return out
}

// No docker daemon runs where the tests run: the Dockerfile is checked as text. The image is one
// static binary on a distroless base, run as non-root, its entrypoint the starter binary.
func TestDockerfileBuildsAStaticNonRootImage(t *testing.T) {
	ins := dockerfile(t)
	var froms []string
	var final [][2]string // the last stage's instructions
	static := false
	for _, in := range ins {
		switch in[0] {
		case "FROM":
			froms = append(froms, in[1])
			final = nil
		case "RUN":
			if strings.Contains(in[1], "CGO_ENABLED=0") && strings.Contains(in[1], "go build") && strings.Contains(in[1], "./starter") {
				static = true
			}
		}
		final = append(final, in)
	}
	if len(froms) < 2 {
		t.Fatalf("not a multi-stage build: FROM %v", froms)
	}
	if base := froms[len(froms)-1]; !strings.HasPrefix(base, "gcr.io/distroless/static") || !strings.HasSuffix(base, ":nonroot") {
		t.Errorf("final base %q, want gcr.io/distroless/static…:nonroot", base)
	}
	if !static {
		t.Error("no RUN builds ./starter with CGO_ENABLED=0")
	}
	got := map[string]string{}
	for _, in := range final {
		got[in[0]] = in[1] // the last of each in the final stage
	}
	if u := got["USER"]; u != "nonroot" && !strings.HasPrefix(u, "nonroot:") && u != "65532" {
		t.Errorf("USER %q, want nonroot", u)
	}
	var entry []string
	if err := json.Unmarshal([]byte(got["ENTRYPOINT"]), &entry); err != nil || len(entry) != 1 || filepath.Base(entry[0]) != "starter" {
		t.Errorf("ENTRYPOINT %q, want the starter binary alone (exec form)", got["ENTRYPOINT"])
	}
	if !strings.Contains(got["COPY"], "--from=") || !strings.HasSuffix(got["COPY"], entry0(entry)) {
		t.Errorf("the final stage copies %q; want the built binary at %s", got["COPY"], entry0(entry))
	}
	var cmd []string
	if err := json.Unmarshal([]byte(got["CMD"]), &cmd); err != nil || !isStarterCommand(cmd) {
		t.Errorf("CMD %q is not a starter command", got["CMD"])
	}
	env := got["ENV"]
	if !strings.Contains(env, "TASKLOOM_ENV=prod") {
		t.Errorf("the image does not run in prod: ENV %s", env)
	}
	defaults := config.Defaults()
	for v, addr := range map[string]string{"API_ADDR": defaults.API.Addr, "WORKER_METRICS_ADDR": defaults.Worker.MetricsAddr, "CODEC_SERVER_ADDR": defaults.CodecServer.Addr} {
		port := defaultPort(t, addr)
		if !strings.Contains(env, v+"=0.0.0.0:"+port) {
			t.Errorf("ENV does not set %s=0.0.0.0:%s (the configuration's port on every interface)", v, port)
		}
		if !strings.Contains(" "+got["EXPOSE"]+" ", " "+port+" ") {
			t.Errorf("EXPOSE %q lacks %s", got["EXPOSE"], port)
		}
	}
}

func entry0(entry []string) string {
	if len(entry) == 0 {
		return "<none>"
	}
	return entry[0]
}
