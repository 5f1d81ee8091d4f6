package feishu

import (
	"strings"
	"testing"
)

func TestParseTableURL(t *testing.T) {
	cases := []struct {
		in      string
		want    TableURL
		wantErr string
	}{
		{in: "https://x.feishu.cn/base/bascnAbc123?table=tblXYZ&view=vewQ", want: TableURL{Kind: KindBase, Token: "bascnAbc123", TableID: "tblXYZ", ViewID: "vewQ"}},
		{in: "https://x.feishu.cn/wiki/wikcnNode9?table=tbl1", want: TableURL{Kind: KindWiki, Token: "wikcnNode9", TableID: "tbl1"}},
		{in: " http://127.0.0.1:9/base/app1/?table=tbl2 ", want: TableURL{Kind: KindBase, Token: "app1", TableID: "tbl2"}},
		{in: "https://x.feishu.cn/base/app1", wantErr: "missing ?table"},
		{in: "https://x.feishu.cn/docs/app1?table=t", wantErr: "must contain"},
		{in: "", wantErr: "empty"},
		{in: "https://x.feishu.cn/base/a%2Fb?table=t", wantErr: "unexpected characters"},
	}
	for _, c := range cases {
		got, err := ParseTableURL(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("ParseTableURL(%q) err = %v, want containing %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseTableURL(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

func FuzzParseTableURL(f *testing.F) {
	for _, s := range []string{
		"https://x.feishu.cn/base/bascnAbc?table=tbl1&view=vew1",
		"https://x.feishu.cn/wiki/wik1?table=tbl1",
		"/base/x?table=y", "wiki//?table=", "https://a/base/../wiki/x?table=%00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTableURL(s)
		if err != nil {
			return
		}
		if got.Token == "" || got.TableID == "" || (got.Kind != KindBase && got.Kind != KindWiki) {
			t.Fatalf("accepted incomplete url %q: %+v", s, got)
		}
		again, err := ParseTableURL("https://h" + got.String())
		if err != nil || again != got {
			t.Fatalf("round trip of %q: %+v, %v; want %+v", s, again, err, got)
		}
	})
}
