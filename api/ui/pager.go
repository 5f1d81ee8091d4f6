package ui

import (
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"
)

// maxPage bounds ?page= so a crafted number cannot ask the database to skip billions of rows.
const maxPage = 100000

// pager is the page a list shows and the links to its neighbours.
type pager struct {
	Page, Size, Pages int
	Total             int64
	Prev, Next        string
}

func pageOf(c echo.Context, size int) pager { return pagerFrom(c.QueryParam("page"), size) }

func pagerFrom(v string, size int) pager {
	p, err := strconv.Atoi(v)
	if err != nil || p < 1 {
		p = 1
	}
	if p > maxPage {
		p = maxPage
	}
	return pager{Page: p, Size: size}
}

func (p pager) skip() int64 { return int64((p.Page - 1) * p.Size) }

// with fills the totals and the neighbour links, keeping the request's other query parameters.
func (p pager) with(total int64, c echo.Context) pager { return p.withParam(total, c, "page") }

// withParam is with for a list paged by another query parameter (two lists on one page).
func (p pager) withParam(total int64, c echo.Context, name string) pager {
	p.Total = total
	p.Pages = int((total + int64(p.Size) - 1) / int64(p.Size))
	link := func(n int) string {
		q := url.Values{}
		for k, v := range c.QueryParams() {
			q[k] = v
		}
		q.Set(name, strconv.Itoa(n))
		return c.Request().URL.Path + "?" + q.Encode()
	}
	if p.Page > 1 {
		p.Prev = link(p.Page - 1)
	}
	if p.Page < p.Pages {
		p.Next = link(p.Page + 1)
	}
	return p
}
