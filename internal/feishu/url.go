package feishu

import (
	"fmt"
	"net/url"
	"strings"
)

// TableKind says how a Bitable link names its base: directly (/base/<app_token>) or through a
// wiki node (/wiki/<node_token>) that must be resolved with wiki get_node first.
type TableKind string

const (
	KindBase TableKind = "base"
	KindWiki TableKind = "wiki"
)

// TableURL is a parsed Bitable table link such as
// https://x.feishu.cn/base/<app_token>?table=tbl…&view=vew… or https://x.feishu.cn/wiki/<node>?table=tbl….
type TableURL struct {
	Kind    TableKind
	Token   string // app_token for KindBase, wiki node token for KindWiki
	TableID string
	ViewID  string
}

// ParseTableURL parses the two link forms users copy from the Feishu UI. The table query
// parameter is required: a base holds many tables and guessing one would write to the wrong place.
func ParseTableURL(raw string) (TableURL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return TableURL{}, fmt.Errorf("parse bitable url: empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return TableURL{}, fmt.Errorf("parse bitable url %q: %w", raw, err)
	}
	segs := strings.Split(strings.Trim(u.EscapedPath(), "/"), "/")
	var t TableURL
	for i := 0; i+1 < len(segs); i++ {
		switch segs[i] {
		case "base":
			t.Kind, t.Token = KindBase, segs[i+1]
		case "wiki":
			t.Kind, t.Token = KindWiki, segs[i+1]
		default:
			continue
		}
		break
	}
	if t.Kind == "" || t.Token == "" {
		return TableURL{}, fmt.Errorf("parse bitable url %q: path must contain /base/<app_token> or /wiki/<node_token>", raw)
	}
	if !validToken(t.Token) {
		return TableURL{}, fmt.Errorf("parse bitable url %q: token %q has unexpected characters", raw, t.Token)
	}
	q := u.Query()
	t.TableID = q.Get("table")
	t.ViewID = q.Get("view")
	if t.TableID == "" {
		return TableURL{}, fmt.Errorf("parse bitable url %q: missing ?table=<table_id>", raw)
	}
	if !validToken(t.TableID) || (t.ViewID != "" && !validToken(t.ViewID)) {
		return TableURL{}, fmt.Errorf("parse bitable url %q: table or view id has unexpected characters", raw)
	}
	return t, nil
}

// validToken accepts the alphabet Feishu uses for app, node, table and view tokens. Rejecting
// anything else keeps path escaping surprises (slashes, dots) out of API paths.
func validToken(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		ok := r == '_' || r == '-' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !ok {
			return false
		}
	}
	return true
}

// String renders the link in its canonical form (host omitted), handy in logs and errors.
func (t TableURL) String() string {
	s := "/" + string(t.Kind) + "/" + t.Token + "?table=" + t.TableID
	if t.ViewID != "" {
		s += "&view=" + t.ViewID
	}
	return s
}
