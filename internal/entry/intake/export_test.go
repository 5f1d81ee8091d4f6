package intake

import lru "github.com/hashicorp/golang-lru/v2"

// RememberPipelines gives a submitter built in a test the memory of checked pipelines
// NewSubmitter gives it.
func RememberPipelines(s *Submitter) {
	s.known, _ = lru.New[string, struct{}](knownPipelines)
}
