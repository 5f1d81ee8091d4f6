package taskecho

import (
	"errors"
	"testing"
	"time"
)

// A submit body names its project once: any second project_id key, in whatever case or escape,
// is refused before the binding check or the push can read different ones.
func TestDecodeSubmitRefusesASecondProjectID(t *testing.T) {
	const rest = `"project_name":"n","queue_id":"q","queue_name":"q","tasks":[{"id":"t","name":"t","prompt":"p","status":"pending"}]`
	for name, body := range map[string]string{
		"upper after":       `{"project_id":"D",` + rest + `,"PROJECT_ID":"A"}`,
		"upper before":      `{"PROJECT_ID":"A","project_id":"D",` + rest + `}`,
		"mixed case":        `{"project_id":"D","Project_Id":"A",` + rest + `}`,
		"exact repeat":      `{"project_id":"D","project_id":"A",` + rest + `}`,
		"escaped":           `{"project_id":"D","project\u005FID":"A",` + rest + `}`,
		"non-string second": `{"project_id":"D","PROJECT_ID":null,` + rest + `}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeSubmit([]byte(body))
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Errors) != 1 || ve.Errors[0].Field != "project_id" {
				t.Fatalf("DecodeSubmit(%s) = %v, want one validation error naming project_id", body, err)
			}
			if _, err := ParseSubmit([]byte(body), time.Now()); !errors.As(err, &ve) {
				t.Fatalf("ParseSubmit must refuse it too, got %v", err)
			}
		})
	}
	b, err := DecodeSubmit([]byte(`{"project_id":"A",` + rest + `,"meta":{"PROJECT_ID":"D"}}`))
	if err != nil || b.ProjectID != "A" {
		t.Fatalf("a nested project_id is not the body's project: %+v, %v", b, err)
	}
	in, err := b.Parse(time.Now())
	if err != nil || in.ProjectID != b.ProjectID {
		t.Fatalf("the push must write to the project the check read: %+v, %v", in, err)
	}
}
