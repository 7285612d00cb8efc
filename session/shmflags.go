package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/tritontop/tritontop/triton"
)

// checkSharedMemory refuses --shared-memory system where it cannot work,
// before anything is dialed.
func (p *PerfAnalyzerConfig) checkSharedMemory(f *Config, notes io.Writer) error {
	if p.SharedMemory != "system" {
		if f.Given["output-shared-memory-size"] {
			fmt.Fprintln(notes, "note: --output-shared-memory-size is used only with --shared-memory system")
		}
		return nil
	}
	switch {
	case f.several():
		return errors.New("--shared-memory system runs one model: give one -m")
	case len(f.servers()) > 1:
		return errors.New("--shared-memory system needs one server on this host: give one -u")
	case p.OutputSharedMemorySize <= 0:
		return fmt.Errorf("--output-shared-memory-size %d: the value must be > 0", p.OutputSharedMemorySize)
	}
	if !localServer(f.URL) {
		return fmt.Errorf("--shared-memory system needs the server on this host (-u localhost:PORT): the server reads the regions from this host's /dev/shm, and %s is not this host", f.URL)
	}
	return nil
}

// localServer reports whether the server address names this host: a
// loopback name or address, or an address of one of its interfaces.
func localServer(addr string) bool {
	host := addr
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		host = u.Host
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "" || strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		ips, err := net.LookupIP(host)
		if err != nil || len(ips) == 0 {
			return false
		}
		ip = ips[0]
	}
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// placeSharedMemory puts the target's requests in system shared memory
// with --shared-memory system: inputs written once into registered
// regions, outputs into regions of --output-shared-memory-size bytes.
// t.close unregisters and unmaps them.
func placeSharedMemory(ctx context.Context, f *Config, t *target) error {
	if f.PerfAnalyzer.SharedMemory != "system" {
		return nil
	}
	c, ok := t.client.(triton.SharedMemoryClient)
	if !ok {
		return errors.New("--shared-memory system: this client cannot register shared memory")
	}
	var outputs []string
	for _, o := range t.metadata.GetOutputs() {
		outputs = append(outputs, o.GetName())
	}
	set, err := triton.PlaceInSharedMemory(ctx, c, t.requests, outputs, f.PerfAnalyzer.OutputSharedMemorySize, triton.NewShmPrefix())
	if err != nil {
		var reg *triton.ShmRegisterError
		if errors.As(err, &reg) {
			return UsageError{Err: err}
		}
		return fmt.Errorf("--shared-memory system: %w", err)
	}
	t.shm = set
	return nil
}

// closeSharedMemory unregisters and unmaps the target's regions.
func (t *target) closeSharedMemory() {
	if t.shm == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = t.shm.Close(ctx)
	t.shm = nil
}
