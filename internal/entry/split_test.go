package entry_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/taskloom/taskloom/internal/entry"
)

func TestUTF16Len(t *testing.T) {
	for s, want := range map[string]int{"": 0, "abc": 3, "长文本": 3, "😀": 2, "a😀b": 4, "\xff": 1, "👩\u200d👧": 5} {
		if got := entry.UTF16Len(s); got != want {
			t.Errorf("UTF16Len(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestSplitMessage(t *testing.T) {
	cases := []struct {
		name, text string
		limit      int
		want       []string
	}{
		{"fits", "hello world", 11, []string{"hello world"}},
		{"word boundary", "hello big world", 12, []string{"hello big ", "world"}},
		{"rest begins a word", "hello world", 5, []string{"hello", " ", "world"}},
		{"line in the second half", "one two\nthree four", 12, []string{"one two\n", "three four"}},
		{"early line: words", "a\nbb cc dd ee", 9, []string{"a\nbb cc ", "dd ee"}},
		{"word over the limit", "abcdefgh ij", 3, []string{"abc", "def", "gh ", "ij"}},
		{"surrogate pair stays whole", "a😀b", 2, []string{"a", "😀", "b"}},
		{"no-break space does not break", "a\u00a0b c", 4, []string{"a\u00a0b ", "c"}},
		{"limit below 2", "😀😀", 1, []string{"😀", "😀"}},
	}
	for _, c := range cases {
		got := entry.SplitMessage(c.text, c.limit)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// 5,000-character replies in ASCII words, CJK without spaces, and emoji (a surrogate pair
// straddling the limit) become parts within Telegram's limit that give the text back.
func TestReplyPartsOfLongReplies(t *testing.T) {
	for name, text := range map[string]string{
		"ascii": strings.Repeat("lorem ipsum dolor sit amet ", 186)[:5000],
		"cjk":   strings.Repeat("长文本回复需要拆分", 556)[:5000*3],
		"emoji": "a" + strings.Repeat("😀", 2500),
	} {
		parts := entry.ReplyParts(text)
		if len(parts) < 2 || strings.Join(parts, "") != text {
			t.Errorf("%s: %d parts do not give the text back", name, len(parts))
		}
		for i, p := range parts {
			if n := entry.UTF16Len(p); n > entry.MaxMessageUTF16 || n == 0 {
				t.Errorf("%s: part %d is %d UTF-16 units", name, i, n)
			}
		}
	}
	if parts := entry.ReplyParts("a" + strings.Repeat(" ", 5000) + "b"); len(parts) != 2 || strings.TrimSpace(parts[0]) != "a" || strings.TrimSpace(parts[1]) != "b" {
		t.Errorf("a blank part is dropped: %d parts", len(parts))
	}
}

// FuzzSplitMessage: the parts give the text back, none is empty or over the limit, and a part
// ends inside a word only when that word does not fit a part (a hard split). ReplyParts are the
// parts at Telegram's limit that are not blank.
func FuzzSplitMessage(f *testing.F) {
	f.Add("hello big world", uint16(12))
	f.Add("a😀b", uint16(2))
	f.Add("one two\nthree four", uint16(12))
	f.Add(strings.Repeat("长", 5000), uint16(4096))
	f.Fuzz(func(t *testing.T, text string, limit uint16) {
		n := max(int(limit)%5000, 2)
		checkParts(t, text, n, entry.SplitMessage(text, n))
		var nonBlank []string
		for _, p := range entry.SplitMessage(text, entry.MaxMessageUTF16) {
			if strings.TrimSpace(p) != "" {
				nonBlank = append(nonBlank, p)
			}
		}
		if got := entry.ReplyParts(text); strings.Join(got, "\x00") != strings.Join(nonBlank, "\x00") {
			t.Fatalf("ReplyParts %q, want %q", got, nonBlank)
		}
	})
}

func checkParts(t *testing.T, text string, limit int, parts []string) {
	t.Helper()
	if strings.Join(parts, "") != text {
		t.Fatalf("limit %d: parts %q do not join to %q", limit, parts, text)
	}
	for i, p := range parts {
		if p == "" || entry.UTF16Len(p) > limit {
			t.Fatalf("limit %d: part %d %q is empty or over the limit", limit, i, p)
		}
		if i == len(parts)-1 {
			break
		}
		last, _ := utf8.DecodeLastRuneInString(p)
		next, _ := utf8.DecodeRuneInString(parts[i+1])
		if isBreak(last) || isBreak(next) {
			continue
		}
		if strings.IndexFunc(p, isBreak) >= 0 || entry.UTF16Len(p)+utf16.RuneLen(next) <= limit {
			t.Fatalf("limit %d: part %d %q ends inside a word that fits a part", limit, i, p)
		}
	}
}

func isBreak(r rune) bool {
	return unicode.IsSpace(r) && r != '\u00a0' && r != '\u2007' && r != '\u202f'
}
