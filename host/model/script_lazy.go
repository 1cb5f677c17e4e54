package model

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"

	"github.com/cairnrun/cairn/internal/yamlkeys"

	"go.yaml.in/yaml/v3"
)

// lazyScript is a long script's turns, each parsed when first asked for.
// It is safe for concurrent use.
type lazyScript struct {
	data  []byte
	spans []span
	mu    sync.Mutex
	turns []*scriptTurn // parsed so far, by index
	// seen are turns parsed so far by their text, with the lines of a
	// turn on the script's first line: a script of repeated turns (a long
	// loop of the same calls) parses each distinct text once. At most
	// maxSeen are kept.
	seen map[string]*scriptTurn
}

const maxSeen = 64

// parseLazy parses what of the script is not its turns, and keeps the
// turns to parse when played.
func parseLazy(data []byte, layout scriptLayout) (*Script, error) {
	var doc struct {
		Turns   []scriptTurn `yaml:"turns"`
		Summary string       `yaml:"summary"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(layout.rest))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("script: %w", yamlkeys.Friendly(err, reflect.TypeOf(doc)))
	}
	if err := yamlkeys.WholeNumbers(layout.rest, reflect.TypeOf(doc)); err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	l := &lazyScript{data: data, spans: layout.turns, turns: make([]*scriptTurn, len(layout.turns))}
	return &Script{lazy: l, summary: doc.Summary}, nil
}

// count is how many turns the script has.
func (s *Script) count() int {
	if s.lazy != nil {
		return len(s.lazy.spans)
	}
	return len(s.turns)
}

// turn is turn n (from 0) of the script.
func (s *Script) turn(n int) (scriptTurn, error) {
	if s.lazy == nil {
		return s.turns[n], nil
	}
	return s.lazy.turn(n)
}

func (l *lazyScript) turn(n int) (scriptTurn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t := l.turns[n]; t != nil {
		return *t, nil
	}
	sp := l.spans[n]
	text := l.data[sp.start:sp.end]
	t, ok := l.seen[string(text)]
	if !ok {
		var err error
		if t, err = parseTurn(text); err != nil {
			return scriptTurn{}, fmt.Errorf("script: turn %d, from line %d: %w", n+1, sp.line, err)
		}
		if l.seen == nil || len(l.seen) == maxSeen {
			l.seen = map[string]*scriptTurn{}
		}
		l.seen[string(text)] = t
	}
	moved := t.clone()
	moved.moveLines(sp.line - 1)
	if err := moved.check(); err != nil {
		return scriptTurn{}, fmt.Errorf("script: %w", err)
	}
	l.turns[n] = &moved
	return moved, nil
}

// parseTurn parses one turn's text, with its lines counted from 1.
func parseTurn(text []byte) (*scriptTurn, error) {
	var items []scriptTurn
	dec := yaml.NewDecoder(bytes.NewReader(text))
	dec.KnownFields(true)
	if err := dec.Decode(&items); err != nil || len(items) != 1 {
		if err == nil {
			err = errors.New("not one turn")
		}
		return nil, yamlkeys.Friendly(err, reflect.TypeOf(items))
	}
	if err := yamlkeys.WholeNumbers(text, reflect.TypeOf(items)); err != nil {
		return nil, err
	}
	return &items[0], nil
}

// clone is a copy of the turn whose lines can be moved apart from it.
func (t *scriptTurn) clone() scriptTurn {
	c := *t
	if t.ToolCalls != nil {
		c.ToolCalls = append(make([]scriptCall, 0, len(t.ToolCalls)), t.ToolCalls...)
	}
	if t.Alternatives != nil {
		c.Alternatives = make([]scriptTurn, len(t.Alternatives))
		for i := range t.Alternatives {
			c.Alternatives[i] = t.Alternatives[i].clone()
		}
	}
	return c
}

// moveLines adds by to the lines of the turn's calls, parsed apart from
// the lines before it.
func (t *scriptTurn) moveLines(by int) {
	for i := range t.ToolCalls {
		t.ToolCalls[i].line += by
	}
	for i := range t.Alternatives {
		t.Alternatives[i].moveLines(by)
	}
}
