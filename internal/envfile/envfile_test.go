package envfile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var envCases = []Var{
	{"API", "http://127.0.0.1:8080"},
	{"TEMPORAL_CODEC_KEYS", "k1:q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA="},
	{"CRAWL_CRAWLER_COMMAND", "/x/.bin/cluster fake-crawler --original-task-id {id} --brokers {brokers}"},
	{"QUOTED", `it's "odd" $HOME`},
	{"EMPTY", ""},
}

func TestEnvFileRoundTrip(t *testing.T) {
	got, err := Parse(Format("header", envCases))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(envCases) {
		t.Fatalf("got %d variables, want %d", len(got), len(envCases))
	}
	for i, want := range envCases {
		if got[i] != want {
			t.Errorf("variable %d: got %q, want %q", i, got[i], want)
		}
	}
}

// TestEnvFileIsSourceable: what `set -a; . cluster.env; set +a` gives a shell is the values as
// written, unexpanded.
func TestEnvFileIsSourceable(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	path := filepath.Join(t.TempDir(), "cluster.env")
	if err := Write(path, "header", envCases); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("env file mode: %v %v, want 0600", st.Mode(), err)
	}
	for _, v := range envCases {
		out, err := exec.Command(sh, "-c", `set -a; . "$0"; set +a; printf %s "$`+v.Key+`"`, path).Output()
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != v.Value {
			t.Errorf("%s: the shell read %q, want %q", v.Key, out, v.Value)
		}
	}
	m, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if m["QUOTED"] != envCases[3].Value {
		t.Errorf("readEnv QUOTED = %q", m["QUOTED"])
	}
}

func TestParseEnvRejectsALineWithoutEquals(t *testing.T) {
	_, err := Parse("# comment\nAPI=x\nnot a variable\n")
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("got %v, want an error naming line 3", err)
	}
}
