package ui

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"
)

// series is one set of bars of the timeline, e.g. pulls per hour.
type series struct {
	Name, Class string
	Counts      []int
}

// timelineSVG draws grouped bars per time bucket, server-side, so the page needs no chart
// library and works without JavaScript. start is the first bucket's start.
func timelineSVG(start time.Time, step time.Duration, ss []series) template.HTML {
	const w, h, left, bottom, top = 760, 220, 36, 28, 10
	n := 0
	maxV := 1
	for _, s := range ss {
		n = max(n, len(s.Counts))
		for _, v := range s.Counts {
			maxV = max(maxV, v)
		}
	}
	if n == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" id="pull-timeline" viewBox="0 0 %d %d" role="img" aria-label="拉取与释放随时间变化">`, w, h)
	plotH := float64(h - bottom - top)
	slot := float64(w-left-4) / float64(n)
	barW := math.Max(1, (slot-2)/float64(len(ss)))
	axes(&b, w, h, left, bottom, top, maxV)
	for i := 0; i < n; i++ {
		x0 := float64(left) + float64(i)*slot + 1
		for j, s := range ss {
			if i >= len(s.Counts) || s.Counts[i] == 0 {
				continue
			}
			bh := plotH * float64(s.Counts[i]) / float64(maxV)
			fmt.Fprintf(&b, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s %s: %d</title></rect>`,
				s.Class, x0+float64(j)*barW, float64(h-bottom)-bh, barW, bh,
				start.Add(time.Duration(i)*step).UTC().Format("01-02 15:04"), s.Name, s.Counts[i])
		}
		if every := max(1, n/8); i%every == 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`, x0, h-bottom+14, start.Add(time.Duration(i)*step).UTC().Format("15:04"))
		}
	}
	b.WriteString(`</svg>`)
	// Safe to mark as HTML: the markup holds only numbers, times and this package's fixed labels.
	return template.HTML(b.String())
}

// histogramSVG draws one bar per bin with its label underneath.
func histogramSVG(labels []string, counts []int) template.HTML {
	const w, h, left, bottom, top = 760, 200, 36, 28, 10
	if len(counts) == 0 {
		return ""
	}
	maxV := 1
	for _, v := range counts {
		maxV = max(maxV, v)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" id="pull-durations" viewBox="0 0 %d %d" role="img" aria-label="拉取到推送耗时分布">`, w, h)
	axes(&b, w, h, left, bottom, top, maxV)
	slot := float64(w-left-4) / float64(len(counts))
	plotH := float64(h - bottom - top)
	for i, v := range counts {
		x := float64(left) + float64(i)*slot + 4
		bh := plotH * float64(v) / float64(maxV)
		fmt.Fprintf(&b, `<rect class="hist" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s: %d</title></rect>`,
			x, float64(h-bottom)-bh, slot-8, bh, labels[i], v)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`, x, h-bottom+14, labels[i])
		if v > 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%d</text>`, x+2, float64(h-bottom)-bh-3, v)
		}
	}
	b.WriteString(`</svg>`)
	// Safe to mark as HTML: the markup holds only numbers and this package's fixed labels.
	return template.HTML(b.String())
}

func axes(b *strings.Builder, w, h, left, bottom, top, maxV int) {
	fmt.Fprintf(b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, left, h-bottom, w-4, h-bottom)
	fmt.Fprintf(b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, left, top, left, h-bottom)
	fmt.Fprintf(b, `<text x="2" y="%d">%d</text><text x="2" y="%d">0</text>`, top+10, maxV, h-bottom)
}
