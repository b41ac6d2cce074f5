package ledger_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/budget"
	"github.com/reinhq/rein/ledger"
)

// BenchmarkModelCall is what the ledger adds to each model call: one
// reservation and one settle, each a durable bbolt commit. The baseline,
// in the same run, is one fsync'd append of an audit-record-sized line to
// a file: the unit of durable write rein already pays for.
//
//	go test ./ledger -run XXX -bench ModelCall -benchtime 200x
func BenchmarkModelCall(b *testing.B) {
	b.Run("baseline=fsync-append", func(b *testing.B) {
		f, err := os.Create(filepath.Join(b.TempDir(), "log"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		line := []byte(fmt.Sprintf(`{"type":"model_call","step":1,"usage":{"input":1200,"output":80},"hash":"%064d"}`+"\n", 0))
		for b.Loop() {
			if _, err := f.Write(line); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reserve+settle", func(b *testing.B) {
		l, err := ledger.Open(filepath.Join(b.TempDir(), "ledger.db"), ledger.Options{Caps: ledger.Caps{DayCostUSD: 1e9}})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		for b.Loop() {
			ticket, err := l.Reserve(b.Context(), ledger.Request{Charge: budget.Charge{Session: "s", Tokens: 1200, CostUSD: 0.004}, Tenant: "t"})
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Settle(b.Context(), ticket, 1280, 0.0048); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reserve+settle/8-sessions-parallel", func(b *testing.B) {
		l, err := ledger.Open(filepath.Join(b.TempDir(), "ledger.db"), ledger.Options{Caps: ledger.Caps{DayCostUSD: 1e9}})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		var n atomic.Int64
		b.SetParallelism(4) // 4 × GOMAXPROCS(2) = 8 sessions
		b.RunParallel(func(pb *testing.PB) {
			s := fmt.Sprint("s", n.Add(1))
			for pb.Next() {
				ticket, err := l.Reserve(b.Context(), ledger.Request{Charge: budget.Charge{Session: s, Tokens: 1200}, Tenant: "t"})
				if err != nil {
					b.Error(err)
					return
				}
				if err := l.Settle(b.Context(), ticket, 1280, 0); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
