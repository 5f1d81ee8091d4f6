package taskecho

import (
	"testing"
	"time"
)

// The binding check (DecodeSubmit's ProjectID) and the push (Parse) read project_id from one
// decoding, so no second spelling of the key, in whatever case or escape, can name one project to
// the check and another to the write. (Over HTTP such a body never gets here: the body reader,
// httpx.CheckJSON, refuses repeated keys case-folded; api/taskecho's isolation test holds that.)
func TestDecodeSubmitCheckAndWriteReadOneProjectID(t *testing.T) {
	const rest = `"project_name":"n","queue_id":"q","queue_name":"q","tasks":[{"id":"t","name":"t","prompt":"p","status":"pending"}]`
	for name, body := range map[string]string{
		"upper after":       `{"project_id":"D",` + rest + `,"PROJECT_ID":"A"}`,
		"upper before":      `{"PROJECT_ID":"A","project_id":"D",` + rest + `}`,
		"mixed case":        `{"project_id":"D","Project_Id":"A",` + rest + `}`,
		"exact repeat":      `{"project_id":"A","project_id":"D",` + rest + `}`,
		"escaped":           `{"project_id":"D","project\u005FID":"A",` + rest + `}`,
		"non-string second": `{"project_id":"D","PROJECT_ID":null,` + rest + `}`,
		"nested":            `{"project_id":"D",` + rest + `,"meta":{"PROJECT_ID":"A"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			b, err := DecodeSubmit([]byte(body))
			if err != nil || b.ProjectID != "D" {
				t.Fatalf("DecodeSubmit(%s) = %+v, %v; want project D", body, b, err)
			}
			in, err := b.Parse(time.Now())
			if err != nil || in.ProjectID != b.ProjectID {
				t.Fatalf("the push must write to the project the check read: %+v, %v", in, err)
			}
		})
	}
}
