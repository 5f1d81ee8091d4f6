package feishuemu

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// pageCursor is what an opaque page_token encodes: it is bound to the table and the query, so
// reusing a token with another query is rejected instead of returning a wrong page.
type pageCursor struct {
	Table  string `json:"t"`
	Query  string `json:"q"`
	Offset int    `json:"o"`
}

func queryKey(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:8])
}

func encodeCursor(c pageCursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(tok, tableID, query string) (int, *apiErr) {
	if tok == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	var c pageCursor
	if err != nil || json.Unmarshal(b, &c) != nil || c.Table != tableID || c.Query != query || c.Offset < 0 {
		return 0, badReq(1254030, "InvalidPageToken")
	}
	return c.Offset, nil
}

// pageSize reads page_size: default def, at most max, a positive number.
func pageSize(r *http.Request, def, max int) (int, *apiErr) {
	raw := r.URL.Query().Get("page_size")
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n <= 0 {
		return 0, &apiErr{status: http.StatusBadRequest, code: 1254011, msg: "Page size must greater than 0."}
	}
	if n > max {
		return 0, &apiErr{status: http.StatusBadRequest, code: 1254000, msg: "WrongRequestJson: page_size must be at most " + strconv.Itoa(max)}
	}
	return n, nil
}

// page cuts one page out of n items and builds the paging members of the answer; page_token
// is present only when more pages follow (the SDK iterators loop while it is present).
func page(n, offset, size int, tableID, query string) (int, int, map[string]any) {
	if offset > n {
		offset = n
	}
	end := min(offset+size, n)
	meta := map[string]any{"has_more": end < n, "total": n}
	if end < n {
		meta["page_token"] = encodeCursor(pageCursor{Table: tableID, Query: query, Offset: end})
	}
	return offset, end, meta
}
