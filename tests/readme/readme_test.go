// Package readme_test runs the docs: README.md and every page of docs/, in reader order, one
// after another against one dev stack as `make dev` starts it. Each page runs in a bash session of
// its own — every ```sh block of the page, in order and as written — so a page's blocks need only
// what the page itself sets. The binaries are where the docs say they are (./.bin/starter,
// ./.bin/temporal). A block that fails fails the test with its page and line.
//
// How it runs: the test builds ./.bin/starter (as `make starter` does) and the dev binary, makes a
// sandbox directory that looks like the repository (a symlink to every top-level entry but .data,
// so the dev stack's .data is the sandbox's own), and runs the dev binary there with no
// configuration, exactly as `make dev` does. Where the machine allows unprivileged namespaces the
// stack and the commands run in a network namespace of their own, so `make dev`'s fixed ports
// (8080, 7233, …) never meet a developer's running stack; elsewhere the test needs those ports
// free and is skipped when they are not. curl is run with --fail-with-body, so an HTTP error
// status fails the block.
package readme_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/testenv"
)

// The child is this test binary run again inside the namespace; these variables carry its work.
const (
	childEnv   = "README_TEST_CHILD"
	envSandbox = "README_TEST_SANDBOX"
	envDevBin  = "README_TEST_DEV_BIN"
	envScripts = "README_TEST_SCRIPTS" // a file of "page<TAB>script" lines, in reader order
	envPage    = "README_TEST_PAGE"
	envPrelude = "README_TEST_PRELUDE"
	envShim    = "README_TEST_SHIM"
	envFailed  = "README_TEST_FAILED_LINE"
	envDevLog  = "README_TEST_DEV_LOG"
	envNetNS   = "README_TEST_NETNS"
)

// devPorts are the fixed loopback ports of `make dev` (API, Temporal gRPC and Web UI, worker
// metrics, FerretDB, miniredis, kfake, Bitable emulator, summary receiver).
var devPorts = []int{8080, 7233, 8233, 9464, 27017, 6380, 9092, 18090, 18091}

const (
	devAPI       = "http://127.0.0.1:8080"
	stackTimeout = 5 * time.Minute  // the dev stack up (the Temporal dev server's first start)
	runTimeout   = 18 * time.Minute // every block of every page
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(child())
	}
	os.Exit(m.Run())
}

// readerOrder is the order a reader follows the docs: README, then the subsystems' pages, then
// operations. Pages of docs/ not named here run after these, by name.
var readerOrder = []string{
	"README.md", "docs/api.md", "docs/pipelines.md", "docs/entry.md", "docs/taskecho.md",
	"docs/webhook.md", "docs/crawl.md", "docs/operations.md",
}

// page is one Markdown file of the docs and its code blocks.
type page struct {
	name   string // relative to the repository, e.g. docs/entry.md
	text   string
	blocks []block
}

func TestDocsCommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the docs test starts the whole dev stack")
	}
	root := testenv.RepoRoot()
	pages := readPages(t, root)
	var violations []string
	for _, p := range pages {
		violations = append(violations, ruleViolations(p.name, p.blocks)...)
	}
	if len(violations) > 0 {
		t.Fatalf("doc commands that cannot run as written:\n%s", strings.Join(violations, "\n"))
	}
	temporalCLI := filepath.Join(root, ".bin", "temporal")
	if _, err := os.Stat(temporalCLI); err != nil {
		t.Fatalf("%s is missing: run `make tools` (make test does)", temporalCLI)
	}

	tmp := t.TempDir()
	devBin := filepath.Join(tmp, "taskloom-dev")
	build(t, root, filepath.Join(root, ".bin", "starter"), "./starter") // what `make starter` does
	build(t, root, devBin, "./starter/dev")
	sandbox := makeSandbox(t, root, filepath.Join(tmp, "repo"))
	shim := makeCurlShim(t, filepath.Join(tmp, "shim"))
	scripts, prelude, failed := filepath.Join(tmp, "scripts"), filepath.Join(tmp, "prelude.sh"), filepath.Join(tmp, "failed-line")
	var manifest strings.Builder
	for i, p := range pages {
		path := filepath.Join(tmp, fmt.Sprintf("page-%02d.sh", i))
		writeFile(t, path, script(p.text, p.blocks))
		fmt.Fprintf(&manifest, "%s\t%s\n", p.name, path)
	}
	writeFile(t, scripts, manifest.String())
	writeFile(t, prelude, preludeScript)
	devLog := filepath.Join(tmp, "dev.log")

	netns := namespacesWork()
	if !netns {
		if busy := busyPorts(); len(busy) > 0 {
			t.Skipf("no network namespace on this machine and make dev's ports %v are in use (a running make dev?): stop it to run the docs test", busy)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{self, "-test.run=^$"}
	if netns {
		args = append([]string{"unshare", "--map-root-user", "--net", "--pid", "--fork", "--kill-child"}, args...)
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), childEnv+"=1", envSandbox+"="+sandbox, envDevBin+"="+devBin, envScripts+"="+scripts,
		envPrelude+"="+prelude, envShim+"="+shim, envFailed+"="+failed, envDevLog+"="+devLog, envNetNS+"="+strconv.FormatBool(netns))
	var out bytes.Buffer // not an *os.File: a killed child leaves nothing holding go test's output
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	t.Logf("doc commands ran in %s (network namespace: %t)", time.Since(start).Round(time.Second), netns)
	if err == nil {
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, ">>> ") {
				t.Log(l) // where each block started, and when
			}
		}
		return
	}
	msg := fmt.Sprintf("docs test failed: %v", err)
	if b, rerr := os.ReadFile(failed); rerr == nil {
		name, line, _ := strings.Cut(strings.TrimSpace(string(b)), ":")
		n, cerr := strconv.Atoi(line)
		for _, p := range pages {
			if lines := strings.Split(p.text, "\n"); p.name == name && cerr == nil && n >= 1 && n <= len(lines) {
				msg = fmt.Sprintf("%s:%d does not run as written: %s\n(%v)", name, n, strings.TrimSpace(lines[n-1]), err)
			}
		}
	}
	t.Fatalf("%s\n--- output (last 80 lines) ---\n%s\n--- dev stack log (last 30 lines) ---\n%s", msg, tail(out.String(), 80), tailFile(devLog, 30))
}

// preludeScript is read by bash before a page's script (BASH_ENV): stop at the first failing
// command, an unset variable or a failing pipe, and record the page and line it failed on.
const preludeScript = `set -eEuo pipefail
__block() { printf '\n>>> %s:%s (%s)\n' "$` + envPage + `" "$1" "$(date +%T)"; }
__failed() {
  trap - ERR
  echo "$` + envPage + `:$2" > "$` + envFailed + `"
  printf '%s:%s: exit status %s\n' "$` + envPage + `" "$2" "$1" >&2
  exit "$1"
}
trap '__failed $? $LINENO' ERR
`

// child runs inside the namespace: loopback up, the dev stack started as `make dev` would, each
// page's script in turn until one fails, the stack stopped. Its exit status is the failed
// script's, or 0.
func child() int {
	if os.Getenv(envNetNS) == "true" {
		if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
			fmt.Printf("bring loopback up: %v: %s\n", err, out)
			return 2
		}
	}
	sandbox := os.Getenv(envSandbox)
	logf, err := os.Create(os.Getenv(envDevLog))
	if err != nil {
		fmt.Println(err)
		return 2
	}
	defer logf.Close()
	dev := exec.Command(os.Getenv(envDevBin))
	dev.Dir, dev.Env, dev.Stdout, dev.Stderr = sandbox, cleanEnv(), logf, logf
	dev.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := dev.Start(); err != nil {
		fmt.Printf("start the dev stack: %v\n", err)
		return 2
	}
	exited := make(chan error, 1)
	go func() { exited <- dev.Wait() }()
	defer stopDev(dev, exited)
	if err := waitReady(sandbox, exited); err != nil {
		fmt.Printf("dev stack: %v\n", err)
		return 2
	}
	manifest, err := os.ReadFile(os.Getenv(envScripts))
	if err != nil {
		fmt.Println(err)
		return 2
	}
	for _, line := range strings.Split(strings.TrimSpace(string(manifest)), "\n") {
		name, path, _ := strings.Cut(line, "\t")
		if code := runPage(sandbox, name, path); code != 0 {
			return code
		}
	}
	return 0
}

