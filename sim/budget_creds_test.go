package sim

import (
	"context"
	"net"
	"testing"
)

// TestBudgetCredsWithoutTLS: the budget's transport credentials over a
// plain connection say "insecure", clone and pass a client's handshake
// through unchanged; the budget flag's name prints its bytes.
func TestBudgetCredsWithoutTLS(t *testing.T) {
	c := &budgetCreds{}
	if p := c.Info().SecurityProtocol; p != "insecure" {
		t.Errorf("protocol %q", p)
	}
	if d, ok := c.Clone().(*budgetCreds); !ok || d == c {
		t.Errorf("Clone gave %#v", d)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	conn, info, err := c.ClientHandshake(context.Background(), "x", a)
	if err != nil || conn != a || info.AuthType() != "insecure" {
		t.Errorf("ClientHandshake: %v %v %v", conn, info, err)
	}
	if err := c.OverrideServerName("x"); err != nil {
		t.Error(err)
	}
	var f MemoryBudgetFlag
	f.Bytes = 1 << 20
	if s := f.Name("memory-budget").String(); s != "1048576" {
		t.Errorf("flag value %q", s)
	}
	if s := (&budgetFlagName{}).String(); s != "0" {
		t.Errorf("a nil flag's value %q", s)
	}
}
