package feishuemu

import (
	"net/http"
	"sync"
)

// Endpoint names used by the call counter and fault injection.
const (
	EPToken       = "token"
	EPSearch      = "records.search"
	EPList        = "records.list"
	EPGet         = "records.get"
	EPBatchGet    = "records.batch_get"
	EPCreate      = "records.create"
	EPUpdate      = "records.update"
	EPBatchCreate = "records.batch_create"
	EPBatchUpdate = "records.batch_update"
	EPTables      = "tables.list"
	EPFields      = "fields.list"
	EPWikiNode    = "wiki.get_node"
)

// Fault makes the next Times calls to Endpoint answer with Code (HTTP 200 unless HTTPStatus
// is set) instead of being served. Typical: 1254290 (too fast), 1254291 (write conflict),
// 99991400 with HTTP 429 (gateway rate limit).
type Fault struct {
	Endpoint   string
	Code       int
	HTTPStatus int
	Times      int
}

// Predefined faults matching real Feishu answers.
func RateLimit(endpoint string, times int) Fault {
	return Fault{Endpoint: endpoint, Code: 1254290, Times: times}
}

// WriteConflict answers 1254291 "Write conflict".
func WriteConflict(endpoint string, times int) Fault {
	return Fault{Endpoint: endpoint, Code: 1254291, Times: times}
}

// GatewayLimit answers HTTP 429 with code 99991400 and the x-ogw-ratelimit headers.
func GatewayLimit(endpoint string, times int) Fault {
	return Fault{Endpoint: endpoint, Code: 99991400, HTTPStatus: http.StatusTooManyRequests, Times: times}
}

var faultMsgs = map[int]string{
	1254290:  "TooManyRequest: Request too fast, try again later",
	1254291:  "Write conflict",
	99991400: "request trigger frequency limit",
}

type faults struct {
	mu      sync.Mutex
	pending []Fault
	calls   map[string]int
}

// take counts a call to ep and returns a fault to answer with, if one is armed.
func (f *faults) take(ep string) (Fault, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[ep]++
	for i := range f.pending {
		if f.pending[i].Endpoint == ep && f.pending[i].Times > 0 {
			f.pending[i].Times--
			return f.pending[i], true
		}
	}
	return Fault{}, false
}
