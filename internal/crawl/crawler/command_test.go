package crawler

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	cases := map[string][]string{
		`docker run --rm crawl4ai --original-task-id {id}`: {"docker", "run", "--rm", "crawl4ai", "--original-task-id", "{id}"},
		`  a   b	c `:                      {"a", "b", "c"},
		`sh -c 'echo "hi there"; exit 3'`: {"sh", "-c", `echo "hi there"; exit 3`},
		`a "b c" d\ e ''`:                 {"a", "b c", "d e", ""},
		`x"y"'z'`:                         {"xyz"},
		`"a\"b"`:                          {`a"b`},
	}
	for in, want := range cases {
		got, err := SplitCommand(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{``, `   `, `a 'b`, `a "b`, `a \`} {
		if got, err := SplitCommand(in); err == nil {
			t.Errorf("SplitCommand(%q) = %q, want an error", in, got)
		}
	}
}

func TestBuildCommand(t *testing.T) {
	got, err := BuildCommand(`{self} crawl fake-crawler --original-task-id {id} --brokers {brokers}`,
		CommandVars{OriginalTaskID: 42, Brokers: []string{"a:1", "b:2"}, Self: "/bin/starter"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/bin/starter", "crawl", "fake-crawler", "--original-task-id", "42", "--brokers", "a:1,b:2"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
	if _, err := BuildCommand(`crawler --all`, CommandVars{OriginalTaskID: 1}); err == nil {
		t.Fatal("a template without {id} must be rejected")
	}
}

func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{`docker run --rm img --original-task-id {id}`, `sh -c 'a "b" c'`, `a\ b "c d"`, `'`, `\`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args, err := SplitCommand(s)
		if err != nil {
			return
		}
		if len(args) == 0 {
			t.Fatal("no error and no arguments")
		}
		// Quoting every argument and splitting again gives them back.
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		again, err := SplitCommand(strings.Join(quoted, " "))
		if err != nil || !reflect.DeepEqual(again, args) {
			t.Fatalf("re-split of %q = %q, %v", args, again, err)
		}
	})
}