// runPage runs one page's script in a fresh bash, as a reader who opens only that page would.
func runPage(sandbox, name, path string) int {
	sh := exec.Command("bash", "--noprofile", "--norc", path)
	sh.Dir, sh.Stdout, sh.Stderr = sandbox, os.Stdout, os.Stdout
	sh.Env = append(cleanEnv(), "BASH_ENV="+os.Getenv(envPrelude), envFailed+"="+os.Getenv(envFailed), envPage+"="+name)
	for i, kv := range sh.Env {
		if strings.HasPrefix(kv, "PATH=") {
			sh.Env[i] = "PATH=" + os.Getenv(envShim) + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	if err := sh.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Println(err)
		return 2
	}
	return 0
}

// readPages reads the docs in reader order and parses their code blocks.
func readPages(t *testing.T, root string) []page {
	t.Helper()
	names := append([]string(nil), readerOrder...)
	all, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(all)
	for _, f := range all {
		if name := "docs/" + filepath.Base(f); !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	var pages []page
	for _, name := range names {
		raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Fatalf("%s (in the docs' reader order): %v", name, err)
		}
		blocks, err := parseBlocks(name, string(raw))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, page{name: name, text: string(raw), blocks: blocks})
	}
	return pages
}

// waitReady waits until the API answers /readyz with 200 and the stack has written .data/dev.env.
func waitReady(sandbox string, exited <-chan error) error {
	deadline := time.Now().Add(stackTimeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("exited before it was ready: %v", err)
		case <-time.After(500 * time.Millisecond):
		}
		if _, err := os.Stat(filepath.Join(sandbox, ".data", "dev.env")); err != nil {
			continue
		}
		resp, err := http.Get(devAPI + "/readyz")
		if err != nil {
			continue
		}
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
	}
	return fmt.Errorf("not ready after %s", stackTimeout)
}

// stopDev stops the stack as Ctrl-C would, and kills what is left after 20 s.
func stopDev(dev *exec.Cmd, exited <-chan error) {
	_ = dev.Process.Signal(os.Interrupt)
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-dev.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

// cleanEnv is the environment of a fresh shell: no taskloom, Temporal or dependency settings
// leak in from the test's environment, so the stack runs on make dev's defaults.
func cleanEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "USER", "LANG", "TMPDIR", "GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOTOOLCHAIN"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func build(t *testing.T, root, out, pkg string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -o %s %s: %v\n%s", out, pkg, err, b)
	}
}

// makeSandbox links every top-level entry of the repository but .data (and .git) into dir.
func makeSandbox(t *testing.T, root, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == ".data" || e.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// makeCurlShim puts a curl first on the PATH that is the real curl with --fail-with-body
// --show-error, so a doc's curl answered with an HTTP error fails its block.
func makeCurlShim(t *testing.T, dir string) string {
	t.Helper()
	real, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("the docs test needs curl")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatal("the docs test needs jq (the docs' examples use it)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "curl"), "#!/bin/sh\nexec "+real+" --fail-with-body --show-error \"$@\"\n")
	if err := os.Chmod(filepath.Join(dir, "curl"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// namespacesWork tells whether this machine lets the test make a user, network and PID namespace.
func namespacesWork() bool {
	if _, err := exec.LookPath("ip"); err != nil {
		return false
	}
	return exec.Command("unshare", "--map-root-user", "--net", "--pid", "--fork", "--kill-child", "true").Run() == nil
}

func busyPorts() []int {
	var busy []int
	for _, p := range devPorts {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			busy = append(busy, p)
			continue
		}
		_ = l.Close()
	}
	return busy
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return tail(string(b), n)
}
