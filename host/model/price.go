package model

import (
	"fmt"
	"math"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// Price is what a model costs, in US dollars per million tokens: the
// `price:` section of a model spec.
//
//	price: {input: 0.15, output: 0.60, cache_read: 0.075}
//
// A cache price of 0 means cache tokens cost what other input tokens cost.
type Price struct {
	Input      float64 `yaml:"input" json:"input"`
	Output     float64 `yaml:"output" json:"output"`
	CacheRead  float64 `yaml:"cache_read" json:"cache_read,omitempty"`
	CacheWrite float64 `yaml:"cache_write" json:"cache_write,omitempty"`
}

// Check says whether each of p's prices is a number of dollars, 0 or
// more; a nil price is.
//
// # Errors
//
// One naming the first field that is not: NaN, infinite or negative.
func (p *Price) Check() error {
	if p == nil {
		return nil
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"input", p.Input}, {"output", p.Output}, {"cache_read", p.CacheRead}, {"cache_write", p.CacheWrite}} {
		if !Dollars(f.v) {
			return fmt.Errorf("price.%s %v: want US dollars per million tokens, 0 or more", f.name, f.v)
		}
	}
	return nil
}

// Dollars says whether v is an amount of money: a finite number, 0 or more.
func Dollars(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }

// Cost is what u costs, in millionths of a US dollar: a price per million
// tokens is a price in micro-dollars per token. A nil price costs nothing.
func (p *Price) Cost(u conversation.Usage) int64 {
	if p == nil {
		return 0
	}
	read, write := p.CacheRead, p.CacheWrite
	if read == 0 {
		read = p.Input
	}
	if write == 0 {
		write = p.Input
	}
	plain := max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	c := float64(plain)*p.Input + float64(u.CacheReadTokens)*read +
		float64(u.CacheWriteTokens)*write + float64(u.OutputTokens)*p.Output
	return int64(math.Round(c))
}
