package feishuemu

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// Field type codes the emulator understands (a subset of Bitable's, enough for taskloom's tables).
const (
	TypeText         = 1
	TypeNumber       = 2
	TypeSingleSelect = 3
	TypeMultiSelect  = 4
	TypeDateTime     = 5
	TypeCheckbox     = 7
	TypeUser         = 11
	TypeURL          = 15
	TypeCreatedTime  = 1001
)

// FieldSpec declares a column in a fixture.
type FieldSpec struct {
	Name    string   `json:"field_name"`
	Type    int      `json:"type"`
	Options []string `json:"options,omitempty"`
}

// RecordSpec is a row in a fixture, with cells in the write format (text as a string).
type RecordSpec struct {
	ID     string         `json:"record_id,omitempty"`
	Fields map[string]any `json:"fields"`
}

// TableSpec declares a table in a fixture.
type TableSpec struct {
	ID      string       `json:"table_id"`
	Name    string       `json:"name"`
	Fields  []FieldSpec  `json:"fields"`
	Records []RecordSpec `json:"records,omitempty"`
}

// AppSpec declares a base.
type AppSpec struct {
	Token  string      `json:"app_token"`
	Tables []TableSpec `json:"tables"`
}

// WikiNode maps a wiki node token to the object it holds.
type WikiNode struct {
	NodeToken string `json:"node_token"`
	ObjToken  string `json:"obj_token"`
	ObjType   string `json:"obj_type"`
	Title     string `json:"title,omitempty"`
}

// Fixture is the JSON file format under testdata/feishu/.
type Fixture struct {
	Apps      []AppSpec  `json:"apps"`
	WikiNodes []WikiNode `json:"wiki_nodes,omitempty"`
}

type field struct {
	id      string
	name    string
	typ     int
	options []string
}

type record struct {
	id       string
	fields   map[string]any // write format
	created  int64
	modified int64
}

type table struct {
	id      string
	name    string
	fields  []*field
	byName  map[string]*field
	records []*record
	byID    map[string]*record
}

type app struct {
	token  string
	tables []*table
	byID   map[string]*table
	// writeMu serialises writes to one base, as Feishu does; a write arriving while another
	// holds it answers 1254291 when Options.WriteConflicts is on.
	writeMu sync.Mutex
}

type store struct {
	mu      sync.Mutex
	apps    map[string]*app
	wiki    map[string]WikiNode
	seq     int
	nowFunc func() time.Time
}

func newStore(now func() time.Time) *store {
	return &store{apps: map[string]*app{}, wiki: map[string]WikiNode{}, nowFunc: now}
}

func (s *store) nextID(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s%010d", prefix, s.seq)
}

// load adds a fixture; tables with an existing id are replaced.
func (s *store) load(fx Fixture) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range fx.Apps {
		ap := s.apps[a.Token]
		if ap == nil {
			ap = &app{token: a.Token, byID: map[string]*table{}}
			s.apps[a.Token] = ap
		}
		for _, ts := range a.Tables {
			t := &table{id: ts.ID, name: ts.Name, byName: map[string]*field{}, byID: map[string]*record{}}
			for _, fs := range ts.Fields {
				f := &field{id: s.nextID("fld"), name: fs.Name, typ: fs.Type, options: append([]string(nil), fs.Options...)}
				t.fields = append(t.fields, f)
				t.byName[f.name] = f
			}
			if old := ap.byID[t.id]; old != nil {
				for i, x := range ap.tables {
					if x == old {
						ap.tables = append(ap.tables[:i], ap.tables[i+1:]...)
						break
					}
				}
			}
			ap.tables = append(ap.tables, t)
			ap.byID[t.id] = t
			for _, rs := range ts.Records {
				fields, ae := t.coerce(rs.Fields)
				if ae != nil {
					return fmt.Errorf("fixture table %s: %s", t.id, ae.msg)
				}
				id := rs.ID
				if id == "" {
					id = newID("rec")
				}
				now := s.nowFunc().UnixMilli()
				r := &record{id: id, fields: fields, created: now, modified: now}
				t.records = append(t.records, r)
				t.byID[id] = r
			}
		}
	}
	for _, n := range fx.WikiNodes {
		s.wiki[n.NodeToken] = n
	}
	return nil
}

// LoadFixtureFile reads a fixture from a JSON file.
func LoadFixtureFile(path string) (Fixture, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Fixture{}, fmt.Errorf("read fixture: %w", err)
	}
	var fx Fixture
	if err := json.Unmarshal(b, &fx); err != nil {
		return Fixture{}, fmt.Errorf("decode fixture %s: %w", path, err)
	}
	return fx, nil
}
