package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/spf13/cobra"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
)

// Output formats of -o: the API's JSON (snake_case, what the HTTP API answers for the same
// thing) or aligned columns for a reader.
const (
	outputJSON  = "json"
	outputTable = "table"
)

// Persistent flags every command has.
const (
	flagOutput  = "output"
	flagVerbose = "verbose"
)

func addOutputFlags(root *cobra.Command) {
	root.PersistentFlags().StringP(flagOutput, "o", outputTable, "output format: json (the API's JSON) or table")
	root.PersistentFlags().BoolP(flagVerbose, "v", false, "log to stderr (commands are silent but for their result otherwise)")
}

// checkOutput refuses an unknown -o before the command does anything.
func checkOutput(c *cobra.Command) error {
	if f := outputFormat(c); f != outputJSON && f != outputTable {
		return fmt.Errorf("-o %q: want json or table", f)
	}
	return nil
}

func outputFormat(c *cobra.Command) string {
	if f := c.Flag(flagOutput); f != nil {
		return f.Value.String()
	}
	return outputTable
}

// render writes v as the API's JSON with -o json, and as a table otherwise: an object becomes
// FIELD/VALUE lines (a field holding a list of objects follows as a table of its own), a list of
// objects one row per object.
func render(c *cobra.Command, v any) error {
	w := c.OutOrStdout()
	if outputFormat(c) == outputJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	doc, err := decodeOrdered(json.NewDecoder(bytes.NewReader(raw)))
	if err != nil {
		return err
	}
	return writeTable(w, doc)
}

// field is one member of a JSON object, in the order the object had it.
type field struct {
	key string
	val any
}

// decodeOrdered decodes one JSON value keeping object members in order: objects as []field,
// arrays as []any, scalars as json.Number, string, bool or nil.
func decodeOrdered(dec *json.Decoder) (any, error) {
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			var list []any
			for dec.More() {
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token()
			return list, err
		}
		obj := []field{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			obj = append(obj, field{key: k.(string), val: v})
		}
		_, err := dec.Token()
		return obj, err
	default:
		return t, nil
	}
}

func writeTable(w io.Writer, doc any) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	var lists []field
	switch d := doc.(type) {
	case []field:
		for _, f := range d {
			if rows, ok := objectList(f.val); ok && len(rows) > 0 {
				lists = append(lists, f)
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\n", header(f.key), cell(f.val))
		}
	case []any:
		if rows, ok := objectList(d); ok {
			writeRows(tw, rows)
		} else {
			for _, v := range d {
				fmt.Fprintln(tw, cell(v))
			}
		}
	default:
		fmt.Fprintln(tw, cell(d))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range lists {
		rows, _ := objectList(l.val)
		fmt.Fprintf(w, "\n%s\n", header(l.key))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		writeRows(tw, rows)
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// objectList returns v's objects when v is a list of objects.
func objectList(v any) ([][]field, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	rows := make([][]field, 0, len(list))
	for _, e := range list {
		obj, ok := e.([]field)
		if !ok {
			return nil, false
		}
		rows = append(rows, obj)
	}
	return rows, true
}

// writeRows writes a header of the first object's keys and one line per object.
func writeRows(tw *tabwriter.Writer, rows [][]field) {
	if len(rows) == 0 {
		return
	}
	keys := make([]string, len(rows[0]))
	heads := make([]string, len(rows[0]))
	for i, f := range rows[0] {
		keys[i], heads[i] = f.key, header(f.key)
	}
	fmt.Fprintln(tw, strings.Join(heads, "\t"))
	for _, r := range rows {
		cells := make([]string, len(keys))
		for i, k := range keys {
			cells[i] = "-"
			for _, f := range r {
				if f.key == k {
					cells[i] = cell(f.val)
				}
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
}

// header is a JSON key as a column title: task_id and taskId both become TASK_ID.
func header(key string) string {
	var b strings.Builder
	for i, r := range key {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// maxCell bounds a nested value printed in one table cell.
const maxCell = 80

// cell is one value on one line: scalars as they are, nested values as compact JSON.
func cell(v any) string {
	switch t := v.(type) {
	case nil:
		return "-"
	case string:
		if t == "" {
			return "-"
		}
		return strings.ReplaceAll(t, "\n", " ")
	case json.Number:
		return t.String()
	case bool:
		return fmt.Sprint(t)
	}
	s := compact(v)
	if len(s) > maxCell {
		s = s[:maxCell-1] + "…"
	}
	return s
}

// compact renders an ordered value back as one line of JSON.
func compact(v any) string {
	switch t := v.(type) {
	case []field:
		parts := make([]string, len(t))
		for i, f := range t {
			k, _ := json.Marshal(f.key)
			parts[i] = string(k) + ":" + compact(f.val)
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = compact(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case json.Number:
		return t.String()
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// verboseKey marks a context whose command logs (-v, or a server such as api and worker).
type verboseKey struct{}

func withVerbose(ctx context.Context, v bool) context.Context {
	return context.WithValue(ctx, verboseKey{}, v)
}

func verbose(ctx context.Context) bool {
	v, _ := ctx.Value(verboseKey{}).(bool)
	return v
}

// devEnvKey marks a context whose settings came partly from the dev stack's .data/dev.env.
type devEnvKey struct{}

func withDevEnv(ctx context.Context, file string) context.Context {
	return context.WithValue(ctx, devEnvKey{}, file)
}

// explainDevEnv adds to a connection failure where the addresses came from: a .data/dev.env left
// by a stopped `make dev` names servers that are gone. Other errors pass unchanged.
func explainDevEnv(ctx context.Context, err error) error {
	file, _ := ctx.Value(devEnvKey{}).(string)
	if err == nil || file == "" || !unreachable(err) {
		return err
	}
	return fmt.Errorf("%w (addresses from %s: is make dev running?)", err, file)
}

// unreachable tells a server that did not answer from every other error.
func unreachable(err error) bool {
	var unavailable *serviceerror.Unavailable
	var netErr net.Error
	return mongo.IsNetworkError(err) || mongo.IsTimeout(err) || errors.As(err, &unavailable) ||
		errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded)
}

// alwaysLogs is the annotation of commands that are servers: their logs are their output.
const alwaysLogs = "taskloom/always-logs"

// rootCause is what a failed workflow run says in one sentence: the message of the innermost
// application error in Temporal's chain (workflow error → activity error → the activity's own
// error, whose text the outer errors repeat), else the innermost error.
func rootCause(err error) error {
	var last *temporal.ApplicationError
	for e := err; e != nil; e = errors.Unwrap(e) {
		if ae, ok := e.(*temporal.ApplicationError); ok {
			last = ae
		}
	}
	if last != nil && last.Message() != "" {
		return errors.New(last.Message())
	}
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}
