//go:build unix

package host

import (
	"context"
	"fmt"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// BenchmarkAgentsPostgres is BenchmarkAgents on a PostgreSQL store, a
// server of its own on a unix socket that the benchmark starts (see
// internal/pgtest): what a round costs in round trips to the server.
//
//	go test ./host -run '^$' -bench AgentsPostgres -benchtime 2000x
func BenchmarkAgentsPostgres(b *testing.B) {
	srv := pgtest.Start(b)
	for _, agents := range []int{1, 8, 64} {
		b.Run(fmt.Sprint(agents), func(b *testing.B) {
			store, err := pgstore.Open(context.Background(), srv.NewDatabase(b))
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			benchAgents(b, agents, store, false)
		})
	}
}
