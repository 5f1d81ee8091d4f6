package entry

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxMessageUTF16 is the most text one Telegram message holds: sendMessage takes "1-4096
// characters after entities parsing", and the Bot API counts characters in UTF-16 code units
// (https://core.telegram.org/bots/api#sendmessage, #messageentity). Replies are plain text (no
// parse_mode), so the text is what Telegram counts: an emoji outside the Basic Multilingual Plane
// is 2 units, a CJK character 1.
const MaxMessageUTF16 = 4096

// UTF16Len is the length of s in UTF-16 code units. A byte that is not UTF-8 counts as the one
// replacement character JSON encoding turns it into.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// ReplyParts is text as the consecutive Telegram messages that carry it: SplitMessage at
// MaxMessageUTF16, without the parts that are only whitespace (Telegram strips surrounding
// whitespace and refuses a message left empty). Text with anything but whitespace has at least
// one part.
func ReplyParts(text string) []string {
	var parts []string
	for _, p := range SplitMessage(text, MaxMessageUTF16) {
		if strings.TrimSpace(p) != "" {
			parts = append(parts, p)
		}
	}
	return parts
}

// SplitMessage cuts text into consecutive parts of at most limit UTF-16 code units each, which
// joined give text back. A part ends at a line break when one falls in the second half of the
// room a part has, else at a word boundary, and is cut inside a word only when that word alone
// does not fit (never inside a character: a surrogate pair stays whole). No part is empty. A
// limit below 2 counts as 2, the room of the widest character.
func SplitMessage(text string, limit int) []string {
	limit = max(limit, 2)
	var parts []string
	for text != "" {
		n := fitting(text, limit)
		if n < len(text) {
			n = cut(text[:n], text[n:])
		}
		parts = append(parts, text[:n])
		text = text[n:]
	}
	return parts
}

// fitting is the byte length of the longest prefix of s that is at most limit UTF-16 units.
func fitting(s string, limit int) int {
	units := 0
	for i, r := range s {
		units += utf16.RuneLen(r)
		if units > limit {
			return i
		}
	}
	return len(s)
}

// cut is where the part taken from window (as much of the text as fits; rest follows it) ends:
// at the end of the window when the rest begins with a line break, else after the window's last
// line break in its second half; then at the end of the window when the rest begins a new word,
// else after the window's last space; and only when the window is one word, at its end.
func cut(window, rest string) int {
	next, _ := utf8.DecodeRuneInString(rest)
	switch i := strings.LastIndexByte(window, '\n'); {
	case next == '\n':
		return len(window)
	case i >= len(window)/2:
		return i + 1
	case isBreak(next):
		return len(window)
	}
	if i := lastBreak(window); i > 0 {
		return i
	}
	return len(window)
}

// lastBreak is the byte offset just after the last breaking space of s, 0 when it has none.
func lastBreak(s string) int {
	for end := len(s); end > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:end])
		if isBreak(r) {
			return end
		}
		end -= size
	}
	return 0
}

// isBreak reports a space a line may break at: white space other than the no-break spaces.
func isBreak(r rune) bool {
	return unicode.IsSpace(r) && r != '\u00a0' && r != '\u2007' && r != '\u202f'
}
